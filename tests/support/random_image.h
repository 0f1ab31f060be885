// Deterministic random images for kernel tests and benches.
// Thread rules: plain values.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "corrtrack/image.h"

namespace corrtrack::test {

struct OwnedImage {
    int width = 0, height = 0;
    std::vector<std::uint8_t> pixels;
    ImageView view() const {
        return {pixels.data(), width, height, static_cast<std::size_t>(width), MemorySpace::kHost};
    }
    std::uint8_t& at(int x, int y) { return pixels[static_cast<std::size_t>(y) * width + x]; }
};

// Uniform over the full 0..255 range, so values above 127 (a signed-DP4A trap) are common.
inline OwnedImage random_image(int width, int height, std::uint32_t seed) {
    OwnedImage img{width, height, std::vector<std::uint8_t>(static_cast<std::size_t>(width) * height)};
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> dist(0, 255);
    for (auto& p : img.pixels) p = static_cast<std::uint8_t>(dist(rng));
    return img;
}

inline void fill_rect(OwnedImage& img, Rect r, std::uint8_t value) {
    for (int y = r.y; y < r.y + r.height; ++y)
        for (int x = r.x; x < r.x + r.width; ++x) img.at(x, y) = value;
}

}  // namespace corrtrack::test
