#include "app/track/pyramid.h"

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

void halve_image(ImageView src, std::uint8_t* dst, std::size_t dst_pitch) {
    const Size out = pyramid_level_size(src.size(), 1);
    for (int j = 0; j < out.height; ++j) {
        const std::uint8_t* r0 = src.row(2 * j);
        const std::uint8_t* r1 = src.row(2 * j + 1 < src.height ? 2 * j + 1 : 2 * j);
        std::uint8_t* d = dst + static_cast<std::size_t>(j) * dst_pitch;
        const int pairs = src.width / 2;
        for (int i = 0; i < pairs; ++i)
            d[i] = static_cast<std::uint8_t>((r0[2 * i] + r0[2 * i + 1] + r1[2 * i] + r1[2 * i + 1] + 2) >> 2);
        if (pairs < out.width) {  // odd width: the last column repeats
            const int x = src.width - 1;
            d[pairs] = static_cast<std::uint8_t>((2 * r0[x] + 2 * r1[x] + 2) >> 2);
        }
    }
}

void HostPyramid::reset(ImageView frame) {
    base_ = frame;
    built_ = 0;
}

ImageView HostPyramid::level(int k) {
    if (k <= 0) return base_;
    if (k >= kMaxPyramidLevels) k = kMaxPyramidLevels - 1;
    while (built_ < k) {
        const ImageView src = built_ == 0 ? base_ : level(built_);
        const Size out = pyramid_level_size(base_.size(), built_ + 1);
        std::vector<std::uint8_t>& buf = storage_[built_ + 1];
        buf.resize(static_cast<std::size_t>(out.width) * out.height);  // keeps capacity
        halve_image(src, buf.data(), static_cast<std::size_t>(out.width));
        ++built_;
    }
    const Size s = pyramid_level_size(base_.size(), k);
    return {storage_[k].data(), s.width, s.height, static_cast<std::size_t>(s.width), MemorySpace::kHost};
}

}  // namespace corrtrack
