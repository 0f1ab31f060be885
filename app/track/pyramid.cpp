#include "app/track/pyramid.h"

#include <algorithm>
#include <cmath>

namespace corrtrack {

LevelSample level_sample(double ox, double oy, double scale) {
    LevelSample s{0, ox, oy, scale};
    while (s.level + 1 < kMaxPyramidLevels && s.scale >= 2.0) {
        ++s.level;
        s.ox *= 0.5;
        s.oy *= 0.5;
        s.scale *= 0.5;
    }
    return s;
}

Size pyramid_level_size(Size frame, int level) {
    Size s = frame;
    for (int k = 0; k < level; ++k) s = {(s.width + 1) / 2, (s.height + 1) / 2};
    return s;
}

void halve_image(ImageView src, std::uint8_t* dst, std::size_t dst_pitch, Rect region) {
    const Size out = pyramid_level_size(src.size(), 1);
    if (region.width <= 0 || region.height <= 0) region = {0, 0, out.width, out.height};
    // Columns whose 2x2 block lies inside the source take the plain loop (vectorised); an odd
    // width's last column repeats its source column.
    const int pairs = src.width / 2;
    const int end = region.x + region.width, plain_end = std::min(end, pairs);
    for (int j = region.y; j < region.y + region.height; ++j) {
        const std::uint8_t* __restrict r0 = src.row(2 * j);
        const std::uint8_t* __restrict r1 = src.row(2 * j + 1 < src.height ? 2 * j + 1 : 2 * j);
        std::uint8_t* __restrict d = dst + static_cast<std::size_t>(j) * dst_pitch;
        for (int i = region.x; i < plain_end; ++i)
            d[i] = static_cast<std::uint8_t>((r0[2 * i] + r0[2 * i + 1] + r1[2 * i] + r1[2 * i + 1] + 2) >> 2);
        for (int i = std::max(region.x, pairs); i < end; ++i) {
            const int x = src.width - 1;
            d[i] = static_cast<std::uint8_t>((2 * r0[x] + 2 * r1[x] + 2) >> 2);
        }
    }
}

Rect level_region(const LevelSample& s, Size patch, Size level) {
    const int x0 = std::max(0, static_cast<int>(std::floor(s.ox)) - 1);
    const int y0 = std::max(0, static_cast<int>(std::floor(s.oy)) - 1);
    const int x1 = std::min(level.width, static_cast<int>(std::ceil(s.ox + patch.width * s.scale)) + 2);
    const int y1 = std::min(level.height, static_cast<int>(std::ceil(s.oy + patch.height * s.scale)) + 2);
    // A patch wholly outside gives an empty rectangle; HostPyramid::level clamps it to the
    // border pixels that replication reads.
    return {x0, y0, x1 - x0, y1 - y0};
}

Rect clip_to_level(Rect need, Size size) {
    const int x0 = std::clamp(need.x, 0, size.width - 1), y0 = std::clamp(need.y, 0, size.height - 1);
    const int x1 = std::clamp(need.x + need.width, x0 + 1, size.width);
    const int y1 = std::clamp(need.y + need.height, y0 + 1, size.height);
    return {x0, y0, x1 - x0, y1 - y0};
}

Rect region_to_build(Rect valid, Rect need) {
    if (valid.width <= 0) return need;
    const int x1 = need.x + need.width, y1 = need.y + need.height;
    const int valid_x1 = valid.x + valid.width, valid_y1 = valid.y + valid.height;
    if (need.x >= valid.x && need.y >= valid.y && x1 <= valid_x1 && y1 <= valid_y1) return {};
    const int x0 = std::min(need.x, valid.x), y0 = std::min(need.y, valid.y);
    return {x0, y0, std::max(x1, valid_x1) - x0, std::max(y1, valid_y1) - y0};
}

void HostPyramid::reset(ImageView frame) {
    base_ = frame;
    for (Rect& r : built_) r = {};
}

ImageView HostPyramid::view(int k) const {
    if (k == 0) return base_;
    const Size s = pyramid_level_size(base_.size(), k);
    return {storage_[k].data(), s.width, s.height, static_cast<std::size_t>(s.width), MemorySpace::kHost};
}

ImageView HostPyramid::level(int k, Rect need) {
    k = std::clamp(k, 0, kMaxPyramidLevels - 1);
    if (k == 0) return base_;
    const Size size = pyramid_level_size(base_.size(), k);
    // Grow the valid region to cover the clipped need (as one rectangle).
    Rect& have = built_[k];
    const Rect grow = region_to_build(have, clip_to_level(need, size));
    if (grow.width <= 0) return view(k);
    const ImageView src = level(k - 1, {2 * grow.x, 2 * grow.y, 2 * grow.width, 2 * grow.height});
    std::vector<std::uint8_t>& buf = storage_[k];
    buf.resize(static_cast<std::size_t>(size.width) * size.height);  // keeps capacity
    halve_image(src, buf.data(), static_cast<std::size_t>(size.width), grow);
    have = grow;
    return view(k);
}

}  // namespace corrtrack
