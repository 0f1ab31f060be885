// Drawing on frames for the annotated output video: boxes, a search-window outline and a
// colour-mapped NCC heatmap inset, on RGB24 frames (the GUI's recording) or on YUV 4:2:0 frames
// (`corrtrack track --video`: the decoder's own planes, so no colour conversion either way).
// annotate_frame() says what goes on a frame; both callers use it, and their writer thread
// (app/io/async_video.h) draws it with draw_overlay(). On YUV 4:2:0 a pixel's chroma is its
// 2x2 block's, so a colour drawn there also tints the block's other pixels (lines stay sharp
// in luma).
// Thread rules: pure functions over caller-owned pixels and overlays.
#pragma once

#include <cstdint>
#include <vector>

#include "app/track/types.h"
#include "app/util/colour.h"
#include "corrtrack/image.h"

namespace corrtrack {

struct RgbImage {
    std::uint8_t* data;
    int width, height;
    std::size_t pitch;  // bytes
};

// Planar YUV 4:2:0: y is width x height, u and v (width+1)/2 x (height+1)/2.
struct YuvImage {
    std::uint8_t *y, *u, *v;
    int width, height;
    std::size_t y_pitch, uv_pitch;  // bytes
    YuvFormat format;               // how RGB colours become YUV values
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
    std::vector<BoxF> windows;      // dashed white outlines (search windows)
    std::vector<OverlayBox> boxes;  // 2-px boxes, drawn after the windows
    std::vector<float> heat;        // one NCC map, heat_w x heat_h packed rows; may be empty
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
void draw_overlay(YuvImage img, const Overlay& overlay);

// One target as the annotated video shows it.
struct AnnotatedTarget {
    BoxF box;
    Rgb color;
    bool searched = false;  // it has a search window and map this frame (tracked, and wanted)
    BoxF window;            // the search window (the tracker's last_map_region)
    MapView map;            // its NCC map in host memory (the tracker's last_map)
};
// What the annotated video draws on a frame `frame_width` pixels wide, into `overlay` (refilled,
// capacity kept): the dashed search window of every searched target, the first target's NCC
// map as an inset in the top-left corner (at most 160 px or a quarter of the frame on its
// longer side) when it was searched, and every box, 2 px, on top.
void annotate_frame(Overlay* overlay, int frame_width, const std::vector<AnnotatedTarget>& targets);

}  // namespace corrtrack
