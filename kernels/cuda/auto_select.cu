// auto: the first time a bucket of similar problem shapes comes (see ShapeKey), times every
// available CUDA kernel that supports it (for a batch: cuda_dp4a, cuda_dp4a_ilp, cuda_fft and,
// on sm_80+, cuda_mma_fused)
// with CUDA events and remembers the fastest for the whole process; later calls in that
// bucket go straight to it. The timing round is the one place that synchronizes.
// The choices are bounded: at most kMaxShapes buckets are remembered (least recently used
// forgotten), so a tracker whose windows drift through many sizes over hours neither grows
// the cache without end nor pays a timing round on every new size forever.
#include <algorithm>
#include <cmath>
#include <mutex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cuda/common.cuh"
#include "cuda/cuda_kernels.h"

namespace corrtrack {
namespace {

constexpr float kQuickMs = 2.0f;  // runs faster than this are timed kMoreRunsQuick more times
constexpr float kSlowMs = 20.0f;  // up to this, kMoreRunsSlow; beyond, the one timed run stands
constexpr int kMoreRunsQuick = 4;
constexpr int kMoreRunsSlow = 2;
constexpr float kHopeless = 4.0f;       // a first run this many times the best so far is not repeated
constexpr std::size_t kMaxShapes = 64;  // remembered winners
// Problems under this many multiply-adds (a 1080p frame with a 32x32 template) go untimed to
// kSmallKernel, or to a tensor-core kernel where it was measured faster (below). A timing round (every kernel's first launch, FFT plans, workspaces)
// costs about 0.35 s on the H200, a stall a tracker must not take when it loses its target;
// under this size the best kernel saves under 0.1 ms a call over cuda_dp4a_ilp, so the round
// would take thousands of calls to pay back. A tracker's windows (a 32 px template over about
// 50x50 positions x 3 scales: 8M) and its full-frame re-detection up to 1080p stay untimed;
// larger problems (1080p with 64x64 templates: 7.7G) are timed once per bucket.
constexpr double kSmallWork = 2147483648.0;  // 2^31
constexpr const char* kSmallKernel = "cuda_dp4a_ilp";
// Small batches (a multi-target tracker's windows) go to the batched tensor-core kernel where
// the GPU has one: 1.0-8x faster than the DP4A kernels on batches of 48-768 windows of 16x16
// to 64x64 on the H200, and 1190 vs 853 fps at 256 targets
// (bench/results/h200_2026-12-02c/run10_summary.txt).
constexpr const char* kSmallBatchKernel = "cuda_mma_fused_w4";
// ... from this many templates. The tracker stacks one template per target (its scales share
// an atlas row), so this is 16 targets: 48 windows of 16 targets ran 1.6x faster on the tensor
// cores (6549 vs 4206 fps, runs 8 and 11). A single target is no batch (one row); below 16
// targets it was not measured.
constexpr int kSmallBatchTemplates = 16;
// One template (a full frame, a re-detection, a single target's scale windows in their atlas
// row) goes to the one-pass tensor-core kernel on sm_80+ unless it is a small template on a
// small frame: from 32x32 and 48x24 up it beat cuda_dp4a_ilp on every size from 160x120 full
// frames and search windows to 1080p (64x64: 29 vs 59 us a window, 69 vs 477 us a 1080p
// frame); at 16x16 cuda_dp4a_ilp stays ahead on windows and up to 480x360 (12-13 vs 14-16 us),
// they tie at 640x480 (bench/results/h200_2026-12-04b/run6). A tracker sets a new template
// every frame, which this kernel repacks: its rate on one 40x40 target did not move (run9, in
// one call: 8597 / 7952 fps pinned to cuda_mma_fused, 8707 / 9283 to cuda_dp4a_ilp, within the
// runs' spread). Batches of 2 to 15 templates stay on cuda_dp4a_ilp (3 stacked 40x40 windows
// ran in 20 vs 29 us on the tensor cores, run7, but a tracker stacks one template per target).
constexpr const char* kSingleTensorKernel = "cuda_mma_fused";
constexpr long long kSingleTensorArea = 16 * 16;  // templates larger than this ...
constexpr double kSingleTensorWork = 67108864.0;  // ... or problems of 2^26 MACs and more

// Winners are remembered per bucket of similar shapes, not per exact shape: a tracker whose
// search windows change size with the target's scale would otherwise time every kernel again
// on almost every frame. A bucket is the template's sides rounded up to a ladder of sizes,
// the output positions and the template count to half octaves, and whether a batch shares
// one roi (step 0: the FFT then transforms it once) or searches an atlas.
struct ShapeKey {
    int device, templ_w, templ_h, positions, templates, shared_roi;
    bool operator<(const ShapeKey& o) const {
        return std::tie(device, templ_w, templ_h, positions, templates, shared_roi) <
               std::tie(o.device, o.templ_w, o.templ_h, o.positions, o.templates, o.shared_roi);
    }
};

int side_bucket(int v) {
    for (int b : {4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192})
        if (v <= b) return b;
    return 256;
}

int half_octave(double v) { return static_cast<int>(std::floor(2.0 * std::log2(std::max(1.0, v)))); }

ShapeKey key_of(const NccProblem& p) {
    int device = 0;
    cudaGetDevice(&device);
    const Size o = p.out_size();
    return {device,
            side_bucket(p.templ.width),
            side_bucket(p.templ.height),
            half_octave(static_cast<double>(o.width) * o.height * p.templates),
            half_octave(p.templates),
            p.templates > 1 && p.template_roi_step == 0};
}

// The winners of every Auto in the process: timed once per bucket, bounded in size.
class WinnerCache {
public:
    std::string find(const ShapeKey& k) {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto it = winners_.find(k);
        if (it == winners_.end()) return {};
        it->second.last_use = ++clock_;
        return it->second.name;
    }
    void store(const ShapeKey& k, const std::string& name) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (winners_.size() >= kMaxShapes && winners_.find(k) == winners_.end()) {
            auto oldest = winners_.begin();
            for (auto w = winners_.begin(); w != winners_.end(); ++w)
                if (w->second.last_use < oldest->second.last_use) oldest = w;
            winners_.erase(oldest);
        }
        winners_[k] = Winner{name, ++clock_};
    }
    bool uses(const std::string& name) const {
        std::lock_guard<std::mutex> lock(mutex_);
        for (const auto& [key, winner] : winners_)
            if (winner.name == name) return true;
        return false;
    }
    std::size_t size() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return winners_.size();
    }

private:
    struct Winner {
        std::string name;
        std::uint64_t last_use = 0;
    };
    mutable std::mutex mutex_;
    std::map<ShapeKey, Winner> winners_;
    std::uint64_t clock_ = 0;
};

WinnerCache& winner_cache() {
    static WinnerCache cache;
    return cache;
}

bool is_candidate(const KernelEntry& e) { return e.device == Device::kCuda && std::string_view(e.name) != "auto"; }

std::vector<const KernelEntry*> candidates() {
    std::vector<const KernelEntry*> list;
    for (const KernelEntry& e : kernel_registry())
        if (is_candidate(e) && e.available()) list.push_back(&e);
    return list;
}

class Auto final : public AutoSelect {
public:
    Auto() {
        if (const char* env = std::getenv("CORRTRACK_AUTO_KERNEL"); env && *env) {
            std::string why;
            if (!force_kernel(env, &why)) forced_error_ = "CORRTRACK_AUTO_KERNEL: " + why;
        }
        update_summary();
    }
    ~Auto() override {
        if (start_) cudaEventDestroy(start_);
        if (stop_) cudaEventDestroy(stop_);
    }

    const KernelInfo& info() const override { return info_; }

    bool supports(const NccProblem& p, std::string* why) const override {
        if (!forced_error_.empty()) {
            if (why) *why = forced_error_;
            return false;
        }
        if (!forced_.empty()) return instance(forced_).corr->supports(p, why);
        std::string first_reason;
        const auto list = candidates();
        for (const KernelEntry* e : list) {
            std::string reason;
            if (instance(e->name).corr->supports(p, &reason)) {
                if (why) why->clear();
                return true;
            }
            if (first_reason.empty()) first_reason = std::string(e->name) + ": " + reason;
        }
        if (why)
            *why = list.empty() ? "no CUDA kernel is available" : "no CUDA kernel supports it (" + first_reason + ")";
        return false;
    }

    void set_template(ImageView templ, Stream stream) override {
        keep_template(templ, stream);
        ++templ_generation_;
        // Each kernel gets it before its next run, on that run's stream (run() syncs): a
        // tracker changes its template every frame, and the shared winner cache may name
        // several kernels, of which a frame runs one.
    }

    void run(ImageView frame, const NccProblem& p, MapView out, Stream stream) override {
        if (!forced_error_.empty()) throw std::invalid_argument("auto: " + forced_error_);
        if (templ_generation_ == 0) throw std::invalid_argument("auto: no template was set");
        std::string name = forced_;
        if (!ready_name_.empty() && ready_problem_ == p) name = ready_name_;  // what capturable() prepared
        ready_name_.clear();
        if (name.empty()) {
            const ShapeKey key = key_of(p);
            name = winner_cache().find(key);
            // A bucket's winner may refuse this exact shape (a size limit inside the bucket).
            if (name.empty() || !instance(name).corr->supports(p, nullptr)) {
                name = small_problem_kernel(p);
                if (name.empty())
                    name = time_candidates(frame, p, out, stream);
                else
                    winner_cache().store(key, name);
            }
        }
        Instance& inst = instance(name);
        sync_template(inst, stream);
        inst.corr->run(frame, p, out, stream);
        if (name != last_) {
            last_ = name;
            update_summary();
        }
    }

    // Launches only when this shape's kernel is known (no timing round) and its own run is
    // capturable; that kernel gets the template here, before the capture.
    bool capturable(const NccProblem& p, Stream stream) override {
        ready_name_.clear();
        if (!forced_error_.empty() || templ_generation_ == 0) return false;
        std::string name = forced_.empty() ? winner_cache().find(key_of(p)) : forced_;
        if (name.empty() || !instance(name).corr->supports(p, nullptr)) return false;
        Instance& inst = instance(name);
        sync_template(inst, stream);
        if (!inst.corr->capturable(p, stream)) return false;
        ready_name_ = name;
        ready_problem_ = p;
        return true;
    }

    bool force_kernel(std::string_view name, std::string* why) override {
        std::string err;
        if (!name.empty()) {
            const KernelEntry* e = find_kernel(name);
            if (!e || !is_candidate(*e))
                err = "'" + std::string(name) + "' is not a CUDA kernel";
            else if (!e->available())
                err = "'" + std::string(name) + "' is not available on this machine";
        }
        if (why) *why = err;
        if (!err.empty()) return false;
        forced_ = std::string(name);
        forced_error_.clear();
        update_summary();
        return true;
    }

    std::string choice(const NccProblem& p) const override {
        if (!forced_.empty()) return forced_;
        return winner_cache().find(key_of(p));
    }

    std::size_t remembered_shapes() const override { return winner_cache().size(); }

    std::string last_timings() const override { return last_timings_; }

private:
    // The kernel capturable() prepared, for the run of ready_problem_ that follows it (a later
    // store to the shared winner cache must not switch it to a kernel without the template).
    std::string ready_name_;
    NccProblem ready_problem_;

    struct Instance {
        std::unique_ptr<Correlator> corr;
        std::uint64_t templ_generation = 0;
    };

    // Created on first use; supports() may create them too (cheap: a kernel sizes its
    // workspaces on its first run).
    Instance& instance(const std::string& name) const {
        auto it = instances_.find(name);
        if (it == instances_.end()) {
            std::string why;
            std::unique_ptr<Correlator> corr = make_correlator(name, &why);
            if (!corr) throw std::runtime_error("auto: " + why);
            it = instances_.emplace(name, Instance{std::move(corr), 0}).first;
        }
        return it->second;
    }

    bool in_use(const std::string& name) const { return name == forced_ || winner_cache().uses(name); }

    void sync_template(Instance& inst, Stream stream) {
        if (inst.templ_generation == templ_generation_) return;
        const ImageView view{templ_.data(), templ_w_, templ_h_, static_cast<std::size_t>(templ_w_), MemorySpace::kHost};
        inst.corr->set_template(view, stream);
        inst.templ_generation = templ_generation_;
    }

    void keep_template(ImageView templ, Stream stream) {
        templ_w_ = templ.width;
        templ_h_ = templ.height;
        const std::size_t w = static_cast<std::size_t>(templ.width);
        templ_.resize(w * templ.height);
        if (templ.space == MemorySpace::kHost) {
            for (int y = 0; y < templ.height; ++y) std::memcpy(templ_.data() + y * w, templ.row(y), w);
        } else {
            // A template cut from a device frame (rare): copy after whatever wrote it, and wait.
            CORRTRACK_CUDA(cudaMemcpy2DAsync(templ_.data(), w, templ.data, templ.pitch, w, templ.height,
                                             cudaMemcpyDeviceToHost, as_cuda(stream)));
            CORRTRACK_CUDA(cudaStreamSynchronize(as_cuda(stream)));
        }
    }

    float elapsed_ms(cudaStream_t s, Correlator& corr, ImageView frame, const NccProblem& p, MapView out,
                     Stream stream) {
        CORRTRACK_CUDA(cudaEventRecord(start_, s));
        corr.run(frame, p, out, stream);
        CORRTRACK_CUDA(cudaEventRecord(stop_, s));
        CORRTRACK_CUDA(cudaEventSynchronize(stop_));
        float ms = 0;
        CORRTRACK_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
        return ms;
    }

    // kSmallBatchKernel for a small batch, else kSmallKernel, for a small problem it
    // supports; empty when the problem is worth timing.
    std::string small_problem_kernel(const NccProblem& p) {
        const Size o = p.out_size();
        const double work = static_cast<double>(o.width) * o.height * p.templ.width * p.templ.height * p.templates;
        if (work >= kSmallWork) return {};
        const bool batch = p.templates >= kSmallBatchTemplates;
        const bool single_tensor =
            p.templates == 1 && (p.templ.area() > kSingleTensorArea || work >= kSingleTensorWork);
        std::vector<const char*> order;  // the first that runs here and supports it
        if (batch) order.push_back(kSmallBatchKernel);
        if (single_tensor) order.push_back(kSingleTensorKernel);
        order.push_back(kSmallKernel);
        for (const char* name : order) {
            const KernelEntry* e = find_kernel(name);
            if (!e || !e->available() || !instance(name).corr->supports(p, nullptr)) continue;
            last_timings_ = std::string("untimed: ") + name + (batch ? " (a small batch)" : " (a small problem)");
            return name;
        }
        return {};
    }

    // Times every candidate at this shape (one warm-up run, then the best of up to five timed
    // runs) and records the winner. Each run writes `out`; the caller's run of the winner
    // comes last, so the map it returns is the winner's.
    std::string time_candidates(ImageView frame, const NccProblem& p, MapView out, Stream stream) {
        const cudaStream_t s = as_cuda(stream);
        if (!start_) CORRTRACK_CUDA(cudaEventCreate(&start_));
        if (!stop_) CORRTRACK_CUDA(cudaEventCreate(&stop_));
        std::vector<std::pair<float, std::string>> times;
        std::string failures;
        float fastest = 0;
        for (const KernelEntry* e : candidates()) {
            Instance& inst = instance(e->name);
            if (!inst.corr->supports(p, nullptr)) continue;
            float best = 0;
            try {
                sync_template(inst, stream);
                inst.corr->run(frame, p, out, stream);  // warm-up: workspaces, plans, caches
                best = elapsed_ms(s, *inst.corr, frame, p, out, stream);
                int more = best < kQuickMs ? kMoreRunsQuick : (best < kSlowMs ? kMoreRunsSlow : 0);
                if (!times.empty() && best > kHopeless * fastest) more = 0;
                for (int r = 0; r < more; ++r) best = std::min(best, elapsed_ms(s, *inst.corr, frame, p, out, stream));
            } catch (const std::exception& ex) {
                failures += std::string(failures.empty() ? "" : "; ") + e->name + " failed: " + ex.what();
                continue;
            }
            times.emplace_back(best, e->name);
            fastest = times.size() == 1 ? best : std::min(fastest, best);
        }
        if (times.empty())
            throw std::runtime_error("auto: no CUDA kernel could run this problem" +
                                     (failures.empty() ? std::string() : " (" + failures + ")"));
        std::stable_sort(times.begin(), times.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        const std::string winner = times.front().second;
        winner_cache().store(key_of(p), winner);

        last_timings_.clear();
        for (const auto& [ms, name] : times) {
            char buf[96];
            std::snprintf(buf, sizeof buf, "%s%s %.3f ms", last_timings_.empty() ? "" : ", ", name.c_str(), ms);
            last_timings_ += buf;
        }
        if (!failures.empty()) last_timings_ += "; " + failures;

        // Losers give their workspaces back (the stream is idle after the last event wait).
        for (auto it = instances_.begin(); it != instances_.end();)
            it = in_use(it->first) ? std::next(it) : instances_.erase(it);
        return winner;
    }

    void update_summary() {
        if (!forced_.empty())
            info_.summary = "auto -> " + forced_ + " (forced)";
        else if (!last_.empty())
            info_.summary = "auto -> " + last_;
        else
            info_.summary = registry_info("auto").summary;
    }

    KernelInfo info_ = registry_info("auto");
    mutable std::map<std::string, Instance> instances_;
    std::string forced_, forced_error_, last_, last_timings_;
    // The last template (host copy, packed rows), re-set on every kernel that has not seen it.
    // Only the kernels upload it: auto itself never reads it on the device, so keeping it
    // costs no copy to the device, no event and no wait per template change (the tracker
    // changes its template on most frames).
    std::vector<std::uint8_t> templ_;
    int templ_w_ = 0, templ_h_ = 0;
    std::uint64_t templ_generation_ = 0;
    cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

}  // namespace

std::unique_ptr<Correlator> make_auto() { return std::make_unique<Auto>(); }

}  // namespace corrtrack
