#include "render/video_view.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace corrtrack {

Letterbox Letterbox::fit(Size frame, ImVec2 area_min, ImVec2 area_size) {
    Letterbox lb;
    lb.frame = frame;
    if (frame.width <= 0 || frame.height <= 0) return lb;
    lb.scale = std::max(1e-3f, std::min(area_size.x / frame.width, area_size.y / frame.height));
    lb.x0 = std::round(area_min.x + (area_size.x - frame.width * lb.scale) / 2);
    lb.y0 = std::round(area_min.y + (area_size.y - frame.height * lb.scale) / 2);
    return lb;
}

void Letterbox::to_frame(ImVec2 p, double* fx, double* fy) const {
    *fx = std::clamp((p.x - x0) / static_cast<double>(scale), 0.0, static_cast<double>(frame.width));
    *fy = std::clamp((p.y - y0) / static_cast<double>(scale), 0.0, static_cast<double>(frame.height));
}

bool Letterbox::contains(ImVec2 p) const {
    return p.x >= x0 && p.y >= y0 && p.x < x0 + frame.width * scale && p.y < y0 + frame.height * scale;
}

const char* to_string(HeatmapMode m) {
    switch (m) {
    case HeatmapMode::kOverlay: return "over search window";
    case HeatmapMode::kPane: return "own pane";
    case HeatmapMode::kOff: return "off";
    }
    return "?";
}

ImU32 target_color(int id) {
    static const ImU32 palette[] = {IM_COL32(60, 255, 90, 255),  IM_COL32(0, 200, 255, 255),
                                    IM_COL32(255, 90, 255, 255), IM_COL32(255, 220, 0, 255),
                                    IM_COL32(255, 150, 40, 255), IM_COL32(160, 130, 255, 255)};
    return palette[static_cast<unsigned>(id) % (sizeof palette / sizeof palette[0])];
}

BoxF heatmap_rect(const BoxF& search, const BoxF& box, Size map) {
    const double span_x = std::max(0.0, search.width - box.width), span_y = std::max(0.0, search.height - box.height);
    const double cell_x = map.width > 1 ? span_x / (map.width - 1) : 1.0;
    const double cell_y = map.height > 1 ? span_y / (map.height - 1) : 1.0;
    return {search.x + box.width / 2 - cell_x / 2, search.y + box.height / 2 - cell_y / 2, span_x + cell_x,
            span_y + cell_y};
}

void draw_dashed_rect(ImDrawList* dl, ImVec2 p0, ImVec2 p1, ImU32 color, float dash, float gap) {
    auto line = [&](ImVec2 a, ImVec2 b) {
        const float len = std::hypot(b.x - a.x, b.y - a.y);
        if (len <= 0) return;
        const ImVec2 d{(b.x - a.x) / len, (b.y - a.y) / len};
        for (float t = 0; t < len; t += dash + gap) {
            const float e = std::min(len, t + dash);
            dl->AddLine({a.x + d.x * t, a.y + d.y * t}, {a.x + d.x * e, a.y + d.y * e}, color, 1.0f);
        }
    };
    line(p0, {p1.x, p0.y});
    line({p1.x, p0.y}, p1);
    line(p1, {p0.x, p1.y});
    line({p0.x, p1.y}, p0);
}

void draw_video(ImDrawList* dl, const Letterbox& lb, const FrameSink& frame, const std::vector<TargetOverlay>& targets,
                const ViewStyle& style) {
    if (!frame.texture()) return;
    const ImVec2 f0 = lb.to_screen(0, 0), f1 = lb.to_screen(frame.size().width, frame.size().height);
    dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(frame.texture())), f0, f1);
    dl->PushClipRect(f0, f1, true);

    const TargetOverlay* pane_target = nullptr;
    for (const TargetOverlay& t : targets) {
        const bool has_map = t.heat && t.heat->texture() && t.search.width > 0;
        if (has_map && style.heatmap == HeatmapMode::kOverlay) {
            const BoxF r = heatmap_rect(t.search, t.box, t.heat->size());
            const auto alpha = static_cast<int>(std::clamp(style.blend, 0.0f, 1.0f) * 255 + 0.5f);
            dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(t.heat->texture())),
                         lb.to_screen(r.x, r.y), lb.to_screen(r.x + r.width, r.y + r.height), {0, 0}, {1, 1},
                         IM_COL32(255, 255, 255, alpha));
        }
        if (has_map && (t.selected || !pane_target)) pane_target = &t;  // the selected one, else the first
        if (style.show_search && t.search.width > 0)
            draw_dashed_rect(dl, lb.to_screen(t.search.x, t.search.y),
                             lb.to_screen(t.search.x + t.search.width, t.search.y + t.search.height),
                             IM_COL32(255, 255, 255, 200));
    }
    for (const TargetOverlay& t : targets) {
        const ImU32 c = t.lost ? kLostColor : target_color(t.id);
        const ImVec2 p0 = lb.to_screen(t.box.x, t.box.y),
                     p1 = lb.to_screen(t.box.x + t.box.width, t.box.y + t.box.height);
        dl->AddRect(p0, p1, c, 0, 0, t.selected ? 3.0f : 2.0f);
        if (style.show_labels) {
            // The tracker's state: tracking (NCC and PSR), re-found this frame, or lost and
            // searching the frame.
            char label[64];
            if (t.lost)
                std::snprintf(label, sizeof label, "#%d lost, searching", t.id);
            else
                std::snprintf(label, sizeof label, "#%d%s %.2f psr %.1f", t.id, t.redetected ? " re-found" : "",
                              t.score, t.confidence);
            const ImVec2 ts = ImGui::CalcTextSize(label);
            const ImVec2 at{p0.x, std::max(f0.y, p0.y - ts.y - 4)};
            dl->AddRectFilled(at, {at.x + ts.x + 8, at.y + ts.y + 2}, IM_COL32(0, 0, 0, 160), 2);
            dl->AddText({at.x + 4, at.y + 1}, c, label);
        }
    }
    dl->PopClipRect();

    if (pane_target && style.heatmap == HeatmapMode::kPane) {
        // Inset in the view's top-left corner, longest side 200 px, like the annotated video's.
        const Size m = pane_target->heat->size();
        const float k = 200.0f / std::max(m.width, m.height);
        const ImVec2 a{f0.x + 10, f0.y + 10}, b{a.x + m.width * k, a.y + m.height * k};
        dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(pane_target->heat->texture())), a, b);
        dl->AddRect({a.x - 1, a.y - 1}, {b.x + 1, b.y + 1}, target_color(pane_target->id), 0, 0, 2.0f);
        char label[32];
        std::snprintf(label, sizeof label, "NCC map #%d", pane_target->id);
        dl->AddText({a.x + 4, b.y + 4}, IM_COL32(255, 255, 255, 230), label);
    }
}

void draw_selection(ImDrawList* dl, ImVec2 a, ImVec2 b, bool adding) {
    const ImVec2 p0{std::min(a.x, b.x), std::min(a.y, b.y)}, p1{std::max(a.x, b.x), std::max(a.y, b.y)};
    const ImU32 c = adding ? IM_COL32(0, 200, 255, 255) : IM_COL32(255, 220, 0, 255);
    dl->AddRectFilled(p0, p1, (c & 0x00FFFFFF) | 0x30000000);
    draw_dashed_rect(dl, p0, p1, c, 5, 3);
}

}  // namespace corrtrack
