#include "render/colormap.h"

#include <algorithm>
#include <cmath>

#include "app/util/colour.h"

namespace corrtrack {
namespace {

// Viridis (matplotlib, van der Walt and Smith) sampled at nine evenly spaced points; linear
// interpolation between them stays within a few levels of the full table.
constexpr std::uint8_t kViridis[9][3] = {{68, 1, 84},    {71, 44, 122}, {59, 82, 139},  {44, 113, 142}, {33, 145, 140},
                                         {39, 173, 129}, {92, 200, 99}, {170, 220, 50}, {253, 231, 37}};

ColormapLut build(Colormap c) {
    ColormapLut lut{};
    for (int i = 0; i < 256; ++i) {
        const float t = i / 255.0f;
        std::uint8_t r = 0, g = 0, b = 0;
        switch (c) {
        case Colormap::kTurbo: {
            const Rgb v = turbo(t);  // the same colours as the annotated video's inset
            r = v.r, g = v.g, b = v.b;
            break;
        }
        case Colormap::kGrey: r = g = b = static_cast<std::uint8_t>(i); break;
        case Colormap::kViridis: {
            const float pos = t * 8.0f;
            const int k = std::min(7, static_cast<int>(pos));
            const float f = pos - k;
            auto mix = [&](int ch) {
                return static_cast<std::uint8_t>(std::lround(kViridis[k][ch] * (1 - f) + kViridis[k + 1][ch] * f));
            };
            r = mix(0), g = mix(1), b = mix(2);
            break;
        }
        }
        lut[i] = {r, g, b, 255};
    }
    return lut;
}

}  // namespace

const char* to_string(Colormap c) {
    switch (c) {
    case Colormap::kTurbo: return "turbo";
    case Colormap::kGrey: return "grey";
    case Colormap::kViridis: return "viridis";
    }
    return "?";
}

const ColormapLut& colormap_lut(Colormap c) {
    static const ColormapLut turbo_lut = build(Colormap::kTurbo), grey_lut = build(Colormap::kGrey),
                             viridis_lut = build(Colormap::kViridis);
    switch (c) {
    case Colormap::kGrey: return grey_lut;
    case Colormap::kViridis: return viridis_lut;
    case Colormap::kTurbo: break;
    }
    return turbo_lut;
}

}  // namespace corrtrack
