// The CPU search backend: each request is sampled from the host pyramid, correlated by the
// template's own CPU correlator (cached per template key, so FFT spectra survive between
// frames) and ranked on the host.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <unordered_map>

#include "app/track/backends.h"
#include "app/track/gradient.h"
#include "app/track/pyramid.h"
#include "app/track/resample.h"
#include "app/track/search_cues.h"
#include "app/util/recent_cache.h"
#include "app/util/stats.h"

namespace corrtrack {
namespace {

class CpuSearch final : public SearchBackend {
public:
    explicit CpuSearch(std::string kernel, std::unique_ptr<Correlator> probe)
        : kernel_(std::move(kernel)), summary_(probe->info().summary) {}

    bool on_gpu() const override { return false; }
    Stream stream() const override { return nullptr; }
    std::string kernel_summary() const override { return summary_; }
    int launches() const override { return launches_; }
    long positions() const override { return positions_; }
    void set_keep_maps(bool host, bool) override { keep_maps_ = host; }

    double begin_frame(const FrameView& fv) override {
        const ImageView frame = fv.luma;
        if (frame.space != MemorySpace::kHost)
            throw std::runtime_error("kernel " + kernel_ + " runs on the CPU and needs frames in host memory");
        pyramid_.reset(frame);
        frame_size_ = frame.size();
        frame_ = fv;
        return 0;
    }

    void search(int pass, const std::vector<SearchRequest>& requests, std::vector<RankedPeak>& hits,
                StageTimes* times) override {
        std::vector<std::vector<float>>& maps = maps_[pass];
        hits.resize(requests.size());
        if (maps.size() < requests.size()) maps.resize(requests.size());
        map_sizes_[pass].resize(requests.size());
        windows_.clear();  // windows of an earlier pass or frame are stale
        launches_ = 0;
        positions_ = 0;
        for (std::size_t i = 0; i < requests.size(); ++i) {
            const SearchRequest& r = requests[i];
            auto t0 = std::chrono::steady_clock::now();
            const std::vector<std::uint8_t>& pixels = window(r);
            if (times) times->upload_ms += ms_since(t0);

            t0 = std::chrono::steady_clock::now();
            Correlator& corr = correlator(r.templ);
            const NccProblem p = NccProblem::full_frame(r.patch, r.templ.image.size());
            std::string why;
            if (!corr.supports(p, &why))
                throw std::runtime_error("kernel " + kernel_ + " cannot run this search: " + why);
            const Size o = p.out_size();
            std::vector<float>& m = maps[keep_maps_ ? i : 0];
            m.resize(static_cast<std::size_t>(o.width) * o.height);  // keeps capacity
            const MapView map{m.data(), o.width, o.height, static_cast<std::size_t>(o.width)};
            const ImageView patch{pixels.data(), r.patch.width, r.patch.height,
                                  static_cast<std::size_t>(r.patch.width)};
            corr.run(patch, p, map, nullptr);
            ++launches_;
            if (r.gradient_weight > 0 && r.templ.gradient.data) {
                // The same window's gradient channel against the template's, blended in.
                grad_patch_.resize(pixels.size());
                gradient_patch(pixels.data(), r.patch, grad_patch_.data());
                grad_map_.resize(m.size());
                const MapView gmap{grad_map_.data(), o.width, o.height, static_cast<std::size_t>(o.width)};
                correlator({r.templ.key ^ kGradientKey, r.templ.version, r.templ.gradient, {}})
                    .run({grad_patch_.data(), r.patch.width, r.patch.height, static_cast<std::size_t>(r.patch.width)},
                         p, gmap, nullptr);
                ++launches_;
                blend_maps(m.data(), grad_map_.data(), m.size(), r.gradient_weight);
            }
            // The look-alikes' NCC maps over the same window, for the shared cue code.
            const float* lookalike[SearchRequest::kMaxDistractors] = {};
            if (lookalikes_apply(r))
                for (int d = 0; d < r.distractor_count; ++d) {
                    std::vector<float>& lm = lookalike_maps_[d];
                    lm.resize(m.size());
                    correlator(r.distractors[d])
                        .run(patch, p, {lm.data(), o.width, o.height, static_cast<std::size_t>(o.width)}, nullptr);
                    ++launches_;
                    lookalike[d] = lm.data();
                }
            map_sizes_[pass][i] = o;
            positions_ += o.area();
            if (times) times->correlate_ms += ms_since(t0);

            t0 = std::chrono::steady_clock::now();
            hits[i] = rank_request(r, frame_, pixels.data(), m.data(), o, lookalike, cues_);
            if (times) times->peak_ms += ms_since(t0);
        }
    }

    MapView map(int pass, std::size_t i) const override {
        if (!keep_maps_ || i >= map_sizes_[pass].size()) return {};
        const Size s = map_sizes_[pass][i];
        return {const_cast<float*>(maps_[pass][i].data()), s.width, s.height, static_cast<std::size_t>(s.width)};
    }
    MapView device_map(int, std::size_t) const override { return {}; }

    void sample(const std::vector<SearchRequest>& patches) override {
        std::size_t total = 0;
        sample_offsets_.clear();
        for (const SearchRequest& r : patches) {
            sample_offsets_.push_back(total);
            total += static_cast<std::size_t>(r.patch.width) * r.patch.height;
        }
        samples_.resize(total);
        for (std::size_t i = 0; i < patches.size(); ++i) {
            const SearchRequest& r = patches[i];
            sample(r, samples_.data() + sample_offsets_[i]);
        }
    }
    const std::uint8_t* sampled(std::size_t i) override { return samples_.data() + sample_offsets_.at(i); }

    void forget(std::uint64_t key) override {
        correlators_.erase(key);
        correlators_.erase(key ^ kGradientKey);
    }

private:
    struct Cached {
        std::uint64_t version = 0;
        std::unique_ptr<Correlator> corr;
    };

    // r's sampled window (packed r.patch). The last few windows of the pass are kept: a
    // target's templates search the same windows (its working and first templates at each
    // scale), which are then sampled once.
    const std::vector<std::uint8_t>& window(const SearchRequest& r) {
        return windows_.get({r.ox, r.oy, r.scale, r.patch}, [&](std::vector<std::uint8_t>& pixels) {
            pixels.resize(static_cast<std::size_t>(r.patch.width) * r.patch.height);
            sample(r, pixels.data());
        });
    }
    void sample(const SearchRequest& r, std::uint8_t* out) {
        const LevelSample ls = level_sample(r.ox, r.oy, r.scale);
        const Size level_size = pyramid_level_size(frame_size_, ls.level);
        const ImageView level = pyramid_.level(ls.level, level_region(ls, r.patch, level_size));
        sample_patch(level, ls.ox, ls.oy, ls.scale, r.patch, out, static_cast<std::size_t>(r.patch.width), scratch_);
    }

    Correlator& correlator(const TemplateRef& t) {
        Cached& c = correlators_[t.key];
        if (!c.corr) {
            std::string why;
            c.corr = make_correlator(kernel_, &why);
            if (!c.corr) throw std::runtime_error(why);
            c.version = t.version + 1;  // forces the first set_template
        }
        if (c.version != t.version) {
            c.corr->set_template(t.image, nullptr);
            c.version = t.version;
        }
        return *c.corr;
    }

    std::string kernel_, summary_;
    HostPyramid pyramid_;
    Size frame_size_;
    ResampleScratch scratch_;
    struct WindowKey {  // where a window lies in the frame
        double ox = 0, oy = 0, scale = 0;
        Size patch;
        bool operator==(const WindowKey& k) const {
            return ox == k.ox && oy == k.oy && scale == k.scale && patch == k.patch;
        }
    };
    RecentCache<WindowKey, std::vector<std::uint8_t>, 4> windows_;  // a target's scales, and one more
    std::vector<std::uint8_t> grad_patch_;
    std::vector<float> grad_map_, lookalike_maps_[SearchRequest::kMaxDistractors];
    CueScratch cues_;
    FrameView frame_;
    std::unordered_map<std::uint64_t, Cached> correlators_;
    std::vector<std::vector<float>> maps_[2];  // per pass, per request (one when !keep_maps_)
    std::vector<Size> map_sizes_[2];
    std::vector<std::uint8_t> samples_;
    std::vector<std::size_t> sample_offsets_;
    bool keep_maps_ = true;
    int launches_ = 0;
    long positions_ = 0;
};

}  // namespace

std::unique_ptr<SearchBackend> make_cpu_search(const std::string& kernel, std::string* error) {
    std::string why;
    auto probe = make_correlator(kernel, &why);
    if (!probe) {
        if (error) *error = why;
        return nullptr;
    }
    return std::make_unique<CpuSearch>(kernel, std::move(probe));
}

}  // namespace corrtrack
