#include "render/ab_compare.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>

#include "app/util/stats.h"
#include "corrtrack/peak.h"

namespace corrtrack {
namespace {

constexpr int kMaxAbTemplate = 128;

double median_of(const std::deque<double>& d) { return median(std::vector<double>(d.begin(), d.end())); }

Rect round_clip(const BoxF& b, Size frame) {
    const int x0 = std::max(0, static_cast<int>(std::lround(b.x)));
    const int y0 = std::max(0, static_cast<int>(std::lround(b.y)));
    const int x1 = std::min(frame.width, static_cast<int>(std::lround(b.x + b.width)));
    const int y1 = std::min(frame.height, static_cast<int>(std::lround(b.y + b.height)));
    return {x0, y0, std::max(0, x1 - x0), std::max(0, y1 - y0)};
}

void push_bounded(std::deque<double>& d, double v) {
    d.push_back(v);
    if (d.size() > AbCompare::kWindow) d.pop_front();
}

// Copies a map into packed rows of *out (grown only).
void keep_map(const MapView& m, std::vector<float>* out) {
    const std::size_t n = static_cast<std::size_t>(m.width) * m.height;
    if (out->size() < n) out->resize(n);
    for (int y = 0; y < m.height; ++y)
        std::copy_n(m.row(y), m.width, out->data() + static_cast<std::size_t>(y) * m.width);
}

}  // namespace

MapView downscale_max(const MapView& map, int factor, std::vector<float>* out) {
    factor = std::max(1, factor);
    const int w = (map.width + factor - 1) / factor, h = (map.height + factor - 1) / factor;
    if (out->size() < static_cast<std::size_t>(w) * h) out->resize(static_cast<std::size_t>(w) * h);
    for (int by = 0; by < h; ++by) {
        float* dst = out->data() + static_cast<std::size_t>(by) * w;
        std::fill_n(dst, w, -INFINITY);
        for (int y = by * factor; y < std::min(map.height, (by + 1) * factor); ++y) {
            const float* src = map.row(y);
            for (int x = 0; x < map.width; ++x) dst[x / factor] = std::max(dst[x / factor], src[x]);
        }
    }
    return {out->data(), w, h, static_cast<std::size_t>(w)};
}

bool AbCompare::set_kernels(const std::string& a, const std::string& b, std::string* error) {
    for (int i = 0; i < 2; ++i) {
        const std::string name = resolve_kernel_name(i == 0 ? a : b);
        if (!matcher_[i].set_kernel(name, error)) return false;
        ms_[i].clear();
    }
    ratio_.clear();
    templ_ = {};
    return true;
}

ImageView AbCompare::cut_template(ImageView frame, Rect t) {
    templ_rect_ = t;
    templ_.width = t.width;
    templ_.height = t.height;
    templ_.pixels.resize(static_cast<std::size_t>(t.width) * t.height);
    for (int y = 0; y < t.height; ++y) std::copy_n(frame.row(t.y + y) + t.x, t.width, &templ_.pixels[y * t.width]);
    return {templ_.pixels.data(), t.width, t.height, static_cast<std::size_t>(t.width), MemorySpace::kHost};
}

void AbCompare::compare_maps() {
    const std::size_t n = static_cast<std::size_t>(map_size_.width) * map_size_.height;
    max_diff_ = 0;
    for (std::size_t k = 0; k < n; ++k) max_diff_ = std::max(max_diff_, std::fabs(maps_[0][k] - maps_[1][k]));
    for (int i = 0; i < 2; ++i) peak_[i] = find_peak(map(i));
}

bool AbCompare::run(ImageView frame, const BoxF& search, const BoxF& box, std::string* error) {
    roi_ = round_clip(search, frame.size());
    Rect t = round_clip(box, frame.size());
    if (t.width > kMaxAbTemplate) t = {t.x + (t.width - kMaxAbTemplate) / 2, t.y, kMaxAbTemplate, t.height};
    if (t.height > kMaxAbTemplate) t = {t.x, t.y + (t.height - kMaxAbTemplate) / 2, t.width, kMaxAbTemplate};
    if (t.width < 1 || t.height < 1 || roi_.width < t.width || roi_.height < t.height) {
        *error = "the search window is smaller than the template (target at the frame edge?)";
        return false;
    }
    if (full_frame_) {  // the other scope's samples would mix into the medians
        for (auto& d : ms_) d.clear();
        ratio_.clear();
    }
    full_frame_ = false;
    view_factor_ = 1;
    const ImageView templ = cut_template(frame, t);
    const ImageView patch = frame.sub(roi_);

    double ms[2];
    for (int i = 0; i < 2; ++i) {
        try {
            matcher_[i].set_template(templ);
            const auto t0 = std::chrono::steady_clock::now();
            const MapView m = matcher_[i].match(patch, nullptr);  // synchronous: waits for the map
            ms[i] = ms_since(t0);
            map_size_ = m.size();
            keep_map(m, &maps_[i]);
        } catch (const std::exception& e) {
            *error = std::string(i == 0 ? "A: " : "B: ") + e.what();
            return false;
        }
    }
    compare_maps();
    for (int i = 0; i < 2; ++i) push_bounded(ms_[i], ms[i]);
    push_bounded(ratio_, ms[0] / std::max(ms[1], 1e-6));
    return true;
}

bool AbCompare::run_full_frame(ImageView frame, float cx, float cy, int side, std::string* error) {
    const int tw = std::min(side, frame.width), th = std::min(side, frame.height);
    const int tx = std::clamp(static_cast<int>(std::lround(cx - tw / 2.0f)), 0, frame.width - tw);
    const int ty = std::clamp(static_cast<int>(std::lround(cy - th / 2.0f)), 0, frame.height - th);
    const double macs = static_cast<double>(frame.width - tw + 1) * (frame.height - th + 1) * tw * th;
    for (int i = 0; i < 2; ++i)
        if (matcher_[i].kernel_name() == "cpu_ref" && macs > kMaxCpuRefMacs) {
            char buf[256];
            std::snprintf(buf, sizeof buf,
                          "%s: cpu_ref is brute force and %dx%d over a %dx%d frame is %.2g multiply-adds, over the "
                          "GUI's %.2g for it: pick a smaller template or frame, or cpu_fast",
                          i == 0 ? "A" : "B", tw, th, frame.width, frame.height, macs, kMaxCpuRefMacs);
            *error = buf;
            return false;
        }
    if (!full_frame_ || templ_rect_.width != tw || templ_rect_.height != th) {  // new shape: new medians
        for (auto& d : ms_) d.clear();
        ratio_.clear();
    }
    full_frame_ = true;
    roi_ = {0, 0, frame.width, frame.height};
    const ImageView templ = cut_template(frame, {tx, ty, tw, th});
    for (int i = 0; i < 2; ++i) {
        try {
            matcher_[i].set_template(templ);
            matcher_[i].match(frame, nullptr);  // warm-up: first-shape allocations, caches, clocks
            double spent = 0;
            MapView m;
            for (int run = 0; run < kFullFrameRuns && (run == 0 || spent < kFullFrameBudgetMs); ++run) {
                StageTimes times;  // correlate_ms: the kernel alone (CUDA events, or steady_clock)
                m = matcher_[i].match(frame, &times);
                spent += times.correlate_ms;
                push_bounded(ms_[i], times.correlate_ms);
            }
            map_size_ = m.size();
            keep_map(m, &maps_[i]);
        } catch (const std::exception& e) {
            *error = std::string(i == 0 ? "A: " : "B: ") + e.what();
            return false;
        }
    }
    compare_maps();
    view_factor_ = std::max(1, (std::max(map_size_.width, map_size_.height) + kViewSide - 1) / kViewSide);
    if (view_factor_ > 1)
        for (int i = 0; i < 2; ++i) downscale_max(map(i), view_factor_, &views_[i]);
    return true;
}

MapView AbCompare::map(int which) const {
    return {const_cast<float*>(maps_[which].data()), map_size_.width, map_size_.height,
            static_cast<std::size_t>(map_size_.width)};
}

MapView AbCompare::view_map(int which) const {
    if (view_factor_ == 1) return map(which);
    const int w = (map_size_.width + view_factor_ - 1) / view_factor_;
    const int h = (map_size_.height + view_factor_ - 1) / view_factor_;
    return {const_cast<float*>(views_[which].data()), w, h, static_cast<std::size_t>(w)};
}

double AbCompare::median_ms(int which) const { return median_of(ms_[which]); }

double AbCompare::median_ratio() const {
    if (!full_frame_) return median_of(ratio_);
    return median_of(ms_[0]) / std::max(median_of(ms_[1]), 1e-6);
}

int AbCompare::samples() const {
    if (!full_frame_) return static_cast<int>(ratio_.size());
    return static_cast<int>(std::min(ms_[0].size(), ms_[1].size()));
}

}  // namespace corrtrack
