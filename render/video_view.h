// The video view: the frame as a GL texture (a FrameSink's), letterboxed into its area, with the tracked boxes,
// search windows and NCC heatmaps drawn over it through an ImGui draw list.
// Thread rules: main (GL) thread only.
#pragma once

#include <cstdint>
#include <vector>

#include "app/track/types.h"
#include "imgui.h"
#include "render/frame_sink.h"
#include "render/heatmap_sink.h"

namespace corrtrack {

// Frame pixel (fx, fy) lands on screen at (x0 + scale * fx, y0 + scale * fy); the frame keeps
// its aspect ratio and is centred in its area (x0, y0 whole pixels, so edges stay crisp).
struct Letterbox {
    float x0 = 0, y0 = 0, scale = 1;
    Size frame;

    static Letterbox fit(Size frame, ImVec2 area_min, ImVec2 area_size);
    ImVec2 to_screen(double fx, double fy) const {
        return {x0 + scale * static_cast<float>(fx), y0 + scale * static_cast<float>(fy)};
    }
    // Screen to frame coordinates, clamped to the frame.
    void to_frame(ImVec2 p, double* fx, double* fy) const;
    bool contains(ImVec2 p) const;
};

enum class HeatmapMode { kOverlay, kPane, kOff };
const char* to_string(HeatmapMode m);

struct ViewStyle {
    HeatmapMode heatmap = HeatmapMode::kOverlay;
    float blend = 0.45f;      // heatmap opacity over the search window
    bool show_search = true;  // dashed search-window outline
    bool show_labels = true;  // "#id score" above each box
};

struct TargetOverlay {
    int id = 0;
    BoxF box;
    bool lost = false;
    bool redetected = false;  // the frame was searched for it (lost, or just re-found)
    bool selected = false;
    float score = 0;
    float confidence = 0;               // peak-to-sidelobe ratio
    BoxF search;                        // last_map_region(); width 0 before the first update
    const HeatmapSink* heat = nullptr;  // nullptr or empty: no map yet
};

// Box colour of target `id` (a fixed palette) and of a lost target.
ImU32 target_color(int id);
constexpr ImU32 kLostColor = IM_COL32(255, 60, 60, 255);

// Where a target's map is shown: map cell (0, 0) belongs to the window whose centre sits half a
// box inside the search window's corner, so the heatmap covers the positions the box centre can
// take, not the whole search window. Frame coordinates.
BoxF heatmap_rect(const BoxF& search, const BoxF& box, Size map);

void draw_video(ImDrawList* dl, const Letterbox& lb, const FrameSink& frame, const std::vector<TargetOverlay>& targets,
                const ViewStyle& style);
// The rubber band while the user drags out a box (screen coordinates).
void draw_selection(ImDrawList* dl, ImVec2 a, ImVec2 b, bool adding);
void draw_dashed_rect(ImDrawList* dl, ImVec2 p0, ImVec2 p1, ImU32 color, float dash = 6, float gap = 4);

}  // namespace corrtrack
