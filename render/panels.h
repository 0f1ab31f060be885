// The ImGui side column: Input, Playback, Kernels, Tracker, View, Timings, A/B and Export
// panels. They draw from a GuiModel, edit its settings in place and ask for everything else
// (opening inputs, seeking, switching kernels, saving files) through GuiActions, which the app
// carries out after the frame is drawn.
// Thread rules: main (GL/ImGui) thread only.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include "app/cli/output_sinks.h"
#include "app/io/camera_modes.h"
#include "app/track/tracker.h"
#include "imgui.h"
#include "render/heatmap_sink.h"
#include "render/video_view.h"

namespace corrtrack {

// Per-stage milliseconds of the last kCapacity processed frames, for the live plots.
class StageHistory {
public:
    static constexpr int kCapacity = 240;
    enum Stage { kDecode, kUpload, kCorrelate, kPeak, kRender, kStages };
    static const char* name(int stage);

    void push(const std::array<float, kStages>& sample);
    void clear() { count_ = next_ = 0; }
    int count() const { return count_; }
    float latest(int stage) const;
    float median(int stage) const;
    // Oldest first when read from offset() (ImGui::PlotLines' values_offset).
    const float* values(int stage) const { return values_[stage].data(); }
    int offset() const { return count_ < kCapacity ? 0 : next_; }

private:
    std::array<std::array<float, kCapacity>, kStages> values_{};
    int count_ = 0, next_ = 0;
};

// The full-frame A/B's template sides.
inline constexpr int kAbTemplateSides[] = {16, 32, 64, 128};

struct AbModel {
    bool enabled = false;  // runs both kernels on processed frames
    std::string a = "cpu_ref", b = "cpu_fast";
    // Scope: false: the selected target's search window, every frame; true: the whole frame
    // against a templ_side square from the target's centre (or the frame's), at a bounded rate.
    bool full_frame = false;
    int templ_side = 64;
    bool open_panel = false;  // expand the A/B header once (set from the command line)
    // Results of the last comparison (read by the panel only).
    bool valid = false;
    std::string error;          // why nothing was compared
    std::string problem;        // "search 128x166 at (580,190), template 44x80"
    std::string timing;         // how ms_a and ms_b were taken
    double ms_a = 0, ms_b = 0;  // window: median host time around each run; full frame: the kernel's
    double ratio = 0;           // window: median of per-frame A/B time ratios; full frame: ms_a / ms_b
    int map_size[2] = {0, 0};   // the maps compared (width, height)
    int view_factor = 1;        // map pixels per heatmap texel (full-frame maps are max-pooled)
    float max_diff = 0;         // max |A - B| over the maps
    bool peaks_agree = false;
    int peak_a[2] = {0, 0}, peak_b[2] = {0, 0};
    int samples = 0;
    const HeatmapSink* heat_a = nullptr;
    const HeatmapSink* heat_b = nullptr;
};

// corrtrack_boxes.EXT for every output the Export panel saves; "" for the others.
inline OutputPaths default_export_paths() {
    OutputPaths paths;
    for (const OutputSpec& spec : output_table())
        if (gui_exports(spec))
            paths[static_cast<std::size_t>(spec.kind)] = std::string("corrtrack_boxes.") + spec.extension;
    return paths;
}

struct GuiModel {
    // Input
    std::string path_edit;             // the path box
    std::vector<std::string> cameras;  // /dev/video* found at the last scan
    int camera_choice = 0;
    std::vector<CameraMode> camera_modes;  // the chosen camera's modes (camera_modes.h)
    std::string camera_modes_error;        // why they could not be listed
    int camera_mode_choice = 0;            // 0: the default (or the command line's mode), else mode - 1
    std::string input, description, input_error;
    // Playback
    bool paused = false, loop = false, max_speed = false, vsync = false;
    double speed = 1.0;
    long frame_index = -1, frame_count = -1;
    long seek_edit = -1;  // the seek slider's value while it is held
    double pts = 0;
    bool live = false, ended = false, has_frame = false;
    // Kernels: the option value ("auto" or a name) and what it runs as here
    std::string kernel, kernel_running;
    // Tracker settings for new and reset targets (and for Apply)
    TrackerOptions tracker;
    int targets = 0;
    // View
    ViewStyle view;
    HeatmapStyle heat;
    // Timings
    StageHistory history;
    double process_fps = 0;
    std::string gpu, gl_renderer;
    std::string decode_mode = "sw", decode_note;  // FrameSource::decode_mode(), decode_note()
    std::string frame_path;                       // how frames reach GL (FrameSink::path())
    long dropped = 0;
    // A/B
    AbModel ab;
    // Export
    // A path per output of the table the Export panel saves (gui_exports()): corrtrack_boxes.EXT.
    OutputPaths export_paths = default_export_paths();
    std::string video_path = "corrtrack_annotated.mp4", png_path = "corrtrack_screenshot.png";
    bool recording = false;
    long recorded_frames = 0;
    long history_rows = 0;
    std::string export_message;
    bool export_error = false;
    // Screen rectangles of the kernel radio buttons (x, y, w, h), for the UI event log.
    std::map<std::string, std::array<float, 4>> kernel_buttons;
};

struct GuiActions {
    bool open_path = false, open_camera = false, rescan_cameras = false;
    bool camera_chosen = false;  // another camera picked: list its modes
    bool toggle_pause = false, step = false, step_back = false, reset = false;
    long seek = -1;
    double speed_factor = 1.0;    // multiply the playback speed by this
    bool pacing_changed = false;  // real time / maximum speed toggled
    std::string kernel;           // switch every target to this kernel
    bool apply_tracker = false;
    bool heat_style_changed = false, vsync_changed = false;
    bool ab_changed = false;
    int save_output = -1;  // the OutputKind whose Save button was pressed
    bool toggle_recording = false, save_png = false;
};

// The column at `pos` with `size` (screen pixels).
void draw_panels(GuiModel& m, GuiActions& a, ImVec2 pos, ImVec2 size);

}  // namespace corrtrack
