// One UI frame's layout and drawing: the video view (frame, boxes, search windows, heatmaps,
// and the mouse gestures on it: drag a box, shift-drag to add, click to select, right-click to
// drop), the status bar, and the panel column (panels.h); and the layout the UI event log
// reports so that scripts can aim the mouse.
// Thread rules: main (GL/ImGui) thread only, between Window::begin_frame() and render().
#pragma once

#include <functional>

#include <nlohmann/json.hpp>

#include "app/io/frame.h"
#include "imgui.h"
#include "render/frame_sink.h"
#include "render/gui_log.h"
#include "render/gui_targets.h"
#include "render/panels.h"
#include "render/video_view.h"

namespace corrtrack {

// What the user did in the video view.
struct ViewGesture {
    enum Kind { kSelect, kAdd, kReselect, kDrop } kind = kSelect;
    int target = -1;  // kSelect, kDrop: the GUI id
    BoxF box;         // kAdd, kReselect: frame coordinates
};
using GestureHandler = std::function<void(const ViewGesture&)>;

class GuiScreen {
public:
    // Draws the whole window's UI. Gestures are carried out through `on_gesture` as they
    // happen, before the boxes are drawn (a new box shows in the frame that made it); what the
    // panels ask for comes back in `actions`.
    void draw(GuiModel& model, const Frame& frame, bool has_frame, const TargetList& targets, const FrameSink& sink,
              const StatusLine& status, const GestureHandler& on_gesture, GuiActions* actions);
    // Logs where things are on screen whenever it changed.
    void log_layout(EventLog& log, const GuiModel& model, Size frame);

    const Letterbox& letterbox() const { return letterbox_; }
    ImVec2 panel_pos() const { return panel_pos_; }
    ImVec2 panel_size() const { return panel_size_; }

private:
    void video_area(ImVec2 pos, ImVec2 size, const GuiModel& model, const Frame& frame, bool has_frame,
                    const TargetList& targets, const FrameSink& sink, const GestureHandler& on_gesture);
    void status_bar(ImVec2 pos, ImVec2 size, const GuiModel& model, const Frame& frame, bool has_frame,
                    const StatusLine& status);

    Letterbox letterbox_;
    ImVec2 panel_pos_, panel_size_;
    bool dragging_ = false, drag_add_ = false;
    ImVec2 drag_from_;
    nlohmann::json last_layout_;
};

}  // namespace corrtrack
