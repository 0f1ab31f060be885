#include "app/io/annotate.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace corrtrack {
namespace {

// Where drawing lands: put(x, y, colour) with clipping at the frame's edges.
struct RgbCanvas {
    RgbImage img;
    void put(int x, int y, Rgb c) const {
        if (x < 0 || y < 0 || x >= img.width || y >= img.height) return;
        std::uint8_t* p = img.data + y * img.pitch + 3 * x;
        p[0] = c.r;
        p[1] = c.g;
        p[2] = c.b;
    }
};

struct YuvCanvas {
    YuvImage img;
    void put(int x, int y, Rgb c) const { put(x, y, to_yuv(c, img.format)); }
    void put(int x, int y, Yuv c) const {
        if (x < 0 || y < 0 || x >= img.width || y >= img.height) return;
        img.y[y * img.y_pitch + x] = c.y;
        const std::size_t at = (y / 2) * img.uv_pitch + x / 2;
        img.u[at] = c.u;
        img.v[at] = c.v;
    }
};

// The few colours of an overlay, converted once rather than per pixel.
struct YuvPen {
    const YuvCanvas& canvas;
    Yuv c;
    void put(int x, int y, Rgb) const { canvas.put(x, y, c); }
};

template <typename Canvas>
void box_on(const Canvas& canvas, const BoxF& box, Rgb color, int thickness) {
    const int x0 = static_cast<int>(std::lround(box.x)), y0 = static_cast<int>(std::lround(box.y));
    const int x1 = static_cast<int>(std::lround(box.x + box.width)) - 1;
    const int y1 = static_cast<int>(std::lround(box.y + box.height)) - 1;
    for (int t = 0; t < thickness; ++t) {
        for (int x = x0 - t; x <= x1 + t; ++x) {
            canvas.put(x, y0 - t, color);
            canvas.put(x, y1 + t, color);
        }
        for (int y = y0 - t; y <= y1 + t; ++y) {
            canvas.put(x0 - t, y, color);
            canvas.put(x1 + t, y, color);
        }
    }
}

template <typename Canvas>
void dashed_box_on(const Canvas& canvas, const BoxF& box, Rgb color) {
    const int x0 = static_cast<int>(std::lround(box.x)), y0 = static_cast<int>(std::lround(box.y));
    const int x1 = static_cast<int>(std::lround(box.x + box.width)) - 1;
    const int y1 = static_cast<int>(std::lround(box.y + box.height)) - 1;
    for (int x = x0; x <= x1; ++x)
        if ((x / 4) % 2 == 0) {
            canvas.put(x, y0, color);
            canvas.put(x, y1, color);
        }
    for (int y = y0; y <= y1; ++y)
        if ((y / 4) % 2 == 0) {
            canvas.put(x0, y, color);
            canvas.put(x1, y, color);
        }
}

// Turbo at 256 levels of NCC [-1, 1], in the canvas's colours: a table look-up per pixel
// instead of the polynomial (and, on YUV, the conversion).
constexpr int kHeatLevels = 256;
template <typename Colour, typename Convert>
std::array<Colour, kHeatLevels> heat_table(const Convert& convert) {
    std::array<Colour, kHeatLevels> table;
    for (int i = 0; i < kHeatLevels; ++i) table[i] = convert(turbo(static_cast<float>(i) / (kHeatLevels - 1)));
    return table;
}
inline int heat_level(float ncc) {
    return std::clamp(static_cast<int>(0.5f * (ncc + 1.0f) * (kHeatLevels - 1) + 0.5f), 0, kHeatLevels - 1);
}

// The inset's pixels only (its frame is drawn by the caller): w x h, nearest map sample.
template <typename Canvas, typename Table>
void heatmap_on(const Canvas& canvas, const Table& table, const MapView& map, int x, int y, int max_side, int* w_out,
                int* h_out) {
    const double k = static_cast<double>(max_side) / std::max(map.width, map.height);
    const int w = std::max(1, static_cast<int>(map.width * k)), h = std::max(1, static_cast<int>(map.height * k));
    for (int v = 0; v < h; ++v) {
        const float* row = map.row(std::min(map.height - 1, static_cast<int>(v / k)));
        for (int u = 0; u < w; ++u)
            canvas.put(x + u, y + v, table[heat_level(row[std::min(map.width - 1, static_cast<int>(u / k))])]);
    }
    *w_out = w;
    *h_out = h;
}

template <typename Canvas, typename PenFor, typename Table>
void overlay_on(const Canvas& canvas, const PenFor& pen_for, const Table& heat, const Overlay& o) {
    // The heatmap first: the boxes stay visible where they cross it (the order of the old
    // in-line drawing, which drew target 0's window and inset before its box).
    const Rgb white{255, 255, 255};
    const auto white_pen = pen_for(white);
    for (const BoxF& w : o.windows) dashed_box_on(white_pen, w, white);
    if (o.heat_w > 0 && o.heat_h > 0) {
        MapView m;
        m.data = const_cast<float*>(o.heat.data());
        m.width = o.heat_w;
        m.height = o.heat_h;
        m.pitch = static_cast<std::size_t>(o.heat_w);
        int w = 0, h = 0;
        heatmap_on(canvas, heat, m, o.heat_x, o.heat_y, o.heat_side, &w, &h);
        box_on(white_pen, {static_cast<double>(o.heat_x - 1), static_cast<double>(o.heat_y - 1), w + 2.0, h + 2.0},
               white, 1);
    }
    for (const OverlayBox& b : o.boxes) box_on(pen_for(b.color), b.box, b.color, 2);
}

}  // namespace

void draw_box(RgbImage img, const BoxF& box, Rgb color, int thickness) {
    box_on(RgbCanvas{img}, box, color, thickness);
}

void draw_dashed_box(RgbImage img, const BoxF& box, Rgb color) { dashed_box_on(RgbCanvas{img}, box, color); }

namespace {
const std::array<Rgb, kHeatLevels>& rgb_heat_table() {
    static const auto table = heat_table<Rgb>([](Rgb c) { return c; });
    return table;
}
}  // namespace

void draw_heatmap_inset(RgbImage img, const MapView& map, int x, int y, int max_side) {
    if (map.width <= 0 || map.height <= 0) return;
    int w = 0, h = 0;
    heatmap_on(RgbCanvas{img}, rgb_heat_table(), map, x, y, max_side, &w, &h);
    draw_box(img, {static_cast<double>(x - 1), static_cast<double>(y - 1), w + 2.0, h + 2.0}, {255, 255, 255}, 1);
}

void Overlay::set_heat(const MapView& map) {
    heat_w = heat_h = 0;
    if (!map.data || map.width <= 0 || map.height <= 0 || map.space != MemorySpace::kHost) return;
    heat.resize(static_cast<std::size_t>(map.width) * map.height);
    for (int y = 0; y < map.height; ++y)
        std::copy(map.row(y), map.row(y) + map.width, heat.data() + static_cast<std::size_t>(y) * map.width);
    heat_w = map.width;
    heat_h = map.height;
}

void draw_overlay(RgbImage img, const Overlay& o) {
    const RgbCanvas canvas{img};
    overlay_on(
        canvas, [&](Rgb) { return canvas; }, rgb_heat_table(), o);
}

void draw_overlay(YuvImage img, const Overlay& o) {
    const YuvCanvas canvas{img};
    // One table per format; frames of a run share one.
    thread_local YuvFormat table_format;
    thread_local std::array<Yuv, kHeatLevels> table{};
    thread_local bool made = false;
    if (!made || !(table_format == img.format)) {
        table = heat_table<Yuv>([&](Rgb c) { return to_yuv(c, img.format); });
        table_format = img.format;
        made = true;
    }
    overlay_on(
        canvas,
        [&](Rgb c) {
            return YuvPen{canvas, to_yuv(c, img.format)};
        },
        table, o);
}

void annotate_frame(Overlay* o, int frame_width, const std::vector<AnnotatedTarget>& targets) {
    o->clear();
    o->heat_side = std::min(160, frame_width / 4);
    for (std::size_t i = 0; i < targets.size(); ++i) {
        const AnnotatedTarget& t = targets[i];
        if (t.searched) {
            o->windows.push_back(t.window);
            if (i == 0) o->set_heat(t.map);
        }
        o->boxes.push_back({t.box, t.color});
    }
}

}  // namespace corrtrack
