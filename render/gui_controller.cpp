// The controller's glue between playback, targets, A/B, export and the screen; see
// gui_controller.h.
#include "render/gui_controller.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <chrono>
#include <cstdio>
#include <exception>

#include "app/io/box_file.h"
#include "app/util/stats.h"
#include "corrtrack/correlator.h"
#include "render/frame_sink_cuda.h"
#include "render/screenshot.h"

namespace corrtrack {
namespace {

using Clock = std::chrono::steady_clock;

// The input's default boxes (see default_box_file); none when there is no readable file.
std::vector<BoxF> default_boxes(const std::string& input) {
    std::vector<BoxF> boxes;
    std::string error;
    const std::string file = default_box_file(input);
    if (!file.empty() && !read_box_file(file, &boxes, &error)) boxes.clear();
    return boxes;
}

GuiModel initial_model(const GuiOptions& o, const GpuContext& gpu) {
    GuiModel m;
    m.tracker = o.tracker;
    m.kernel = resolve_kernel_name(o.tracker.kernel);  // "auto" without a GPU is cpu_fast
    m.kernel_running = resolve_kernel_name(o.tracker.kernel);
    m.vsync = o.window.vsync;
    m.paused = o.pause_at_start;
    m.max_speed = o.max_speed;
    m.view.heatmap = o.heatmap;
    m.view.blend = o.blend;
    m.heat.colormap = o.colormap;
    m.path_edit = o.input;
    m.gpu = gpu.available() ? cuda_device_description() : "none, CPU path";
    if (!o.ab_a.empty()) {
        m.ab.enabled = m.ab.open_panel = true;
        m.ab.a = o.ab_a;
        m.ab.b = o.ab_b;
        m.ab.full_frame = o.ab_full_side > 0;
        if (m.ab.full_frame) m.ab.templ_side = o.ab_full_side;
    }
    return m;
}

// set_kernel and set_options keep the tracker's stream.
std::unique_ptr<MultiTracker> make_tracker(const GuiOptions& o, const std::string& kernel, const GpuContext& gpu) {
    TrackerOptions to = o.tracker;
    to.kernel = kernel;
    to.keep_maps = true;
    to.keep_device_maps = true;  // the interop heatmap reads the map on the device
    auto tracker = std::make_unique<MultiTracker>(to, gpu);
    if (std::string error; !tracker->set_kernel(kernel, &error))
        std::fprintf(stderr, "corrtrack gui: %s\n", error.c_str());
    return tracker;
}

}  // namespace

GuiController::GuiController(const GuiOptions& options, Window& window, const GpuContext& gpu)
    : opt_(options),
      window_(window),
      gpu_(gpu),
      model_(initial_model(opt_, gpu_)),
      tracker_(make_tracker(opt_, model_.kernel, gpu_)),
      playback_(opt_, *tracker_, model_, log_, status_),
      targets_(*tracker_, log_, status_),
      ab_(model_.ab, gpu_),
      export_(model_, log_) {}

// Teardown, in this order because of what each part holds:
// 1. export: the recording's writer thread encodes what is queued and is joined; --csv completed;
// 2. the targets' and A/B's heatmap textures (and with a GPU their CUDA-GL registrations),
//    while the window's GL context is current;
// 3. the session: its decode thread joined and the NVDEC surfaces, made on the tracker's
//    stream, returned: before the tracker;
// 4. the frame sink's texture and CUDA-GL registration, while the GL context lives;
// 5. the tracker: its device buffers, after its queued work;
// 6. the event log.
// The window (GL context, ImGui, GLFW) belongs to the main loop and goes after this returns;
// the GPU context (both streams) after the window, last: run_gui() made it first. A/B's
// matchers stay until the members go; each waits for its own work on the context's stream.
void GuiController::shutdown() {
    if (shut_down_) return;
    shut_down_ = true;
    export_.close();
    targets_.release();
    ab_.release();
    playback_.close();
    frame_sink_.reset();
    tracker_.reset();
    log_.close();
}

bool GuiController::open_outputs() {
    std::string error;
    if (!opt_.log.empty() && !log_.open(opt_.log)) {
        std::fprintf(stderr, "corrtrack gui: cannot write the log '%s'\n", opt_.log.c_str());
        return false;
    }
    if (!opt_.csv.empty() && !export_.open_csv(opt_.csv, &error)) {
        std::fprintf(stderr, "corrtrack gui: %s\n", error.c_str());
        return false;
    }
    return true;
}

void GuiController::attach_window() {
    model_.gl_renderer = window_.gl_renderer();
    frame_sink_ = make_frame_sink();  // probes CUDA-GL interop with this window's context
    playback_.set_frame_sink(frame_sink_.get());
    // Which GL the window got decides whether interop can work: say it where it is measured.
    if (!opt_.stats.empty())
        std::fprintf(stderr, "corrtrack gui: GL vendor '%s', renderer '%s', version '%s'; CUDA-GL interop %s\n",
                     window_.gl_vendor().c_str(), model_.gl_renderer.c_str(), window_.gl_version().c_str(),
                     frame_sink_->takes_device_frames() ? "on" : "off");
}

// ---- inputs and frames ----

bool GuiController::open_input(const std::string& input, const std::vector<BoxF>& start_boxes, std::string* error) {
    if (!playback_.open(input, start_boxes, error)) return false;
    export_.input_opened(playback_.current().size());
    targets_.reset(model_.tracker);
    sample_pending_ = false;
    for (const BoxF& b : playback_.start_boxes()) targets_.add(tracker_frame(), playback_.current().index, b);
    // The first frame's rows, as `corrtrack track` writes them: the given boxes, score 1.
    record_frame();
    playback_.re_anchor();
    redraw_ = 2;
    return true;
}

void GuiController::input_failed(const std::string& error) {
    model_.input_error = error;
    status_.set(error, true);
}

void GuiController::track_frame() {
    if (sample_pending_) model_.history.push(sample_);  // not shown (screenshot mode): render 0
    StageTimes sum;
    try {
        // The session copies a host frame to the device first on the GPU path and stamps the
        // decode and upload times.
        sum = targets_.take_results(playback_.session()->track_current());
    } catch (const std::exception& e) {
        // A kernel that refuses a shape throws; stop here so the user can pick another.
        status_.set(std::string("tracking: ") + e.what(), true);
        model_.paused = true;
    }
    sample_ = {static_cast<float>(playback_.current().decode_ms), static_cast<float>(sum.upload_ms),
               static_cast<float>(sum.correlate_ms), static_cast<float>(sum.peak_ms), 0.0f};
    sample_pending_ = true;
    ab_.run(targets_.selected(), *tracker_, [this] { return playback_.luma(false); });
    record_frame();
    playback_.count_processed(glfwGetTime());
}

void GuiController::record_frame() {
    const Frame& f = playback_.current();
    const std::size_t first = targets_.record(f);
    export_.rows_added(targets_.history(), first, f.index, model_.kernel_running);
    if (!export_.recording()) return;
    // Frames that never had host RGB (NVDEC through interop) are read back from the frame
    // texture, so it must show this frame.
    if (f.rgb.empty()) playback_.show_current_frame();
    targets_.annotated(&shown_);
    export_.record(f, *frame_sink_, shown_);
}

void GuiController::step_once() {
    if (!playback_.advance()) {
        on_end_of_input();
        return;
    }
    track_frame();
    playback_.schedule_next();
}

void GuiController::on_end_of_input() {
    const std::string error = playback_.session_error();
    if (error.empty() && model_.loop && !model_.live) {
        log_.log({{"event", "loop"}});
        reset();
        return;
    }
    model_.ended = true;
    model_.paused = true;
    const long frame = playback_.current().index;
    if (error.empty())
        status_.set("end of input after frame " + std::to_string(frame) + "; Play or R starts again", false);
    else
        status_.set(error, true);
    log_.log({{"event", "end"}, {"frame", frame}, {"error", error}});
}

void GuiController::seek(long index) {
    const auto boxes = targets_.boxes();
    if (!playback_.seek_to(index)) return;
    // The targets restart where they were, on the frame sought.
    targets_.restart_at(tracker_frame(), boxes);
    log_.log({{"event", "seek"}, {"frame", playback_.current().index}});
    playback_.re_anchor();
}

void GuiController::reset() {
    std::string error;
    if (playback_.input().empty()) return;
    if (!open_input(playback_.input(), playback_.start_boxes(), &error)) {
        status_.set(error, true);
        return;
    }
    log_.log({{"event", "reset"}});
}

void GuiController::open_from_ui(const std::string& input) {
    if (input.empty()) {
        model_.input_error = "type a path, pattern, /dev/videoN or URL first";
        return;
    }
    std::string error;
    // The command line's boxes belong to the command line's input; others get their .box file.
    const bool same = input == opt_.input && !opt_.boxes.empty();
    if (!open_input(input, same ? opt_.boxes : default_boxes(input), &error)) {
        model_.input_error = error;
        status_.set(error, true);
        return;
    }
    model_.paused = false;
    status_.set("opened " + model_.description, false);
}

// ---- keys, kernels, settings ----

void GuiController::handle_key(int key, int) {
    switch (key) {
    case GLFW_KEY_SPACE: toggle_pause(); break;
    case GLFW_KEY_RIGHT: step(); break;
    case GLFW_KEY_LEFT: step_back(); break;
    case GLFW_KEY_EQUAL:
    case GLFW_KEY_KP_ADD: playback_.change_speed(2.0); break;
    case GLFW_KEY_MINUS:
    case GLFW_KEY_KP_SUBTRACT: playback_.change_speed(0.5); break;
    case GLFW_KEY_R: reset(); break;
    case GLFW_KEY_Q:
        quit_ = true;
        log_quit();
        break;
    default: return;
    }
    redraw_ = 2;
}

void GuiController::toggle_pause() {
    if (model_.ended) {
        reset();
        model_.paused = false;
    } else {
        model_.paused = !model_.paused;
    }
    playback_.re_anchor();
    log_.log({{"event", model_.paused ? "pause" : "play"}, {"frame", playback_.current().index}});
}

void GuiController::step() {
    model_.paused = true;
    if (!model_.ended) step_once();
    log_.log({{"event", "step"}, {"frame", playback_.current().index}});
}

void GuiController::step_back() {
    model_.paused = true;
    if (playback_.current().index > 0) seek(playback_.current().index - 1);
}

void GuiController::set_kernel(const std::string& name) {
    std::string error;
    if (!make_correlator(resolve_kernel_name(name), &error)) {
        status_.set("kernel " + name + ": " + error, true);
        log_.log({{"event", "kernel"}, {"name", name}, {"ok", false}, {"error", error}});
        return;
    }
    if (!tracker_->set_kernel(name, &error)) {
        status_.set("kernel " + name + ": " + error, true);
        return;
    }
    model_.kernel = name;
    model_.kernel_running = resolve_kernel_name(name);
    log_.log({{"event", "kernel"}, {"name", name}, {"ok", true}, {"frame", playback_.current().index}});
    status_.set("kernel " + name + " from the next frame", false);
}

void GuiController::apply_tracker_options() {
    TrackerOptions o = model_.tracker;
    o.keep_maps = true;
    o.keep_device_maps = true;
    tracker_->set_options(o);
    targets_.reinit_all(tracker_frame());
    log_.log({{"event", "apply_tracker"}, {"frame", playback_.current().index}});
    status_.set("tracker settings applied; targets re-initialised on this frame", false);
}

void GuiController::on_gesture(const ViewGesture& g) {
    const long frame = playback_.current().index;
    switch (g.kind) {
    case ViewGesture::kSelect: targets_.select(g.target); break;
    case ViewGesture::kAdd: targets_.add(tracker_frame(), frame, g.box); break;
    case ViewGesture::kReselect: targets_.reselect(tracker_frame(), frame, g.box); break;
    case ViewGesture::kDrop:
        status_.set("target #" + std::to_string(g.target) + " dropped", false);
        targets_.drop(g.target);
        break;
    }
}

// ---- drawing ----

void GuiController::sync_model() {
    const FrameSession* session = playback_.session();
    model_.has_frame = playback_.has_frame();
    model_.frame_index = playback_.current().index;
    model_.pts = playback_.current().pts;
    model_.targets = targets_.size();
    model_.dropped = session ? session->dropped() : 0;
    model_.frame_path = frame_sink_->texture() ? frame_sink_->path() : "";
    model_.recording = export_.recording();
    model_.history_rows = static_cast<long>(targets_.history().size());
    model_.process_fps = playback_.process_fps();
    model_.ab.heat_a = ab_.heat(0);
    model_.ab.heat_b = ab_.heat(1);
}

void GuiController::draw(const std::string& capture_png, bool* capture_ok) {
    const auto t_upload = Clock::now();
    // Everything below is queued on the tracker's stream (the decoder's too): the interop
    // sinks map, convert and unmap there, and GL draws after each unmap without a host wait.
    playback_.show_current_frame();
    const Stream stream = tracker_->stream() ? tracker_->stream() : playback_.stream();
    targets_.upload_heatmaps(model_.heat, stream);
    ab_.upload_heatmaps(model_.heat, stream);
    const double gl_upload_ms = ms_since(t_upload);

    const auto t_render = Clock::now();
    sync_model();
    window_.begin_frame();
    GuiActions actions;
    screen_.draw(
        model_, playback_.current(), playback_.has_frame(), targets_, *frame_sink_, status_,
        [this](const ViewGesture& g) { on_gesture(g); }, &actions);
    window_.render();
    const double render_ms = ms_since(t_render);
    if (!capture_png.empty()) {
        std::string error;
        const bool ok = save_back_buffer_png(capture_png, window_.framebuffer_size(), &error);
        if (capture_ok) *capture_ok = ok;
        if (!ok) std::fprintf(stderr, "corrtrack gui: %s\n", error.c_str());
    }
    window_.swap();
    last_render_ = glfwGetTime();
    if (sample_pending_) {
        sample_[StageHistory::kUpload] += static_cast<float>(gl_upload_ms);
        sample_[StageHistory::kRender] = static_cast<float>(render_ms);
        model_.history.push(sample_);
        sample_pending_ = false;
    }
    screen_.log_layout(log_, model_, playback_.current().size());
    apply(actions);
}

void GuiController::apply(const GuiActions& a) {
    if (a.open_path) {
        playback_.use_command_line_camera_mode();  // a /dev/videoN typed in opens in the command line's mode
        open_from_ui(model_.path_edit);
    }
    if (a.open_camera && !model_.cameras.empty()) open_from_ui(playback_.choose_camera());
    if (a.rescan_cameras) playback_.rescan_cameras();
    if (a.rescan_cameras || a.camera_chosen) playback_.list_camera_modes();
    if (a.toggle_pause) toggle_pause();
    if (a.step) step();
    if (a.step_back) step_back();
    if (a.reset) reset();
    if (a.seek >= 0) seek(a.seek);
    if (a.speed_factor != 1.0) playback_.change_speed(a.speed_factor);
    if (a.pacing_changed) playback_.re_anchor();
    if (!a.kernel.empty() && a.kernel != model_.kernel) set_kernel(a.kernel);
    if (a.apply_tracker) apply_tracker_options();
    if (a.heat_style_changed) {
        targets_.restyle_heatmaps();
        ab_.restyle();
    }
    if (a.vsync_changed) window_.set_vsync(model_.vsync);
    if (a.ab_changed) {
        ab_.kernels_changed();
        // Show a result without waiting for a frame.
        if (model_.ab.enabled && playback_.has_frame())
            ab_.run(targets_.selected(), *tracker_, [this] { return playback_.luma(false); });
    }
    if (a.save_output >= 0)
        export_.save(output_table()[static_cast<std::size_t>(a.save_output)], targets_.history(), playback_.input(),
                     model_.kernel_running);
    if (a.toggle_recording)
        export_.toggle_recording(playback_.has_frame(), playback_.fps(), playback_.current().size());
    if (a.save_png) {
        bool ok = false;
        const std::string path = model_.png_path;
        draw(path, &ok);
        export_.screenshot_saved(path, ok);
    }
    const bool any = a.open_path || a.open_camera || a.rescan_cameras || a.camera_chosen || a.toggle_pause || a.step ||
                     a.step_back || a.reset || a.seek >= 0 || a.speed_factor != 1.0 || !a.kernel.empty() ||
                     a.apply_tracker || a.heat_style_changed || a.ab_changed || a.save_output >= 0 ||
                     a.toggle_recording;
    if (any) want_redraw(2);
}

void GuiController::print_state() const {
    const Size fb = window_.framebuffer_size();
    const Letterbox& lb = screen_.letterbox();
    const ImVec2 pp = screen_.panel_pos(), ps = screen_.panel_size();
    std::printf("frame %ld\n", playback_.current().index);
    std::printf("window %d %d\n", fb.width, fb.height);
    std::printf("view %.3f %.3f %.6f\n", lb.x0, lb.y0, lb.scale);
    std::printf("panel %.0f %.0f %.0f %.0f\n", pp.x, pp.y, ps.x, ps.y);
    std::printf("decode %s\n", model_.decode_mode.c_str());
    std::printf("frames_to_gl %s\n", frame_sink_->path());
    for (const GuiTarget& t : targets_.all()) {
        const BoxF& b = t.result.box;
        std::printf("target %d box %.3f %.3f %.3f %.3f score %.4f lost %d\n", t.id, b.x, b.y, b.width, b.height,
                    t.result.score, t.result.lost ? 1 : 0);
        if (!t.updated) continue;
        const BoxF s = tracker_->last_map_region(t.tid);
        const BoxF h = heatmap_rect(s, b, t.heat->size());
        std::printf("search %d %.3f %.3f %.3f %.3f\n", t.id, s.x, s.y, s.width, s.height);
        std::printf("heatmap %d %.3f %.3f %.3f %.3f\n", t.id, h.x, h.y, h.width, h.height);
    }
    const AbModel& ab = model_.ab;
    if (ab.enabled && ab.valid)
        std::printf(
            "ab %s %s scope %s map %d %d view %d max_diff %.6g peaks_agree %d ms %.6g %.6g ratio %.6g runs %d\n",
            ab.a.c_str(), ab.b.c_str(), ab.full_frame ? "full" : "window", ab.map_size[0], ab.map_size[1],
            ab.view_factor, ab.max_diff, ab.peaks_agree ? 1 : 0, ab.ms_a, ab.ms_b, ab.ratio, ab.samples);
    else if (ab.enabled)
        std::printf("ab error %s\n", ab.error.c_str());
    std::fflush(stdout);
}

nlohmann::json GuiController::stats_fields() const {
    const Size fb = window_.framebuffer_size();
    const Size frame = playback_.current().size();
    bool heat_interop = false;
    for (const GuiTarget& t : targets_.all()) heat_interop = heat_interop || (t.heat && t.heat->takes_device_maps());
    nlohmann::json j = {
        {"kernel", model_.kernel_running},
        {"targets", targets_.size()},
        {"decode", model_.decode_mode},
        {"decode_note", model_.decode_note},
        {"frames_to_gl", frame_sink_->path()},
        // The path the last frame took; the sink may take device frames yet get host ones.
        {"frame_interop", std::string(frame_sink_->path()).find("interop") != std::string::npos},
        {"interop_available", frame_sink_->takes_device_frames()},
        {"heatmap_interop", heat_interop},
        {"gpu", model_.gpu},
        {"gl",
         {{"vendor", window_.gl_vendor()}, {"renderer", window_.gl_renderer()}, {"version", window_.gl_version()}}},
        {"window", {fb.width, fb.height}},
        {"frame", {frame.width, frame.height}},
        {"last_frame", playback_.current().index},
    };
    const AbModel& ab = model_.ab;
    if (ab.enabled)
        j["ab"] = {{"a", ab.a},
                   {"b", ab.b},
                   {"scope", ab.full_frame ? "full" : "window"},
                   {"template", ab.full_frame ? ab.templ_side : 0},
                   {"valid", ab.valid},
                   {"error", ab.error},
                   {"ms_a", ab.ms_a},
                   {"ms_b", ab.ms_b},
                   {"ratio", ab.ratio},
                   {"max_diff", ab.max_diff},
                   {"peaks_agree", ab.peaks_agree},
                   {"runs", ab.samples},
                   {"timing", ab.timing},
                   {"map", {ab.map_size[0], ab.map_size[1]}}};
    return j;
}

}  // namespace corrtrack
