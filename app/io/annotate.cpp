#include "app/io/annotate.h"

#include <algorithm>
#include <cmath>

namespace corrtrack {
namespace {

void put(RgbImage img, int x, int y, Rgb c) {
    if (x < 0 || y < 0 || x >= img.width || y >= img.height) return;
    std::uint8_t* p = img.data + y * img.pitch + 3 * x;
    p[0] = c.r;
    p[1] = c.g;
    p[2] = c.b;
}

}  // namespace

void draw_box(RgbImage img, const BoxF& box, Rgb color, int thickness) {
    const int x0 = static_cast<int>(std::lround(box.x)), y0 = static_cast<int>(std::lround(box.y));
    const int x1 = static_cast<int>(std::lround(box.x + box.width)) - 1;
    const int y1 = static_cast<int>(std::lround(box.y + box.height)) - 1;
    for (int t = 0; t < thickness; ++t) {
        for (int x = x0 - t; x <= x1 + t; ++x) {
            put(img, x, y0 - t, color);
            put(img, x, y1 + t, color);
        }
        for (int y = y0 - t; y <= y1 + t; ++y) {
            put(img, x0 - t, y, color);
            put(img, x1 + t, y, color);
        }
    }
}

void draw_dashed_box(RgbImage img, const BoxF& box, Rgb color) {
    const int x0 = static_cast<int>(std::lround(box.x)), y0 = static_cast<int>(std::lround(box.y));
    const int x1 = static_cast<int>(std::lround(box.x + box.width)) - 1;
    const int y1 = static_cast<int>(std::lround(box.y + box.height)) - 1;
    for (int x = x0; x <= x1; ++x)
        if ((x / 4) % 2 == 0) {
            put(img, x, y0, color);
            put(img, x, y1, color);
        }
    for (int y = y0; y <= y1; ++y)
        if ((y / 4) % 2 == 0) {
            put(img, x0, y, color);
            put(img, x1, y, color);
        }
}

void draw_heatmap_inset(RgbImage img, const MapView& map, int x, int y, int max_side) {
    if (map.width <= 0 || map.height <= 0) return;
    const double k = static_cast<double>(max_side) / std::max(map.width, map.height);
    const int w = std::max(1, static_cast<int>(map.width * k)), h = std::max(1, static_cast<int>(map.height * k));
    for (int v = 0; v < h; ++v)
        for (int u = 0; u < w; ++u) {
            const int mx = std::min(map.width - 1, static_cast<int>(u / k));
            const int my = std::min(map.height - 1, static_cast<int>(v / k));
            put(img, x + u, y + v, turbo(0.5f * (map.row(my)[mx] + 1.0f)));
        }
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
    // The heatmap first: the boxes stay visible where they cross it (the order of the old
    // in-line drawing, which drew target 0's window and inset before its box).
    for (const BoxF& w : o.windows) draw_dashed_box(img, w, {255, 255, 255});
    if (o.heat_w > 0 && o.heat_h > 0) {
        MapView m;
        m.data = const_cast<float*>(o.heat.data());
        m.width = o.heat_w;
        m.height = o.heat_h;
        m.pitch = static_cast<std::size_t>(o.heat_w);
        draw_heatmap_inset(img, m, o.heat_x, o.heat_y, o.heat_side);
    }
    for (const OverlayBox& b : o.boxes) draw_box(img, b.box, b.color, 2);
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
