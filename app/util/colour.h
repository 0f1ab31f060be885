// An 8-bit RGB colour and the turbo colormap, shared by the annotated video (app/io/annotate.*)
// and the GUI's heatmap colour tables (render/colormap.*), so both show the same colours
// without render/ depending on app/io/ for them; and RGB colours in YUV, for drawing on the
// annotated video's YUV frames.
// Thread rules: pure functions.
#pragma once

#include <cstdint>

namespace corrtrack {

struct Rgb {
    std::uint8_t r, g, b;
};

// The turbo colormap at t in [0, 1] (clamped).
Rgb turbo(float t);

// How a YUV picture's values map to colour: the matrix and the range (limited: Y 16-235, chroma
// 16-240; full: 0-255).
enum class YuvMatrix { kBt601, kBt709, kBt2020 };
struct YuvFormat {
    YuvMatrix matrix = YuvMatrix::kBt601;
    bool full_range = false;
    bool operator==(const YuvFormat& o) const { return matrix == o.matrix && full_range == o.full_range; }
};
struct Yuv {
    std::uint8_t y, u, v;
};
// An RGB colour (gamma-encoded, full range) in YUV of the given format, rounded.
Yuv to_yuv(Rgb c, YuvFormat format);

}  // namespace corrtrack
