#include "render/ab_compare.h"

#include <algorithm>
#include <chrono>
#include <cmath>
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

}  // namespace

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

bool AbCompare::run(ImageView frame, const BoxF& search, const BoxF& box, std::string* error) {
    roi_ = round_clip(search, frame.size());
    Rect t = round_clip(box, frame.size());
    if (t.width > kMaxAbTemplate) t = {t.x + (t.width - kMaxAbTemplate) / 2, t.y, kMaxAbTemplate, t.height};
    if (t.height > kMaxAbTemplate) t = {t.x, t.y + (t.height - kMaxAbTemplate) / 2, t.width, kMaxAbTemplate};
    if (t.width < 1 || t.height < 1 || roi_.width < t.width || roi_.height < t.height) {
        *error = "the search window is smaller than the template (target at the frame edge?)";
        return false;
    }
    templ_.width = t.width;
    templ_.height = t.height;
    templ_.pixels.resize(static_cast<std::size_t>(t.width) * t.height);
    for (int y = 0; y < t.height; ++y) std::copy_n(frame.row(t.y + y) + t.x, t.width, &templ_.pixels[y * t.width]);
    const ImageView templ{templ_.pixels.data(), t.width, t.height, static_cast<std::size_t>(t.width),
                          MemorySpace::kHost};
    const ImageView patch = frame.sub(roi_);

    double ms[2];
    for (int i = 0; i < 2; ++i) {
        try {
            matcher_[i].set_template(templ);
            const auto t0 = std::chrono::steady_clock::now();
            const MapView m = matcher_[i].match(patch, nullptr);  // synchronous: waits for the map
            ms[i] = ms_since(t0);
            map_size_ = m.size();
            maps_[i].resize(static_cast<std::size_t>(m.width) * m.height);
            for (int y = 0; y < m.height; ++y)
                std::copy_n(m.row(y), m.width, &maps_[i][static_cast<std::size_t>(y) * m.width]);
        } catch (const std::exception& e) {
            *error = std::string(i == 0 ? "A: " : "B: ") + e.what();
            return false;
        }
    }
    max_diff_ = 0;
    for (std::size_t k = 0; k < maps_[0].size(); ++k)
        max_diff_ = std::max(max_diff_, std::fabs(maps_[0][k] - maps_[1][k]));
    for (int i = 0; i < 2; ++i) {
        peak_[i] = find_peak(map(i));
        ms_[i].push_back(ms[i]);
        if (ms_[i].size() > kWindow) ms_[i].pop_front();
    }
    ratio_.push_back(ms[0] / std::max(ms[1], 1e-6));
    if (ratio_.size() > kWindow) ratio_.pop_front();
    return true;
}

MapView AbCompare::map(int which) const {
    return {const_cast<float*>(maps_[which].data()), map_size_.width, map_size_.height,
            static_cast<std::size_t>(map_size_.width)};
}

double AbCompare::median_ms(int which) const { return median_of(ms_[which]); }
double AbCompare::median_ratio() const { return median_of(ratio_); }

}  // namespace corrtrack
