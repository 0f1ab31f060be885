// The GUI's controller: owns every part of the app but the window (the tracker, the frame
// sink, playback, the target list, A/B, export, the screen) and carries out what spans them:
// opening an input (playback opens it, the targets start from its boxes, export writes the
// first frame's rows), tracking a frame, seeking, reset, looping at the end, the shortcut keys,
// the panels' actions and the mouse gestures, and drawing one UI frame. shutdown() takes the
// parts down in a stated order (see there); the main loop (gui_app.cpp) calls it before the
// window closes.
// Thread rules: main thread only (GLFW, GL, ImGui, the one MultiTracker for all targets). The
// session's decode thread and, while recording, the video queue's writer thread are the only
// other threads. One CUDA stream, the GPU context's compute stream (the tracker's), carries
// NVDEC's output, the kernels, A/B and the interop sinks' map/convert/unmap.
#pragma once

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "app/track/tracker.h"
#include "render/frame_sink.h"
#include "render/gui_ab.h"
#include "render/gui_app.h"
#include "render/gui_export.h"
#include "render/gui_log.h"
#include "render/gui_playback.h"
#include "render/gui_screen.h"
#include "render/gui_targets.h"
#include "render/panels.h"
#include "render/window.h"

namespace corrtrack {

class GuiController {
public:
    // `gpu` and `window` must outlive the controller: run_gui() makes the GPU context first, in
    // its outermost scope, so it goes after the controller whatever the order of members here.
    GuiController(const GuiOptions& options, Window& window, const GpuContext& gpu);
    ~GuiController() { shutdown(); }
    GuiController(const GuiController&) = delete;
    GuiController& operator=(const GuiController&) = delete;

    // --log and --csv, before the window opens; false (said on stderr) when one cannot be written.
    bool open_outputs();
    // Once the window (GL context) is open: the frame sink, which probes CUDA-GL interop.
    void attach_window();
    // Opens `input` with targets at `start_boxes` on its first frame.
    bool open_input(const std::string& input, const std::vector<BoxF>& start_boxes, std::string* error);
    void input_failed(const std::string& error);  // the start input did not open: say so in the UI

    Playback& playback() { return playback_; }
    void track_frame();  // the current frame (screenshot mode)
    void step_once();    // the next frame, tracked and paced; the end of input when there is none
    void handle_key(int key, int mods);
    void log_quit() { log_.log({{"event", "quit"}}); }
    bool quit() const { return quit_; }

    // Redraws: a few UI frames after input (ImGui settles over frames), else one a second.
    void want_redraw(int frames) { redraw_ = std::max(redraw_, frames); }
    bool redraw_pending() const { return redraw_ > 0; }
    void redrawn() {
        if (redraw_ > 0) --redraw_;
    }
    double last_render() const { return last_render_; }
    // One UI frame; with `capture_png`, the back buffer is written there before the swap.
    void draw(const std::string& capture_png = "", bool* capture_ok = nullptr);
    void print_state() const;  // --print-box
    // --stats: what ran and how (kernel, targets, decode and interop paths, GL, A/B), for the
    // summary LoopStats completes.
    nlohmann::json stats_fields() const;

    // Teardown in a fixed order; idempotent (the destructor calls it too).
    void shutdown();

private:
    FrameView tracker_frame() { return playback_.frame_view(tracker_->on_gpu()); }
    void record_frame();
    void on_end_of_input();
    void seek(long index);
    void reset();
    void open_from_ui(const std::string& input);
    void toggle_pause();
    void step();
    void step_back();
    void set_kernel(const std::string& name);
    void apply_tracker_options();
    void on_gesture(const ViewGesture& g);
    void sync_model();
    void apply(const GuiActions& a);

    // Declared (and made) in dependency order; shutdown() takes them down explicitly rather
    // than leaving it to the reverse of this order.
    GuiOptions opt_;
    Window& window_;
    const GpuContext& gpu_;
    GuiModel model_;
    EventLog log_;
    StatusLine status_;
    // The one tracker for every target, made before any input, in gpu_: its stream (the
    // context's compute stream, which kernel swaps keep) is the one NVDEC decodes on and the
    // interop sinks map on, for as long as the app runs.
    std::unique_ptr<MultiTracker> tracker_;
    std::unique_ptr<FrameSink> frame_sink_;  // made once the window (GL context) exists
    Playback playback_;                      // the session: decodes on the tracker's stream
    TargetList targets_;                     // targets in tracker_, heatmap textures
    AbRunner ab_;
    GuiExport export_;
    GuiScreen screen_;
    bool shut_down_ = false;

    std::vector<AnnotatedTarget> shown_;  // the recording's targets of a frame (capacity kept)
    // Stage sample of the last tracked frame, completed by the draw that shows it.
    std::array<float, StageHistory::kStages> sample_{};
    bool sample_pending_ = false;
    bool quit_ = false;
    int redraw_ = 2;
    double last_render_ = -1;
};

}  // namespace corrtrack
