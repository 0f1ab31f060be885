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
        launches_ = 0;
        positions_ = 0;
        for (std::size_t i = 0; i < requests.size(); ++i) {
            const SearchRequest& r = requests[i];
            auto t0 = std::chrono::steady_clock::now();
            sample_into(r, patch_);
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
            const ImageView patch{patch_.data(), r.patch.width, r.patch.height,
                                  static_cast<std::size_t>(r.patch.width)};
            corr.run(patch, p, map, nullptr);
            ++launches_;
            if (r.gradient_weight > 0 && r.templ.gradient.data) {
                // The same window's gradient channel against the template's, blended in.
                grad_patch_.resize(patch_.size());
                gradient_patch(patch_.data(), r.patch, grad_patch_.data());
                grad_map_.resize(m.size());
                const MapView gmap{grad_map_.data(), o.width, o.height, static_cast<std::size_t>(o.width)};
                correlator({r.templ.key ^ kGradientKey, r.templ.version, r.templ.gradient, {}})
                    .run({grad_patch_.data(), r.patch.width, r.patch.height, static_cast<std::size_t>(r.patch.width)},
                         p, gmap, nullptr);
                ++launches_;
                blend_maps(m.data(), grad_map_.data(), m.size(), r.gradient_weight);
            }
            // Cues that only rank positions: the NCC at the chosen one stays the score that
            // the policy's gates read.
            const bool colour = r.colour.likelihood && frame_.has_chroma();
            const bool lookalikes = r.distractor_count > 0 && r.distractor_weight > 0;
            if (colour || lookalikes) ncc_map_.assign(m.begin(), m.end());
            if (colour) {
                colour_map_.resize(m.size());
                colour_score_map(frame_, r.colour, patch_.data(), r.patch, r.ox, r.oy, r.scale, r.templ.image.size(),
                                 colour_scratch_, colour_map_.data());
                const float w = r.colour.weight;
                for (std::size_t k = 0; k < m.size(); ++k) m[k] = (1 - w) * m[k] + w * (2 * colour_map_[k] - 1);
            }
            if (lookalikes) {
                rank_map_.assign(m.begin(), m.end());
                subtract_lookalikes(r, patch, p, m);
            }
            map_sizes_[pass][i] = o;
            positions_ += o.area();
            if (times) times->correlate_ms += ms_since(t0);

            t0 = std::chrono::steady_clock::now();
            RankedPeak& hit = hits[i];
            hit = penalised_peak(map, r.penalty, penalised_);
            if (colour || lookalikes) {
                // ... and ranks it against the other scales and templates: the colour score
                // of a smaller box is higher (less background), so it must not pick the scale.
                Peak& pk = hit.peak;
                const std::size_t at = static_cast<std::size_t>(pk.y) * o.width + pk.x;
                const float penalty = r.penalty > 0 ? m[at] - penalised_[at] : 0.0f;
                pk.score = ncc_map_[at];
                hit.ranked = pk.score - penalty;
                if (lookalikes) hit.lookalike = lookalike_max_[at];
            }
            // Look-alikes stand apart: a box overlapping the target by more than a fifth would
            // hold part of the target itself.
            const Size t = r.templ.image.size();
            find_rival(lookalikes ? rank_map_.data() : m.data(), o, hit,
                       {std::max(1, t.width * 4 / 5), std::max(1, t.height * 4 / 5)});
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

    void sample_into(const SearchRequest& r, std::vector<std::uint8_t>& out) {
        out.resize(static_cast<std::size_t>(r.patch.width) * r.patch.height);
        sample(r, out.data());
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
    std::vector<std::uint8_t> patch_, grad_patch_;
    // The look-alikes' NCC maps over the window: where the best of them beats the template's
    // own NCC (ncc_map_), the weight times the difference comes off the ranking map. Where
    // the target matches itself better, nothing changes, so the look-alikes cannot pull the
    // peak off a target they resemble.
    void subtract_lookalikes(const SearchRequest& r, const ImageView& patch, const NccProblem& p,
                             std::vector<float>& m) {
        const Size o = p.out_size();
        lookalike_max_.assign(m.size(), 0.0f);
        lookalike_map_.resize(m.size());
        const MapView lmap{lookalike_map_.data(), o.width, o.height, static_cast<std::size_t>(o.width)};
        for (int d = 0; d < r.distractor_count; ++d) {
            correlator(r.distractors[d]).run(patch, p, lmap, nullptr);
            ++launches_;
            for (std::size_t k = 0; k < m.size(); ++k)
                lookalike_max_[k] = std::max(lookalike_max_[k], lookalike_map_[k]);
        }
        for (std::size_t k = 0; k < m.size(); ++k)
            m[k] -= r.distractor_weight * std::max(0.0f, lookalike_max_[k] - ncc_map_[k]);
    }

    std::vector<float> grad_map_, colour_map_, ncc_map_, rank_map_, lookalike_map_, lookalike_max_;
    std::vector<double> colour_scratch_;
    FrameView frame_;
    std::unordered_map<std::uint64_t, Cached> correlators_;
    std::vector<std::vector<float>> maps_[2];  // per pass, per request (one when !keep_maps_)
    std::vector<Size> map_sizes_[2];
    std::vector<float> penalised_;
    std::vector<std::uint8_t> samples_;
    std::vector<std::size_t> sample_offsets_;
    bool keep_maps_ = true;
    int launches_ = 0;
    long positions_ = 0;
};

}  // namespace

void find_rival(const float* map, Size size, RankedPeak& hit, Size apart) {
    const int px = hit.peak.x, py = hit.peak.y;
    hit.rival = -2;
    hit.rival_of = map[static_cast<std::size_t>(py) * size.width + px];
    for (int y = 0; y < size.height; ++y) {
        const float* row = map + static_cast<std::size_t>(y) * size.width;
        for (int x = 0; x < size.width; ++x) {
            const float v = row[x];
            if (!(v > hit.rival)) continue;
            if (std::abs(x - px) < apart.width && std::abs(y - py) < apart.height) continue;
            // A local maximum, not the slope of the peak's own hill.
            bool top = true;
            for (int ny = std::max(0, y - 1); top && ny <= std::min(size.height - 1, y + 1); ++ny)
                for (int nx = std::max(0, x - 1); nx <= std::min(size.width - 1, x + 1); ++nx)
                    if (map[static_cast<std::size_t>(ny) * size.width + nx] > v) {
                        top = false;
                        break;
                    }
            if (!top) continue;
            hit.rival = v;
            hit.rival_x = static_cast<float>(x);
            hit.rival_y = static_cast<float>(y);
        }
    }
}

RankedPeak penalised_peak(const MapView& map, double weight, std::vector<float>& scratch) {
    RankedPeak out;
    if (weight <= 0) {
        out.peak = find_peak(map);
        out.ranked = out.peak.score;
        return out;
    }
    scratch.resize(static_cast<std::size_t>(map.width) * map.height);
    const double cx = (map.width - 1) / 2.0, cy = (map.height - 1) / 2.0;
    const double rx2 = std::max(1.0, cx * cx), ry2 = std::max(1.0, cy * cy);
    for (int y = 0; y < map.height; ++y) {
        const double dy2 = (y - cy) * (y - cy) / ry2;
        const float* src = map.row(y);
        float* dst = &scratch[static_cast<std::size_t>(y) * map.width];
        for (int x = 0; x < map.width; ++x)
            dst[x] = src[x] - static_cast<float>(weight * ((x - cx) * (x - cx) / rx2 + dy2));
    }
    const MapView pm{scratch.data(), map.width, map.height, static_cast<std::size_t>(map.width)};
    Peak& pk = out.peak;
    pk = find_peak(pm);
    out.ranked = pk.score;
    const float* row = map.row(pk.y);
    pk.score = row[pk.x];
    pk.sub_x = static_cast<float>(pk.x);
    pk.sub_y = static_cast<float>(pk.y);
    if (pk.x > 0 && pk.x + 1 < map.width) pk.sub_x += parabolic_offset(row[pk.x - 1], pk.score, row[pk.x + 1]);
    if (pk.y > 0 && pk.y + 1 < map.height)
        pk.sub_y += parabolic_offset(map.row(pk.y - 1)[pk.x], pk.score, map.row(pk.y + 1)[pk.x]);
    return out;
}

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
