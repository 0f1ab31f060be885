// The desktop GUI: opens an input, tracks one or more targets frame by frame and shows them
// with their NCC heatmaps, panels for kernels, tracker settings, timings, A/B and export; a
// screenshot mode renders N frames into a PNG and exits. run_gui() is the main loop
// (gui_app.cpp); the parts are gui_controller.* (owner and glue), gui_playback.*,
// gui_targets.*, gui_ab.*, gui_export.*, gui_screen.* and gui_log.*.
// Thread rules: run_gui() runs on the main thread (GLFW, GL, ImGui, the one MultiTracker for
// all targets); the frame pipeline's decode thread and, while recording, the video queue's
// writer thread are the only other threads. One CUDA stream, the tracker's, carries NVDEC's
// output, the kernels and the interop sinks' map/convert/unmap.
#pragma once

#include <string>
#include <vector>

#include "app/io/camera_modes.h"
#include "app/io/frame_source.h"
#include "app/track/tracker.h"
#include "render/colormap.h"
#include "render/video_view.h"
#include "render/window.h"

namespace corrtrack {

struct GuiOptions {
    std::string input;        // file, pattern, folder, /dev/videoN or URL
    std::vector<BoxF> boxes;  // targets on the first frame (may be empty: drag one)
    TrackerOptions tracker;
    WindowOptions window;
    double read_timeout_s = 5.0;
    CameraRequest camera;  // --camera-size/-fps/-format: a camera's mode unless the
                           // Input panel picks another
    // auto/nvdec: NVDEC when the tracker runs on the GPU and the codec allows; frames then go
    // to GL through CUDA-GL interop where the GL context permits, with no host copy.
    DecodeMode decode = DecodeMode::kAuto;
    // Screenshot mode: process `frames` frames at full speed, draw the UI once and write the
    // window to `screenshot` (PNG), then exit.
    std::string screenshot;
    long frames = 1;
    bool print_box = false;  // stdout: frame, letterbox, boxes, search windows
    // --stats PATH (screenshot mode): every frame drawn as the interactive loop does, timed;
    // the summary as JSON in PATH ("-": stdout). gui_stats.h.
    std::string stats;
    std::string csv;  // per-frame rows as they are tracked (track's columns)
    std::string log;  // UI events, one JSON object per line
    bool pause_at_start = false;
    bool max_speed = false;
    HeatmapMode heatmap = HeatmapMode::kOverlay;
    float blend = 0.45f;
    Colormap colormap = Colormap::kTurbo;
    // --ab A,B: the A/B panel open and comparing these kernels from the first frame;
    // --ab-full SIDE: on the whole frame with a SIDE x SIDE template (0: the search window).
    std::string ab_a, ab_b;
    int ab_full_side = 0;
};

// Returns the process exit code: 0, or kExitInput when the window cannot open or, in
// screenshot mode, the input cannot be read or the PNG written.
int run_gui(const GuiOptions& options);

}  // namespace corrtrack
