#include "render/yuv_rgb.h"

#include <cmath>

namespace corrtrack {

const char* to_string(YuvMatrix m) {
    switch (m) {
    case YuvMatrix::kBt601: return "BT.601";
    case YuvMatrix::kBt709: return "BT.709";
    case YuvMatrix::kBt2020: return "BT.2020";
    }
    return "?";
}

YuvToRgb yuv_to_rgb_coefficients(YuvMatrix matrix, bool full_range) {
    double kr = 0.299, kb = 0.114;
    if (matrix == YuvMatrix::kBt709) kr = 0.2126, kb = 0.0722;
    if (matrix == YuvMatrix::kBt2020) kr = 0.2627, kb = 0.0593;
    const double kg = 1.0 - kr - kb;
    const double sy = full_range ? 1.0 : 255.0 / 219.0, sc = full_range ? 1.0 : 255.0 / 224.0;
    auto fixed = [](double v) { return static_cast<int>(std::lround(v * 65536.0)); };
    YuvToRgb k;
    k.y_offset = full_range ? 0 : 16;
    k.cy = fixed(sy);
    k.crv = fixed(2.0 * (1.0 - kr) * sc);
    k.cgu = fixed(2.0 * (1.0 - kb) * kb / kg * sc);
    k.cgv = fixed(2.0 * (1.0 - kr) * kr / kg * sc);
    k.cbu = fixed(2.0 * (1.0 - kb) * sc);
    return k;
}

}  // namespace corrtrack
