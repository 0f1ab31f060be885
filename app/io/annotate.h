// Drawing on RGB24 frames for the annotated output video: boxes, a search-window outline and
// a colour-mapped NCC heatmap inset.
// Thread rules: pure functions over caller-owned pixels.
#pragma once

#include <cstdint>
#include <vector>

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
// What the annotated video draws on a frame, held by value so that another thread can draw
// it after the tracker moved on. Vectors keep their capacity when refilled.
struct OverlayBox {
    BoxF box;
    Rgb color;
};
struct Overlay {
    std::vector<BoxF> windows;       // dashed white outlines (search windows)
    std::vector<OverlayBox> boxes;   // 2-px boxes, drawn after the windows
    std::vector<float> heat;         // one NCC map, heat_w x heat_h packed rows; may be empty
    int heat_w = 0, heat_h = 0;
    int heat_x = 8, heat_y = 8, heat_side = 160;
    void clear() {
        windows.clear();
        boxes.clear();
        heat_w = heat_h = 0;
    }
    void set_heat(const MapView& map);  // copies a host map (resizes heat)
};
void draw_overlay(RgbImage img, const Overlay& overlay);

// The turbo colormap at t in [0, 1].
Rgb turbo(float t);

}  // namespace corrtrack
