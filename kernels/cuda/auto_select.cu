// auto: the first time a bucket of similar problem shapes comes (see ShapeKey), times every
// available CUDA kernel that supports it (for a batch: cuda_dp4a, cuda_dp4a_ilp, cuda_fft and,
// on sm_80+, cuda_mma_fused; cuda_fft only for templates of 96x96 and more) with CUDA events
// and remembers the fastest for the whole process; later calls in that bucket go straight to it.
// The round runs in the background (auto_timing.h): the call that meets a new bucket runs the
// rule-based choice (the one small problems get) and queues the round on a worker thread with
// its own stream, which switches the bucket to the winner when it is done; the caller's stream
// is never synchronized. CORRTRACK_AUTO_TIMING=sync times on the caller's stream instead.
// Winners are kept on disk per GPU, driver and build (auto_cache.h): a second run starts warm.
// The choices are bounded: at most kMaxShapes buckets are remembered (least recently used
// forgotten), so a tracker whose windows drift through many sizes over hours neither grows
// the cache without end nor pays a timing round on every new size forever.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "corrtrack/start_trace.h"
#include "cuda/auto_cache.h"
#include "cuda/auto_hopeless.h"
#include "cuda/auto_timing.h"
#include "cuda/common.cuh"
#include "cuda/cuda_kernels.h"

namespace corrtrack {
namespace {

constexpr std::size_t kMaxShapes = 64;  // remembered winners (and entries kept on disk)
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
// cuFFT's time does not grow with the template, the direct kernels' does: at 1080p on the
// H200 cuda_fft takes 0.19 ms at every template size, cuda_mma_fused 0.066 ms at 64x64 and
// 0.155 ms at 128x128 (bench/results). Under this template area it never wins, and timing it
// costs a cuFFT plan for the shape, 44-153 ms whose creation stalled the tracking stream for
// as long (bench/results/h100_2026-12-05e: a tracker's lost targets re-detect over whole
// frames of ever new sizes as their scales change), so it is not timed.
constexpr const char* kFftKernel = "cuda_fft";
constexpr long long kFftMinTemplateArea = 96 * 96;

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

ShapeKey key_of(const NccProblem& p) {
    int device = 0;
    cudaGetDevice(&device);
    const Size o = p.out_size();
    const AutoCacheEntry b =
        auto_cache_bucket(p.templ.width, p.templ.height, static_cast<double>(o.width) * o.height * p.templates,
                          p.templates, p.templates > 1 && p.template_roi_step == 0);
    return {device, b.templ_w, b.templ_h, b.positions, b.templates, b.shared_roi};
}

// A key's bucket less the device, as the cache on disk and the hopeless record keep it.
AutoCacheEntry bucket_of(const ShapeKey& k) {
    return {k.templ_w, k.templ_h, k.positions, k.templates, k.shared_roi, {}, {}};
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

// The candidates a round times for this problem (kFftMinTemplateArea).
std::vector<std::string> timed_names(const NccProblem& p) {
    std::vector<std::string> names;
    for (const KernelEntry* e : candidates())
        if (std::string_view(e->name) != kFftKernel || p.templ.area() >= kFftMinTemplateArea) names.push_back(e->name);
    return names;
}

#ifndef CORRTRACK_KERNELS_REVISION
#define CORRTRACK_KERNELS_REVISION "unknown"
#endif

// Warnings about the cache go to stderr once per process: a damaged file must not print on
// every lookup of a long run.
void warn_once(const std::string& message) {
    static std::once_flag once;
    std::call_once(once, [&] { std::fprintf(stderr, "corrtrack: warning: %s\n", message.c_str()); });
}

// What a choice on disk is valid for: this GPU (name, UUID), its driver, this runtime and
// this build (the library's git revision and the kernels it has).
AutoCacheIdentity identity_of(int device) {
    AutoCacheIdentity id;
    cudaDeviceProp prop{};
    CORRTRACK_CUDA(cudaGetDeviceProperties(&prop, device));
    id.gpu_name = prop.name;
    char hex[3];
    for (int b = 0; b < 16; ++b) {
        std::snprintf(hex, sizeof hex, "%02x", static_cast<unsigned char>(prop.uuid.bytes[b]));
        id.gpu_id += hex;
    }
    id.gpu_id += "/pci " + std::to_string(prop.pciDomainID) + ":" + std::to_string(prop.pciBusID) + ":" +
                 std::to_string(prop.pciDeviceID);
    id.compute_capability = prop.major * 10 + prop.minor;
    CORRTRACK_CUDA(cudaDriverGetVersion(&id.driver_version));
    CORRTRACK_CUDA(cudaRuntimeGetVersion(&id.runtime_version));
    std::string kernels;
    for (const KernelEntry* e : candidates()) kernels += std::string(e->name) + ",";
    char kernel_hash[24];
    std::snprintf(kernel_hash, sizeof kernel_hash, "%016zx", std::hash<std::string>()(kernels));
    id.build_id = std::string(CORRTRACK_KERNELS_REVISION) + ":" + kernel_hash;
    return id;
}

// auto's winners on disk (auto_cache.h): read into the winner cache on a device's first
// lookup, each newly timed winner written through.
class DiskChoices {
public:
    void load_once(int device) {
        std::lock_guard<std::mutex> lock(mutex_);
        Device& d = devices_[device];
        if (d.loaded) return;
        d.loaded = true;
        if (!settings_.enabled) return;
        StartTraceScope trace("auto cache load");
        try {
            d.id = identity_of(device);
        } catch (const std::exception& ex) {
            warn_once(std::string("auto's timing cache is not used: ") + ex.what());
            return;
        }
        d.path = auto_cache_path(settings_.dir, d.id);
        std::string warning;
        std::size_t used = 0;
        for (const AutoCacheEntry& e : load_auto_cache(d.path, d.id, &warning)) {
            const KernelEntry* k = find_kernel(e.kernel);
            if (!k || !is_candidate(*k) || !k->available()) continue;  // a name this build lacks: not trusted
            winner_cache().store({device, e.templ_w, e.templ_h, e.positions, e.templates, e.shared_roi}, e.kernel);
            ++used;
        }
        if (!warning.empty()) warn_once(warning);
        trace.set_detail(d.path + ": " + std::to_string(used) + " winners" + (warning.empty() ? "" : " (ignored)"));
    }
    void store(const ShapeKey& k, const std::string& winner, const AutoTimingResult& r) {
        std::lock_guard<std::mutex> lock(mutex_);
        const Device& d = devices_[k.device];
        if (!settings_.enabled || d.path.empty()) return;
        AutoCacheEntry e = bucket_of(k);
        e.kernel = winner;
        for (const auto& [ms, name] : r.times) e.times_ms.emplace_back(name, ms);
        std::string warning;
        if (!store_auto_cache(d.path, d.id, {e}, kMaxShapes, &warning)) warn_once(warning);
    }

private:
    struct Device {
        bool loaded = false;
        AutoCacheIdentity id;
        std::string path;  // empty: not used
    };
    std::mutex mutex_;
    std::map<int, Device> devices_;
    const AutoCacheSettings settings_ = auto_cache_settings_from_env();
};

DiskChoices& disk_choices() {
    static DiskChoices choices;
    return choices;
}

// The winner known for this bucket (from this process or the disk), "" when none.
std::string known_winner(const ShapeKey& k) {
    disk_choices().load_once(k.device);
    return winner_cache().find(k);
}

// Buckets being timed in the background, with the rule-based kernel they run meanwhile.
class PendingRounds {
public:
    std::string provisional(const ShapeKey& k) const {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto it = pending_.find(k);
        return it == pending_.end() ? std::string() : it->second;
    }
    void add(const ShapeKey& k, const std::string& name) {
        std::lock_guard<std::mutex> lock(mutex_);
        pending_[k] = name;
    }
    void remove(const ShapeKey& k) {
        std::lock_guard<std::mutex> lock(mutex_);
        pending_.erase(k);
    }

private:
    mutable std::mutex mutex_;
    std::map<ShapeKey, std::string> pending_;
};

PendingRounds& pending_rounds() {
    static PendingRounds rounds;
    return rounds;
}

// The kernels each template size's background rounds no longer time (auto_hopeless.h), for
// every Auto in the process. CORRTRACK_AUTO_PRUNE=0 times every candidate in every round (A/B).
HopelessRecord& hopeless() {
    static HopelessRecord record;
    return record;
}
bool prune_from_env() {
    const char* v = std::getenv("CORRTRACK_AUTO_PRUNE");
    return !(v && std::string(v) == "0");
}

// CORRTRACK_AUTO_TIMING=sync: rounds on the caller's stream, as before (deterministic: tests,
// the kernel bench); anything else: in the background.
bool sync_timing_from_env() {
    const char* v = std::getenv("CORRTRACK_AUTO_TIMING");
    return v && std::string(v) == "sync";
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
            name = known_winner(key);
            // A bucket's winner may refuse this exact shape (a size limit inside the bucket).
            if (name.empty() || !instance(name).corr->supports(p, nullptr)) {
                name = small_problem_kernel(p);
                if (!name.empty())
                    winner_cache().store(key, name);
                else if (sync_timing_ || (name = provisional_kernel(key, frame, p, out, stream)).empty())
                    name = time_candidates(frame, p, out, stream);
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
        std::string name = forced_.empty() ? known_winner(key_of(p)) : forced_;
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
        return known_winner(key_of(p));
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

    // kSmallBatchKernel for a small batch, else kSmallKernel, for a small problem it
    // supports; empty when the problem is worth timing.
    // With any_size, the same rule for a problem of any size (the provisional choice while a
    // round runs in the background).
    std::string small_problem_kernel(const NccProblem& p, bool any_size = false) {
        const Size o = p.out_size();
        const double work = static_cast<double>(o.width) * o.height * p.templ.width * p.templ.height * p.templates;
        if (work >= kSmallWork && !any_size) return {};
        const bool batch = p.templates >= kSmallBatchTemplates;
        const bool single_tensor =
            p.templates == 1 && (p.templ.area() > kSingleTensorArea || work >= kSingleTensorWork);
        std::vector<const char*> order;  // the first that runs here and supports it
        // A problem worth timing runs the one-pass tensor-core kernel until its round is done:
        // it won every background round recorded in bench/results (416 rounds of 1 to 256
        // templates on the H100 and H200; cuda_wgmma 8 times, the rest cuda_mma_fused), where
        // the rule below chose cuda_dp4a_ilp (2 to 15 templates), 4-6x slower, for the round's
        // 10-60 ms: the frames meanwhile were the paced runs' late ones.
        if (any_size && work >= kSmallWork) order.push_back(kSingleTensorKernel);
        if (batch) order.push_back(kSmallBatchKernel);
        if (single_tensor) order.push_back(kSingleTensorKernel);
        order.push_back(kSmallKernel);
        for (const char* name : order) {
            const KernelEntry* e = find_kernel(name);
            if (!e || !e->available() || !instance(name).corr->supports(p, nullptr)) continue;
            if (!any_size)
                last_timings_ = std::string("untimed: ") + name + (batch ? " (a small batch)" : " (a small problem)");
            return name;
        }
        return {};
    }

    // While this bucket is timed in the background: the rule-based kernel, the round queued
    // on the first call (its own copy of the frame and template; the caller's stream is not
    // waited on). "" where no rule-based kernel supports it or the round cannot be queued: the
    // caller then times synchronously.
    std::string provisional_kernel(const ShapeKey& key, ImageView frame, const NccProblem& p, MapView out,
                                   Stream stream) {
        const std::string pending = pending_rounds().provisional(key);
        if (!pending.empty() && instance(pending).corr->supports(p, nullptr)) return pending;
        const std::string name = small_problem_kernel(p, true);
        if (!pending.empty() || name.empty()) return name;  // one round a bucket
        static const bool prune = prune_from_env();
        const std::vector<std::string> all = timed_names(p);
        const std::vector<std::string> names = prune ? hopeless().timed(bucket_of(key), all) : all;
        const std::string rule = name;
        auto done = [key, rule](const AutoTimingResult& r) {
            hopeless().note(bucket_of(key), r.times);
            const std::string winner = r.times.empty() ? rule : r.times.front().second;
            winner_cache().store(key, winner);
            pending_rounds().remove(key);
            if (!r.times.empty()) disk_choices().store(key, winner, r);
            start_trace("auto background winner", r.times.empty() ? 0.0 : r.times.front().first,
                        winner + " (was " + rule + "): " + r.text());
        };
        pending_rounds().add(key, rule);
        {
            StartTraceScope trace("auto round queued", rule + " until it is done");
            if (!queue_background_timing(names, frame, p, out, templ_, {templ_w_, templ_h_}, stream, done)) {
                pending_rounds().remove(key);
                return {};
            }
        }
        last_timings_ = "provisional: " + rule + " (timed in the background)";
        return name;
    }

    // Times every candidate at this shape on the caller's stream (auto_timing.h) and records
    // the winner. Each run writes `out`; the caller's run of the winner comes last, so the map
    // it returns is the winner's.
    std::string time_candidates(ImageView frame, const NccProblem& p, MapView out, Stream stream) {
        StartTraceScope trace("auto timing (on the stream)");
        const std::vector<std::string> names = timed_names(p);
        auto prepare = [&](const std::string& name) -> Correlator* {
            Instance& inst = instance(name);
            if (!inst.corr->supports(p, nullptr)) return nullptr;
            sync_template(inst, stream);
            return inst.corr.get();
        };
        const AutoTimingResult r = time_candidates_on(names, prepare, frame, p, out, stream);
        if (r.times.empty())
            throw std::runtime_error("auto: no CUDA kernel could run this problem" +
                                     (r.failures.empty() ? std::string() : " (" + r.failures + ")"));
        const std::string winner = r.times.front().second;
        const ShapeKey key = key_of(p);
        winner_cache().store(key, winner);
        disk_choices().store(key, winner, r);
        last_timings_ = r.text();
        trace.set_detail(last_timings_);

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
    const bool sync_timing_ = sync_timing_from_env();
};

}  // namespace

std::unique_ptr<Correlator> make_auto() { return std::make_unique<Auto>(); }

}  // namespace corrtrack
