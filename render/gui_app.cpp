// The GUI's main loop, in the shape of Dear ImGui's example_glfw_opengl3/main.cpp: open the
// window, then per iteration wait for input or the next frame's due time, run the shortcut
// keys, track the next frame when it is due and draw a UI frame when anything changed. The
// parts it calls are the controller's (gui_controller.h): playback, targets, A/B, export and
// the screen.
#include "render/gui_app.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "app/cli/cli_common.h"
#include "imgui.h"
#include "render/gui_controller.h"
#include "render/gui_stats.h"
#include "render/window.h"

namespace corrtrack {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

// Screenshot mode: `frames` frames at full speed, the UI drawn, the window written as PNG.
// With --stats every frame is also drawn and swapped, as the interactive loop does, and timed.
int run_screenshot(const GuiOptions& options, GuiController& app, Window& window) {
    Playback& playback = app.playback();
    const bool stats = !options.stats.empty();
    LoopStats loop;
    if (stats && playback.frames_done() > 0) {  // the first frame, tracked on open: drawn too
        const auto t0 = Clock::now();
        app.draw();
        window.poll_events();
        loop.add(0, ms_between(t0, Clock::now()));
    }
    while (playback.frames_done() < options.frames) {
        const auto t0 = Clock::now();
        if (!playback.advance()) break;
        app.track_frame();
        const auto t1 = Clock::now();
        if (stats) app.draw();
        window.poll_events();  // keeps the window responsive to the X server
        if (stats) loop.add(ms_between(t0, t1), ms_between(t1, Clock::now()));
    }
    if (playback.session() && playback.frames_done() < options.frames && !playback.session_error().empty()) {
        std::fprintf(stderr, "corrtrack gui: %s\n", playback.session_error().c_str());
        return kExitInput;
    }
    // ImGui settles its layout (item sizes, scroll extents) on the first frame it draws.
    app.draw();
    bool ok = false;
    app.draw(options.screenshot, &ok);
    if (options.print_box) app.print_state();
    if (stats && !write_stats(options.stats, loop.summary(playback.frames_done(), app.stats_fields()))) ok = false;
    return ok ? 0 : kExitInput;
}

// The interactive loop, until Q or the window is closed.
void run_loop(GuiController& app, Window& window, std::vector<std::pair<int, int>>& keys) {
    Playback& playback = app.playback();
    while (!app.quit() && !window.should_close()) {
        const double now = glfwGetTime();
        if (playback.frame_due(now) || app.redraw_pending())
            window.poll_events();
        else
            window.wait_events(playback.playing() ? std::max(1e-3, playback.next_due() - now) : 1.0);
        if (window.take_input_seen()) app.want_redraw(3);  // ImGui needs a few frames to settle
        const bool typing = ImGui::GetIO().WantTextInput;
        for (const auto& [key, mods] : keys)
            if (!typing) app.handle_key(key, mods);
        keys.clear();
        if (app.quit()) break;
        bool tracked = false;
        if (playback.frame_due(glfwGetTime())) {
            app.step_once();
            tracked = true;
        }
        if (tracked || app.redraw_pending() || glfwGetTime() - app.last_render() > 0.9) {
            app.draw();
            if (!tracked) app.redrawn();
        }
    }
    if (window.should_close()) app.log_quit();
}

}  // namespace

int run_gui(const GuiOptions& options) {
    // Teardown order, explicit: the controller's shutdown() ends the recording, the GL
    // textures, the session, the frame sink and the tracker in that order (see there) while
    // the window's GL context is still alive; then the window goes, and the GPU context, made
    // first so that every user of its streams is gone before it, goes last. The controller is
    // declared after the window, so on an early return its destructor does the same.
    const GpuContext gpu;
    std::vector<std::pair<int, int>> keys;  // shortcut keys since the last iteration
    Window window;
    GuiController app(options, window, gpu);
    if (!app.open_outputs()) return kExitInput;
    std::string error;
    if (!window.open(options.window, &error)) {
        std::fprintf(stderr, "corrtrack gui: %s\n", error.c_str());
        return kExitInput;
    }
    window.set_key_handler([&keys](int key, int mods) { keys.emplace_back(key, mods); });
    app.attach_window();

    const bool screenshot_mode = !options.screenshot.empty();
    if (!app.open_input(options.input, options.boxes, &error)) {
        if (screenshot_mode) {
            std::fprintf(stderr, "corrtrack gui: %s\n", error.c_str());
            return kExitInput;
        }
        app.input_failed(error);
    }
    int rc = 0;
    if (screenshot_mode)
        rc = run_screenshot(options, app, window);
    else
        run_loop(app, window, keys);
    app.shutdown();
    return rc;
}

}  // namespace corrtrack
