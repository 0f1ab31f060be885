#include "app/track/gradient.h"

#include <algorithm>
#include <cstdlib>

namespace corrtrack {

void gradient_patch(const std::uint8_t* in, Size size, std::uint8_t* out) {
    const int w = size.width, h = size.height;
    for (int y = 0; y < h; ++y) {
        const std::uint8_t* up = in + static_cast<std::size_t>(std::max(y - 1, 0)) * w;
        const std::uint8_t* row = in + static_cast<std::size_t>(y) * w;
        const std::uint8_t* down = in + static_cast<std::size_t>(std::min(y + 1, h - 1)) * w;
        std::uint8_t* dst = out + static_cast<std::size_t>(y) * w;
        for (int x = 0; x < w; ++x) {
            const int gx = std::abs(row[std::min(x + 1, w - 1)] - row[std::max(x - 1, 0)]);
            const int gy = std::abs(down[x] - up[x]);
            dst[x] = static_cast<std::uint8_t>((gx + gy + 1) >> 1);
        }
    }
}

void blend_maps(float* grey, const float* gradient, std::size_t count, float weight) {
    for (std::size_t i = 0; i < count; ++i) grey[i] += weight * (gradient[i] - grey[i]);
}

}  // namespace corrtrack
