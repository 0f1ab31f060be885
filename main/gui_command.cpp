// `corrtrack gui [INPUT]`: the desktop GUI (render/), with the bundled sample when no input is
// given, and a screenshot mode (--screenshot out.png --frames N) for scripts and tests.
// Built only with the GUI (CORRTRACK_HAVE_GUI), into the corrtrack executable (main/): app/
// never includes render/.
#include <cstdio>

#include "main/gui_command.h"

#include "app/cli/cli_common.h"
#include "app/util/assets.h"
#include "render/gui_app.h"

namespace corrtrack {
namespace {

struct GuiArgs {
    std::string input;
    std::vector<std::string> boxes;
    std::string box_file;
    std::string window = "1280x720";
    std::string heatmap = "overlay";
    std::string colormap = "turbo";
    bool vsync = false;
    std::string ab;
    GuiOptions gui;
};

// Boxes as `corrtrack track` takes them: --box, else --box-file, else INPUT's .box neighbour.
bool collect_boxes(const GuiArgs& a, std::vector<BoxF>* boxes, std::string* error) {
    if (!parse_boxes(a.boxes, boxes, error)) return false;
    const std::string file = box_file_to_read(a.box_file, a.gui.input, !boxes->empty());
    return file.empty() || read_box_file(file, boxes, error);
}

int run_gui_command(GuiArgs& a) {
    GuiOptions& g = a.gui;
    g.input = a.input.empty() ? find_asset("sample.mp4") : a.input;
    if (g.input.empty()) {
        std::fprintf(stderr, "corrtrack gui: no INPUT given, and the bundled sample.mp4 is in none of %s\n",
                     asset_search_path().c_str());
        return kExitInput;
    }
    std::string error;
    if (!collect_boxes(a, &g.boxes, &error)) {
        std::fprintf(stderr, "corrtrack gui: %s\n", error.c_str());
        return kExitUsage;
    }
    int w = 0, h = 0;
    char x = 0;
    if (std::sscanf(a.window.c_str(), "%d%c%d", &w, &x, &h) != 3 || (x != 'x' && x != 'X') || w < 320 || h < 240 ||
        w > 16384 || h > 16384) {
        std::fprintf(stderr, "corrtrack gui: --window must be WIDTHxHEIGHT, at least 320x240 (got '%s')\n",
                     a.window.c_str());
        return kExitUsage;
    }
    g.window.width = w;
    g.window.height = h;
    g.window.vsync = a.vsync;
    if (a.heatmap == "overlay")
        g.heatmap = HeatmapMode::kOverlay;
    else if (a.heatmap == "pane")
        g.heatmap = HeatmapMode::kPane;
    else if (a.heatmap == "off")
        g.heatmap = HeatmapMode::kOff;
    else {
        std::fprintf(stderr, "corrtrack gui: --heatmap must be overlay, pane or off\n");
        return kExitUsage;
    }
    bool known = false;
    for (Colormap c : kColormaps)
        if (a.colormap == to_string(c)) {
            g.colormap = c;
            known = true;
        }
    if (!known) {
        std::fprintf(stderr, "corrtrack gui: --colormap must be turbo, grey or viridis\n");
        return kExitUsage;
    }
    if (!g.screenshot.empty() && g.frames < 1) {
        std::fprintf(stderr, "corrtrack gui: --frames must be at least 1\n");
        return kExitUsage;
    }
    if (!g.stats.empty() && g.screenshot.empty()) {
        std::fprintf(stderr, "corrtrack gui: --stats needs --screenshot PNG and --frames N\n");
        return kExitUsage;
    }
    if (!a.ab.empty()) {
        const auto comma = a.ab.find(',');
        g.ab_a = comma == std::string::npos ? "" : a.ab.substr(0, comma);
        g.ab_b = comma == std::string::npos ? "" : a.ab.substr(comma + 1);
        for (const std::string& k : {g.ab_a, g.ab_b})
            if (std::string why; k.empty() || k == "auto" || !make_correlator(k, &why)) {
                std::fprintf(stderr, "corrtrack gui: --ab must be two available kernels, A,B (got '%s')%s%s\n",
                             a.ab.c_str(), why.empty() ? "" : ": ", why.c_str());
                return kExitUsage;
            }
    } else if (g.ab_full_side > 0) {
        std::fprintf(stderr, "corrtrack gui: --ab-full needs --ab A,B\n");
        return kExitUsage;
    }
    if (std::string why; !make_correlator(resolve_kernel_name(g.tracker.kernel), &why)) {
        std::fprintf(stderr, "corrtrack gui: %s\n", why.c_str());
        return kExitUsage;
    }
    announce_compute_path();
    return run_gui(g);
}

}  // namespace

void register_gui_command(CLI::App& root, CommandOutcome& outcome) {
    auto args = std::make_shared<GuiArgs>();
    GuiOptions& g = args->gui;
    CLI::App* cmd = root.add_subcommand("gui", "desktop GUI: live view, boxes, NCC heatmaps, kernels, timings, A/B");
    cmd->add_option("input", args->input,
                    "video file, image pattern, OTB folder, /dev/videoN or URL (default: the bundled sample)");
    cmd->add_option("--box,-b", args->boxes, "target box x,y,w,h on the first frame; repeat for more targets");
    cmd->add_option("--box-file", args->box_file,
                    "file with one x,y,w,h per line (default: INPUT with .box extension)");
    cmd->add_option("--window", args->window, "window size WIDTHxHEIGHT")->capture_default_str();
    cmd->add_flag("--vsync", args->vsync, "wait for the display's refresh on every frame (default off)");
    cmd->add_option("--heatmap", args->heatmap, "NCC heatmap: overlay (on the search window) | pane | off")
        ->capture_default_str();
    cmd->add_option("--colormap", args->colormap, "heatmap colours: turbo | grey | viridis")->capture_default_str();
    cmd->add_option("--blend", g.blend, "heatmap opacity over the search window, 0..1")
        ->check(finite_range(0.0, 1.0))
        ->capture_default_str();
    cmd->add_flag("--pause-at-start", g.pause_at_start, "open paused on the first frame");
    cmd->add_flag("--max-speed", g.max_speed, "process frames as fast as they decode instead of at their timestamps");
    cmd->add_option("--screenshot", g.screenshot, "run --frames frames, write the window to this PNG and exit");
    cmd->add_option("--frames", g.frames, "frames to track before the screenshot (the first frame counts)")
        ->check(CLI::Range(1L, kMaxFrames))
        ->capture_default_str();
    cmd->add_flag("--print-box", g.print_box,
                  "screenshot mode: print the frame, the letterbox (view x0 y0 scale) and each target's box, "
                  "search window and heatmap rectangle");
    cmd->add_option("--stats", g.stats,
                    "screenshot mode: draw every frame as the interactive loop does and write the loop's timing "
                    "(fps, frame/track/draw ms), kernel, decode and interop paths and GL strings as JSON here "
                    "(-: stdout)");
    cmd->add_option("--ab", args->ab, "A/B panel open, comparing kernels A,B from the first frame");
    cmd->add_option("--ab-full", g.ab_full_side,
                    "with --ab: compare on the whole frame with a SIDE x SIDE template (16, 32, 64 or 128) from "
                    "the selected target's centre (or the frame's), timing the kernels alone")
        ->check(CLI::IsMember({16, 32, 64, 128}));
    cmd->add_option("--csv", g.csv, "per-frame rows as they are tracked (the columns of `track --csv`)");
    cmd->add_option("--log", g.log, "UI events (open, init, kernel, step, frame, layout...) as JSON lines");
    cmd->add_option_function<std::string>(
        "--decode",
        [args](const std::string& s) {
            if (!parse_decode_mode(s, &args->gui.decode))
                throw CLI::ValidationError("--decode", "must be sw, nvdec or auto");
        },
        "sw | nvdec | auto (default auto: NVDEC when a GPU tracker runs and the codec allows; "
        "frames then reach GL through CUDA-GL interop)");
    cmd->add_option("--read-timeout", g.read_timeout_s, "seconds a camera, stream or pipe may stall before giving up")
        ->check(finite_range(0.1, kMaxReadTimeoutS))
        ->capture_default_str();
    add_camera_options(*cmd, g.camera);
    add_tracker_options(*cmd, g.tracker);
    add_no_cache_option(*cmd);
    cmd->callback([args, &outcome] { outcome.exit_code = run_gui_command(*args); });
}

}  // namespace corrtrack
