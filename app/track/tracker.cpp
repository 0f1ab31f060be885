// Tracker: fixed-size template at a working scale; each frame samples a search patch per
// candidate scale around the last centre, correlates, refines the peak, and keeps the best.
#include "app/track/tracker.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "app/track/matcher.h"
#include "app/track/resample.h"
#include "corrtrack/ncc_math.h"

namespace corrtrack {

const char* to_string(UpdatePolicy p) {
    switch (p) {
        case UpdatePolicy::kNone: return "none";
        case UpdatePolicy::kKeyframe: return "keyframe";
        case UpdatePolicy::kBlend: return "blend";
    }
    return "?";
}

bool parse_update_policy(const std::string& s, UpdatePolicy* out) {
    for (UpdatePolicy p : {UpdatePolicy::kNone, UpdatePolicy::kKeyframe, UpdatePolicy::kBlend})
        if (s == to_string(p)) {
            *out = p;
            return true;
        }
    return false;
}

std::string resolve_kernel_name(const std::string& name) {
    if (name != "auto") return name;
    if (const KernelEntry* e = find_kernel("auto"); e && e->available()) return "auto";
    return "cpu_fast";
}

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Packed 8-bit image owned by the tracker.
struct Buffer {
    Size size;
    std::vector<std::uint8_t> pixels;
    void resize(Size s) {
        size = s;
        pixels.resize(static_cast<std::size_t>(s.width) * s.height);
    }
    ImageView view() const {
        return {pixels.data(), size.width, size.height, static_cast<std::size_t>(size.width), MemorySpace::kHost};
    }
};

struct Candidate {
    double cx = 0, cy = 0, scale = 1, factor = 1;
    float score = -2, ranked = -2, psr = 0;
    BoxF region;  // where the map's origin (0, 0) window lies, for display
};

}  // namespace

struct Tracker::Impl {
    Matcher matcher;
    Size templ_size;                 // working template, pixels
    std::vector<float> templ_float;  // blended appearance
    std::vector<float> templ_initial;  // the first frame's appearance
    float anchor = 0;                  // TrackerOptions::anchor
    Buffer templ;                    // quantised template handed to the kernel
    double scale = 1;                // frame pixels per template pixel
    double cx = 0, cy = 0;
    bool lost = false;
    long frames = 0;
    Buffer patch;
    ResampleScratch scratch;
    std::vector<float> best_map;
    Size best_map_size;
    BoxF best_region;

    void upload_template() {
        for (std::size_t i = 0; i < templ_float.size(); ++i) {
            const float v = anchor * templ_initial[i] + (1.0f - anchor) * templ_float[i];
            templ.pixels[i] = static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
        }
        matcher.set_template(templ.view());
    }

    // Samples the current box's appearance at the working scale into `patch`.
    void sample_box(ImageView frame, double box_cx, double box_cy) {
        patch.resize(templ_size);
        const double ox = box_cx - templ_size.width * scale / 2, oy = box_cy - templ_size.height * scale / 2;
        sample_at(frame, ox, oy, scale);
    }

    void sample_at(ImageView frame, double ox, double oy, double s) {
        if (s == 1.0) {  // integer copies keep scale-1 tracking free of interpolation blur
            ox = std::round(ox);
            oy = std::round(oy);
        }
        last_origin_x = ox;
        last_origin_y = oy;
        sample_patch(frame, ox, oy, s, patch.size, patch.pixels.data(), patch.size.width, scratch);
    }
    double last_origin_x = 0, last_origin_y = 0;

    // The map minus a quadratic motion penalty (zero at the centre, `weight` at the edge of
    // the search window), so a distractor must beat the target by more than its distance
    // costs. The integer peak and PSR come from the penalised map; the score and sub-pixel
    // offset from the raw one.
    struct RankedPeak : Peak {
        float ranked = 0;
    };
    RankedPeak penalised_peak(const MapView& map, double weight) {
        penalised.resize(static_cast<std::size_t>(map.width) * map.height);
        const double cx = (map.width - 1) / 2.0, cy = (map.height - 1) / 2.0;
        const double rx2 = std::max(1.0, cx * cx), ry2 = std::max(1.0, cy * cy);
        for (int y = 0; y < map.height; ++y) {
            const double dy2 = (y - cy) * (y - cy) / ry2;
            const float* src = map.row(y);
            float* dst = &penalised[static_cast<std::size_t>(y) * map.width];
            for (int x = 0; x < map.width; ++x)
                dst[x] = src[x] - static_cast<float>(weight * ((x - cx) * (x - cx) / rx2 + dy2));
        }
        const MapView pm{penalised.data(), map.width, map.height, static_cast<std::size_t>(map.width)};
        RankedPeak pk;
        static_cast<Peak&>(pk) = find_peak(pm);
        pk.ranked = pk.score;
        const float* row = map.row(pk.y);
        pk.score = row[pk.x];
        pk.sub_x = static_cast<float>(pk.x);
        pk.sub_y = static_cast<float>(pk.y);
        if (pk.x > 0 && pk.x + 1 < map.width) pk.sub_x += parabolic_offset(row[pk.x - 1], pk.score, row[pk.x + 1]);
        if (pk.y > 0 && pk.y + 1 < map.height)
            pk.sub_y += parabolic_offset(map.row(pk.y - 1)[pk.x], pk.score, map.row(pk.y + 1)[pk.x]);
        return pk;
    }
    std::vector<float> penalised;

    void keep_map(const MapView& m, const BoxF& region) {
        best_map_size = m.size();
        best_map.resize(static_cast<std::size_t>(m.width) * m.height);
        for (int y = 0; y < m.height; ++y) std::copy(m.row(y), m.row(y) + m.width, &best_map[static_cast<std::size_t>(y) * m.width]);
        best_region = region;
    }
};

Tracker::Tracker(TrackerOptions options) : impl_(std::make_unique<Impl>()), options_(std::move(options)) {}
Tracker::~Tracker() = default;

const std::string& Tracker::kernel_name() const { return impl_->matcher.kernel_name(); }

bool Tracker::set_kernel(const std::string& name, std::string* error) {
    if (!impl_->matcher.set_kernel(resolve_kernel_name(name), error)) return false;
    options_.kernel = name;
    if (!impl_->templ.pixels.empty()) impl_->matcher.set_template(impl_->templ.view());
    return true;
}

MapView Tracker::last_map() const {
    return {const_cast<float*>(impl_->best_map.data()), impl_->best_map_size.width, impl_->best_map_size.height,
            static_cast<std::size_t>(impl_->best_map_size.width)};
}
BoxF Tracker::last_map_region() const { return impl_->best_region; }

bool Tracker::init(ImageView frame, const BoxF& box, std::string* error) {
    auto fail = [&](const std::string& msg) {
        if (error) *error = msg;
        return false;
    };
    char buf[160];
    std::snprintf(buf, sizeof buf, "box %.1f,%.1f,%.1f,%.1f", box.x, box.y, box.width, box.height);
    const std::string what = buf;
    if (!(box.width > 0 && box.height > 0)) return fail(what + " has zero or negative size");
    if (box.width < 4 || box.height < 4) return fail(what + " is smaller than 4x4 pixels: too little to match");
    if (box.x < 0 || box.y < 0 || box.x + box.width > frame.width + 0.5 || box.y + box.height > frame.height + 0.5) {
        if (box.width > frame.width || box.height > frame.height)
            return fail(what + " is larger than the " + std::to_string(frame.width) + "x" +
                        std::to_string(frame.height) + " frame");
        return fail(what + " lies outside the " + std::to_string(frame.width) + "x" +
                    std::to_string(frame.height) + " frame");
    }
    if (options_.scales < 1 || options_.scale_step < 1.0 || options_.search_factor < 1.0 ||
        options_.max_template_side < 4 || options_.max_template_side > kMaxTemplateSide)
        return fail("invalid tracker options (scales >= 1, scale step >= 1, search factor >= 1, "
                    "template side 4.." + std::to_string(kMaxTemplateSide) + ")");
    if (!impl_->matcher.set_kernel(resolve_kernel_name(options_.kernel), error)) return false;

    Impl& m = *impl_;
    const double longest = std::max(box.width, box.height);
    m.scale = std::max(1.0, longest / options_.max_template_side);
    m.templ_size = {std::max(4, static_cast<int>(std::lround(box.width / m.scale))),
                    std::max(4, static_cast<int>(std::lround(box.height / m.scale)))};
    m.cx = box.cx();
    m.cy = box.cy();
    m.lost = false;
    m.frames = 0;
    m.templ.resize(m.templ_size);
    m.sample_box(frame, m.cx, m.cy);
    m.templ.pixels = m.patch.pixels;
    m.templ_float.assign(m.patch.pixels.begin(), m.patch.pixels.end());
    m.templ_initial = m.templ_float;
    m.anchor = static_cast<float>(std::clamp(options_.anchor, 0.0, 1.0));

    double mean = 0, sq = 0;
    for (std::uint8_t v : m.templ.pixels) {
        mean += v;
        sq += static_cast<double>(v) * v;
    }
    mean /= m.templ.pixels.size();
    const double sd = std::sqrt(std::max(0.0, sq / m.templ.pixels.size() - mean * mean));
    if (sd < 1.0) {
        std::snprintf(buf, sizeof buf, " is flat (grey-level std %.2f): nothing to correlate", sd);
        return fail(what + buf);
    }
    m.matcher.set_template(m.templ.view());
    box_ = box;  // report the user's box exactly on the first frame
    return true;
}

TrackResult Tracker::update(ImageView frame) {
    Impl& m = *impl_;
    TrackResult r;
    ++m.frames;
    const Size ts = m.templ_size;
    const int margin_x = std::max(8, static_cast<int>(std::lround(ts.width * (options_.search_factor - 1) / 2)));
    const int margin_y = std::max(8, static_cast<int>(std::lround(ts.height * (options_.search_factor - 1) / 2)));

    Candidate best;
    // penalise: the search is around the last centre, so far peaks pay the motion penalty.
    auto consider = [&](const MapView& map, double ox, double oy, double s, double factor, const Size& patch_size,
                        bool penalise) {
        const auto t0 = std::chrono::steady_clock::now();
        Impl::RankedPeak pk;
        if (penalise && options_.motion_penalty > 0) {
            pk = m.penalised_peak(map, options_.motion_penalty);
        } else {
            static_cast<Peak&>(pk) = find_peak(map);
            pk.ranked = pk.score;
        }
        r.times.peak_ms += ms_since(t0);
        Candidate c;
        c.cx = ox + (pk.sub_x + ts.width / 2.0) * s;
        c.cy = oy + (pk.sub_y + ts.height / 2.0) * s;
        c.scale = s;
        c.factor = factor;
        c.score = pk.score;
        c.psr = pk.psr;
        c.ranked = factor == 1.0 ? pk.ranked : pk.ranked * static_cast<float>(options_.scale_penalty);
        c.region = {ox, oy, patch_size.width * s, patch_size.height * s};
        if (c.ranked > best.ranked) {
            best = c;
            m.keep_map(map, c.region);
        }
    };

    if (!m.lost) {
        const int half = options_.scales / 2;
        for (int k = -half; k <= half; ++k) {
            const double factor = std::pow(options_.scale_step, k);
            const double s = k == 0 ? m.scale : m.scale * factor;
            const Size patch_size{ts.width + 2 * margin_x, ts.height + 2 * margin_y};
            m.patch.resize(patch_size);
            const auto t0 = std::chrono::steady_clock::now();
            m.sample_at(frame, m.cx - patch_size.width * s / 2, m.cy - patch_size.height * s / 2, s);
            r.times.upload_ms += ms_since(t0);
            const MapView map = m.matcher.match(m.patch.view(), &r.times);
            consider(map, m.last_origin_x, m.last_origin_y, s, factor, patch_size, true);
        }
    }
    const bool tracking_ok = !m.lost && best.score >= options_.lost_score;
    if (!tracking_ok) {
        // Full-frame re-detection at the current scale.
        r.redetected = true;
        const Size patch_size{std::max(ts.width, static_cast<int>(frame.width / m.scale)),
                              std::max(ts.height, static_cast<int>(frame.height / m.scale))};
        m.patch.resize(patch_size);
        const auto t0 = std::chrono::steady_clock::now();
        m.sample_at(frame, 0, 0, m.scale);
        r.times.upload_ms += ms_since(t0);
        Candidate prev = best;
        best = Candidate{};
        consider(m.matcher.match(m.patch.view(), &r.times), m.last_origin_x, m.last_origin_y, m.scale, 1.0, patch_size,
                 false);
        if (best.score >= options_.recover_score) {
            m.lost = false;
        } else {
            m.lost = true;
            if (prev.score > best.score) best.score = prev.score;
        }
    }

    if (!m.lost) {
        m.cx = std::clamp(best.cx, 0.0, static_cast<double>(frame.width));
        m.cy = std::clamp(best.cy, 0.0, static_cast<double>(frame.height));
        // Follow scale changes halfway per frame: single-frame scale picks are noisy.
        m.scale *= 1.0 + options_.scale_rate * (best.scale / m.scale - 1.0);
        const bool sure = best.score >= options_.update_min_score;
        const bool keyframe = options_.update == UpdatePolicy::kKeyframe && m.frames % options_.keyframe_interval == 0;
        if (sure && (options_.update == UpdatePolicy::kBlend || keyframe)) {
            const auto t0 = std::chrono::steady_clock::now();
            m.patch.resize(ts);
            m.sample_box(frame, m.cx, m.cy);
            const float a = options_.update == UpdatePolicy::kBlend ? static_cast<float>(options_.blend_rate) : 1.0f;
            for (std::size_t i = 0; i < m.templ_float.size(); ++i)
                m.templ_float[i] += a * (m.patch.pixels[i] - m.templ_float[i]);
            m.upload_template();
            r.times.upload_ms += ms_since(t0);
        }
    }
    box_ = {m.cx - ts.width * m.scale / 2, m.cy - ts.height * m.scale / 2, ts.width * m.scale, ts.height * m.scale};
    r.box = box_;
    r.sub_cx = m.lost ? m.cx : best.cx;
    r.sub_cy = m.lost ? m.cy : best.cy;
    r.score = best.score;
    r.confidence = best.psr;
    r.lost = m.lost;
    return r;
}

}  // namespace corrtrack
