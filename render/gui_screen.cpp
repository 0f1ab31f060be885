// The video view, the status bar and the layout of one UI frame; see gui_screen.h.
#include "render/gui_screen.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace corrtrack {

void GuiScreen::draw(GuiModel& model, const Frame& frame, bool has_frame, const TargetList& targets,
                     const FrameSink& sink, const StatusLine& status, const GestureHandler& on_gesture,
                     GuiActions* actions) {
    const ImVec2 ds = ImGui::GetIO().DisplaySize;
    const float panel_w = std::round(std::clamp(ds.x * 0.31f, 330.0f, 430.0f));
    const float status_h = std::round(ImGui::GetFrameHeight() + 8);
    panel_pos_ = {ds.x - panel_w, 0};
    panel_size_ = {panel_w, ds.y};
    video_area({0, 0}, {ds.x - panel_w, ds.y - status_h}, model, frame, has_frame, targets, sink, on_gesture);
    status_bar({0, ds.y - status_h}, {ds.x - panel_w, status_h}, model, frame, has_frame, status);
    draw_panels(model, *actions, panel_pos_, panel_size_);
}

void GuiScreen::video_area(ImVec2 pos, ImVec2 size, const GuiModel& model, const Frame& frame, bool has_frame,
                           const TargetList& targets, const FrameSink& sink, const GestureHandler& on_gesture) {
    ImGui::SetNextWindowPos(pos);
    ImGui::SetNextWindowSize(size);
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, {0, 0});
    ImGui::PushStyleColor(ImGuiCol_WindowBg, IM_COL32(0, 0, 0, 255));
    ImGui::Begin("##video", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                     ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoScrollWithMouse);
    ImGui::PopStyleColor();
    ImGui::PopStyleVar();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    letterbox_ = Letterbox::fit(frame.size(), pos, size);
    ImGui::InvisibleButton("##canvas", size, ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
    const ImGuiIO& io = ImGui::GetIO();

    if (!has_frame) {
        const char* text = "Open a video, image sequence or camera in the panel on the right.";
        const ImVec2 ts = ImGui::CalcTextSize(text);
        dl->AddText({pos.x + (size.x - ts.x) / 2, pos.y + (size.y - ts.y) / 2}, IM_COL32(200, 200, 200, 255), text);
        ImGui::End();
        return;
    }

    auto hit = [&](ImVec2 p) {
        double fx, fy;
        letterbox_.to_frame(p, &fx, &fy);
        return targets.hit(fx, fy);
    };
    if (ImGui::IsItemActivated() && io.MouseDown[0]) {
        dragging_ = true;
        drag_from_ = io.MousePos;
    }
    if (dragging_) drag_add_ = drag_add_ || io.KeyShift;
    if (dragging_ && !io.MouseDown[0]) {
        dragging_ = false;
        const ImVec2 to = io.MousePos;
        if (std::fabs(to.x - drag_from_.x) < 4 && std::fabs(to.y - drag_from_.y) < 4) {
            if (const GuiTarget* t = hit(to)) on_gesture({ViewGesture::kSelect, t->id, {}});  // a click selects
        } else {
            double x0, y0, x1, y1;
            letterbox_.to_frame(drag_from_, &x0, &y0);
            letterbox_.to_frame(to, &x1, &y1);
            const BoxF box{std::min(x0, x1), std::min(y0, y1), std::fabs(x1 - x0), std::fabs(y1 - y0)};
            on_gesture({drag_add_ || targets.empty() ? ViewGesture::kAdd : ViewGesture::kReselect, -1, box});
        }
        drag_add_ = false;
    }
    if (ImGui::IsItemHovered() && io.MouseClicked[1]) {
        if (const GuiTarget* t = hit(io.MousePos)) on_gesture({ViewGesture::kDrop, t->id, {}});
    }

    draw_video(dl, letterbox_, sink, targets.overlays(), model.view);
    if (dragging_) draw_selection(dl, drag_from_, io.MousePos, drag_add_ || io.KeyShift || targets.empty());
    if (targets.empty() && !dragging_) {
        const char* text = "Drag a box around the target to track it";
        const ImVec2 ts = ImGui::CalcTextSize(text);
        const ImVec2 at{pos.x + (size.x - ts.x) / 2, letterbox_.y0 + 16};
        dl->AddRectFilled({at.x - 10, at.y - 6}, {at.x + ts.x + 10, at.y + ts.y + 6}, IM_COL32(0, 0, 0, 170), 4);
        dl->AddText(at, IM_COL32(255, 220, 0, 255), text);
    }
    ImGui::End();
}

void GuiScreen::status_bar(ImVec2 pos, ImVec2 size, const GuiModel& model, const Frame& current, bool has_frame,
                           const StatusLine& status) {
    ImGui::SetNextWindowPos(pos);
    ImGui::SetNextWindowSize(size);
    ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, {10, 4});
    ImGui::Begin("##status", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoSavedSettings |
                     ImGuiWindowFlags_NoBringToFrontOnFocus);
    ImGui::PopStyleVar();
    ImGui::AlignTextToFramePadding();
    // "frame 19/120   playing 1x, 9.9 fps   cpu_fast   1 target"
    char frame[48], state[64], left[192];
    if (model.frame_count > 0)
        std::snprintf(frame, sizeof frame, "frame %ld/%ld", current.index, model.frame_count);
    else
        std::snprintf(frame, sizeof frame, "frame %ld", current.index);
    if (model.ended || model.paused)
        std::snprintf(state, sizeof state, "%s", model.ended ? "ended" : "paused");
    else if (model.live)
        std::snprintf(state, sizeof state, "live, %.1f fps", model.process_fps);
    else if (model.max_speed)
        std::snprintf(state, sizeof state, "max speed, %.1f fps", model.process_fps);
    else
        std::snprintf(state, sizeof state, "playing %.3gx, %.1f fps", model.speed, model.process_fps);
    std::snprintf(left, sizeof left, "%s   %s   %s   %d target%s", frame, state, model.kernel_running.c_str(),
                  model.targets, model.targets == 1 ? "" : "s");
    ImGui::TextUnformatted(has_frame ? left : "no input");
    const float used = ImGui::GetItemRectMax().x - pos.x;
    const double age = glfwGetTime() - status.time;
    if (!status.text.empty() && (status.error ? age < 20 : age < 6)) {
        ImGui::SameLine(0, 24);
        ImGui::TextColored(status.error ? ImVec4(1.0f, 0.42f, 0.42f, 1) : ImVec4(1.0f, 0.86f, 0.3f, 1), "%s",
                           status.text.c_str());
    } else if (has_frame) {
        const char* help = "drag: target   shift-drag: add   right-click: drop";
        const float w = ImGui::CalcTextSize(help).x;
        if (used + w + 40 < size.x) {
            ImGui::SameLine(size.x - w - 10);
            ImGui::TextDisabled("%s", help);
        }
    }
    ImGui::End();
}

// Where things are on screen, logged whenever it changes, so scripts driving the GUI (and
// the tests) can aim the mouse without guessing the layout.
void GuiScreen::log_layout(EventLog& log, const GuiModel& model, Size frame) {
    if (!log.enabled()) return;
    nlohmann::json kernels = nlohmann::json::object();
    for (const auto& [name, r] : model.kernel_buttons) kernels[name] = {r[0], r[1], r[2], r[3]};
    nlohmann::json layout = {{"view", {letterbox_.x0, letterbox_.y0, letterbox_.scale}},
                             {"frame_size", {frame.width, frame.height}},
                             {"panel", {panel_pos_.x, panel_pos_.y, panel_size_.x, panel_size_.y}},
                             {"kernels", kernels}};
    if (layout == last_layout_) return;
    last_layout_ = layout;
    layout["event"] = "layout";
    log.log(layout);
}

}  // namespace corrtrack
