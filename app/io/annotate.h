// Drawing on RGB24 frames for the annotated output video: boxes, a search-window outline and
// a colour-mapped NCC heatmap inset.
// Thread rules: pure functions over caller-owned pixels.
#pragma once

#include <cstdint>

#include "app/track/types.h"
#include "corrtrack/image.h"

namespace corrtrack {

struct Rgb {
    std::uint8_t r, g, b;
};

struct RgbImage {
    std::uint8_t* data;
    int width, height;
    std::size_t pitch;  // bytes
};

void draw_box(RgbImage img, const BoxF& box, Rgb color, int thickness);
// Dashed thin outline, for the search window.
void draw_dashed_box(RgbImage img, const BoxF& box, Rgb color);
// Maps NCC [-1, 1] through a perceptual colormap (turbo) and places it at (x, y) scaled to
// fit max_side pixels on its longest side.
void draw_heatmap_inset(RgbImage img, const MapView& map, int x, int y, int max_side);
// The turbo colormap at t in [0, 1].
Rgb turbo(float t);

}  // namespace corrtrack
