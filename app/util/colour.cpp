#include "app/util/colour.h"

#include <algorithm>

namespace corrtrack {

Rgb turbo(float t) {
    // Polynomial fit of Google's Turbo colormap (Mikhailov, 2019), accurate to a few levels.
    t = std::clamp(t, 0.0f, 1.0f);
    const float r =
        0.13572138f +
        t * (4.61539260f + t * (-42.66032258f + t * (132.13108234f + t * (-152.94239396f + t * 59.28637943f))));
    const float g =
        0.09140261f + t * (2.19418839f + t * (4.84296658f + t * (-14.18503333f + t * (4.27729857f + t * 2.82956604f))));
    const float b =
        0.10667330f +
        t * (12.64194608f + t * (-60.58204836f + t * (110.36276771f + t * (-89.90310912f + t * 27.34824973f))));
    auto q = [](float v) { return static_cast<std::uint8_t>(std::clamp(v, 0.0f, 1.0f) * 255.0f + 0.5f); };
    return {q(r), q(g), q(b)};
}

Yuv to_yuv(Rgb c, YuvFormat f) {
    const double kr = f.matrix == YuvMatrix::kBt709 ? 0.2126 : f.matrix == YuvMatrix::kBt2020 ? 0.2627 : 0.299;
    const double kb = f.matrix == YuvMatrix::kBt709 ? 0.0722 : f.matrix == YuvMatrix::kBt2020 ? 0.0593 : 0.114;
    const double y = kr * c.r + (1 - kr - kb) * c.g + kb * c.b;                     // 0..255
    const double cb = (c.b - y) / (2 * (1 - kb)), cr = (c.r - y) / (2 * (1 - kr));  // -127.5..127.5
    auto q = [](double v) { return static_cast<std::uint8_t>(std::clamp(v, 0.0, 255.0) + 0.5); };
    if (f.full_range) return {q(y), q(128 + cb), q(128 + cr)};
    return {q(16 + y * 219 / 255), q(128 + cb * 224 / 255), q(128 + cr * 224 / 255)};
}

}  // namespace corrtrack
