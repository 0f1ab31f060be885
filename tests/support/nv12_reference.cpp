#include "tests/support/nv12_reference.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

namespace corrtrack {

std::array<std::uint8_t, 4> reference_rgba(int y, int u, int v, const RefMatrix& m) {
    const double kg = 1.0 - m.kr - m.kb, sy = m.full ? 1.0 : 255.0 / 219.0, sc = m.full ? 1.0 : 255.0 / 224.0;
    auto q = [](double c) { return static_cast<long>(std::lround(c * 65536.0)); };
    const long yy = q(sy) * (y - (m.full ? 0 : 16));
    const long r = yy + q(2 * (1 - m.kr) * sc) * (v - 128);
    const long g = yy - q(2 * (1 - m.kb) * m.kb / kg * sc) * (u - 128) - q(2 * (1 - m.kr) * m.kr / kg * sc) * (v - 128);
    const long b = yy + q(2 * (1 - m.kb) * sc) * (u - 128);
    auto px = [](long c) { return static_cast<std::uint8_t>(std::clamp((c + 32768) >> 16, 0L, 255L)); };
    return {px(r), px(g), px(b), 255};
}

RefMatrix ref_matrix(YuvMatrix m, bool full) {
    switch (m) {
    case YuvMatrix::kBt709: return {0.2126, 0.0722, full};
    case YuvMatrix::kBt2020: return {0.2627, 0.0593, full};
    default: return {0.299, 0.114, full};
    }
}

Nv12Host random_nv12(int width, int height, unsigned seed) {
    Nv12Host h;
    h.width = width;
    h.height = height;
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(0, 255);
    h.y.resize(static_cast<std::size_t>(width) * height);
    h.uv.resize(static_cast<std::size_t>(h.cw()) * 2 * h.ch());
    for (auto& v : h.y) v = static_cast<std::uint8_t>(byte(rng));
    for (auto& v : h.uv) v = static_cast<std::uint8_t>(byte(rng));
    const std::uint8_t ends[] = {0, 255, 16, 235, 240, 128};
    for (std::size_t i = 0; i < sizeof ends; ++i)
        h.y[i * 5 % h.y.size()] = ends[i], h.uv[i * 3 % h.uv.size()] = ends[i];
    return h;
}

std::vector<std::uint8_t> reference_frame(const Nv12Host& h, const RefMatrix& m, bool grey) {
    std::vector<std::uint8_t> out(static_cast<std::size_t>(h.width) * h.height * 4);
    for (int y = 0; y < h.height; ++y)
        for (int x = 0; x < h.width; ++x) {
            const std::size_t c = static_cast<std::size_t>(y / 2) * h.cw() * 2 + (x / 2) * 2;
            const auto px = reference_rgba(h.y[static_cast<std::size_t>(y) * h.width + x], grey ? 128 : h.uv[c],
                                           grey ? 128 : h.uv[c + 1], m);
            std::copy(px.begin(), px.end(), &out[(static_cast<std::size_t>(y) * h.width + x) * 4]);
        }
    return out;
}

int rgba_mismatches(const std::vector<std::uint8_t>& got, const std::vector<std::uint8_t>& want, Size size,
                    const std::string& what) {
    int bad = 0;
    for (int y = 0; y < size.height; ++y)
        for (int x = 0; x < size.width; ++x) {
            const std::size_t i = (static_cast<std::size_t>(y) * size.width + x) * 4;
            if (std::memcmp(&got[i], &want[i], 4) != 0 && ++bad <= 5)
                std::printf("%s: texel (%d,%d): got %u %u %u %u, want %u %u %u %u\n", what.c_str(), x, y, got[i],
                            got[i + 1], got[i + 2], got[i + 3], want[i], want[i + 1], want[i + 2], want[i + 3]);
        }
    return bad;
}

}  // namespace corrtrack
