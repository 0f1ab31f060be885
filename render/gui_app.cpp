// The GUI's state and main loop. One iteration: wait for input or the next frame's due time,
// run the shortcut keys, track the next frame when it is due, draw (video view, status bar,
// panels), then carry out what the panels asked for.
#include "render/gui_app.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <exception>
#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include "app/cli/cli_common.h"
#include "app/io/annotate.h"
#include "app/io/result_writers.h"
#include "app/io/video_writer.h"
#include "app/pipeline/frame_session.h"
#include "app/util/stats.h"
#include "render/ab_compare.h"
#include "render/frame_sink.h"
#include "render/frame_sink_cuda.h"
#include "render/heatmap_sink.h"
#include "render/heatmap_sink_cuda.h"
#include "render/panels.h"
#include "render/screenshot.h"
#include "render/video_view.h"
#include "render/window.h"

namespace corrtrack {
namespace {

using Clock = std::chrono::steady_clock;

nlohmann::json box_json(const BoxF& b) {
    auto r = [](double v) { return std::round(v * 1000) / 1000; };
    return {r(b.x), r(b.y), r(b.width), r(b.height)};
}

std::vector<std::string> scan_cameras() { return camera_paths(); }

// The input's default boxes (see default_box_file); none when there is no readable file.
std::vector<BoxF> default_boxes(const std::string& input) {
    std::vector<BoxF> boxes;
    std::string error;
    const std::string file = default_box_file(input);
    if (!file.empty() && !read_box_file(file, &boxes, &error)) boxes.clear();
    return boxes;
}

Rgb to_rgb(ImU32 c) {
    return {static_cast<std::uint8_t>(c & 0xFF), static_cast<std::uint8_t>((c >> 8) & 0xFF),
            static_cast<std::uint8_t>((c >> 16) & 0xFF)};
}

// A target as the GUI sees it: its own id (kept across re-initialisations, which give the
// tracker's target a new id) and the tracker's.
struct Target {
    int id = 0;
    TargetId tid = -1;
    TrackResult result;
    bool updated = false;     // tracked since (re)init, so the tracker's last_map(i) holds a map
    bool heat_dirty = false;  // the map changed since it was last uploaded
    std::unique_ptr<HeatmapSink> heat = make_heatmap_sink();  // CUDA-GL interop with a GPU
};

class GuiApp {
public:
    explicit GuiApp(const GuiOptions& o) : opt_(o) {
        model_.tracker = o.tracker;
        model_.kernel = resolve_kernel_name(o.tracker.kernel);  // "auto" without a GPU is cpu_fast
        model_.kernel_running = resolve_kernel_name(o.tracker.kernel);
        model_.vsync = o.window.vsync;
        model_.paused = o.pause_at_start;
        model_.max_speed = o.max_speed;
        model_.view.heatmap = o.heatmap;
        model_.view.blend = o.blend;
        model_.heat.colormap = o.colormap;
        model_.path_edit = o.input;
        model_.cameras = scan_cameras();
        list_camera_modes();
        camera_request_ = o.camera;
        model_.gpu = cuda_available() ? cuda_device_description() : "none, CPU path";
        // One tracker for every target, made before any input: its stream is the one NVDEC
        // decodes on and the interop sinks map on, for as long as the app runs (set_kernel and
        // set_options keep it).
        TrackerOptions to = o.tracker;
        to.kernel = model_.kernel;
        to.keep_maps = true;
        to.keep_device_maps = true;  // the interop heatmap reads the map on the device
        tracker_ = std::make_unique<MultiTracker>(to);
        if (std::string error; !tracker_->set_kernel(model_.kernel, &error))
            std::fprintf(stderr, "corrtrack gui: %s\n", error.c_str());
    }
    ~GuiApp() {
        std::string error;
        if (video_) video_->close(&error);
        csv_.close(&error);
        if (log_) std::fclose(log_);
    }

    int run();

private:
    // Input and frames
    std::unique_ptr<FrameSession> start_session(const std::string& input, std::string* error);
    bool open_input(const std::string& input, const std::vector<BoxF>& start_boxes, std::string* error);
    void list_camera_modes();
    void open_camera();
    bool read_frame();
    void track_frame();
    void step_once();
    void on_end_of_input();
    void seek(long index);
    void reset();
    void open_from_ui(const std::string& input);
    ImageView luma_for(bool device_ok);
    const Frame& current() const { return session_ ? session_->frame() : no_frame_; }
    void show_current_frame();
    // Targets
    int index_of(int id) const;
    void add_target(const BoxF& box);
    void reselect_target(const BoxF& box);
    void drop_target(int id);
    Target* selected_target();
    void set_kernel(const std::string& name);
    void apply_tracker_options();
    void reinit_all();
    void run_ab();
    // Output
    void record_frame();
    void write_annotated();
    void toggle_recording();
    void save_csv();
    void save_json();
    void log_event(nlohmann::json ev);
    void message(const std::string& text, bool error);
    // UI
    void handle_key(int key, int mods);
    void toggle_pause();
    void step();
    void step_back();
    void change_speed(double factor);
    void re_anchor();
    bool frame_due(double now) const;
    void render(const std::string& capture_png = "", bool* capture_ok = nullptr);
    void video_area(ImVec2 pos, ImVec2 size);
    void status_bar(ImVec2 pos, ImVec2 size);
    void apply(const GuiActions& a);
    void sync_model();
    void log_layout();
    void print_state() const;

    GuiOptions opt_;
    Window window_;  // first: GL objects below must go before the context does
    GuiModel model_;
    // Before the session: the decoder works on the tracker's stream and frames hold decoder
    // surfaces, so the session must go before the stream does.
    std::unique_ptr<MultiTracker> tracker_;
    std::unique_ptr<FrameSink> frame_sink_;  // made once the window (GL context) exists
    Stream frame_stream_ = nullptr;          // the stream the session decodes on
    std::vector<std::uint8_t> frame_scratch_;

    std::string input_;
    std::vector<BoxF> start_boxes_;
    // The shared per-frame session (as `corrtrack track`'s): decoder, slot ring, device copies;
    // its current frame is the one shown and tracked.
    std::unique_ptr<FrameSession> session_;
    const Frame no_frame_;
    bool has_frame_ = false;
    bool frame_dirty_ = false;
    long frames_done_ = 0;  // frames tracked since the input was opened (the first included)
    double fps_ = 25;

    std::vector<Target> targets_;
    int next_id_ = 0;
    int selected_ = -1;

    AbCompare ab_;
    bool ab_ready_ = false, ab_dirty_ = false;
    std::unique_ptr<HeatmapSink> ab_heat_[2] = {make_heatmap_sink(), make_heatmap_sink()};

    std::vector<FrameRecord> history_;
    CsvWriter csv_;
    bool csv_open_ = false;  // --csv given
    std::unique_ptr<VideoWriter> video_;
    Size video_size_;
    std::vector<std::uint8_t> annotated_;
    std::FILE* log_ = nullptr;
    Clock::time_point t_start_ = Clock::now();

    // Pacing: frame k is due at anchor_wall_ + (pts_k - anchor_pts_) / speed.
    double anchor_wall_ = 0, anchor_pts_ = 0, next_due_ = 0;
    std::deque<double> processed_at_;  // glfw times of recent frames, for the fps figure

    // Stage sample of the last tracked frame, completed by the render that shows it.
    std::array<float, StageHistory::kStages> sample_{};
    bool sample_pending_ = false;
    double gl_upload_ms_ = 0;

    std::vector<std::pair<int, int>> keys_;
    bool quit_ = false;
    int redraw_ = 2;
    double last_render_ = -1;
    Letterbox letterbox_;
    ImVec2 panel_pos_, panel_size_;
    bool dragging_ = false, drag_add_ = false;
    ImVec2 drag_from_;
    std::string message_;
    bool message_error_ = false;
    double message_time_ = -1;
    nlohmann::json last_layout_;
    CameraRequest camera_request_;  // the mode a camera input opens in (the panel's or --camera-*)
};

// ---- input and frames ----

std::unique_ptr<FrameSession> GuiApp::start_session(const std::string& input, std::string* error) {
    // The session matches the decoder to the tracker (see FrameSession::open): NVDEC decodes
    // on the tracker's stream, so the tracker and the frame sink read finished pixels with no
    // host wait. Frames stay on the device (no host luma, no host RGB: the decoder would
    // download every frame) only where every reader can take them there: a GPU tracker and a
    // frame sink with CUDA-GL interop; when NVDEC declines the input, the session re-opens it
    // with host RGB. auto means NVDEC for a GPU tracker only.
    SessionOptions so;
    so.source.input = input;
    so.source.read_timeout_s = opt_.read_timeout_s;
    if (input.rfind("/dev/video", 0) == 0) {
        so.source.camera_size = camera_request_.size;
        so.source.camera_fps = camera_request_.fps;
        so.source.camera_format = camera_request_.format;
    }
    so.decode = opt_.decode;
    so.want_rgb = true;  // the frame sink's texture upload path
    so.rgb_consumer_takes_device = frame_sink_->takes_device_frames();
    // Live sources: three slots keep latency at one frame; files: four ride out decode jitter.
    so.slots = 4;
    so.live_slots = 3;
    auto session = FrameSession::open(*tracker_, so, error);
    if (!session) return nullptr;
    model_.decode_mode = session->decode_mode();
    model_.decode_note = session->decode_note();
    frame_stream_ = session->stream();
    if (!session->advance()) {
        *error = session->error().empty() ? "'" + input + "' has no frames" : session->error();
        return nullptr;
    }
    return session;
}

bool GuiApp::open_input(const std::string& input, const std::vector<BoxF>& start_boxes, std::string* error) {
    auto session = start_session(input, error);
    if (!session) {
        log_event({{"event", "open"}, {"input", input}, {"ok", false}, {"error", *error}});
        return false;
    }
    if (video_ && session->frame().size() != video_size_) toggle_recording();  // the encoder is sized for the old input
    if (!model_.decode_note.empty()) std::fprintf(stderr, "corrtrack: %s\n", model_.decode_note.c_str());
    session_ = std::move(session);
    input_ = input;
    start_boxes_ = start_boxes;
    has_frame_ = frame_dirty_ = true;
    frames_done_ = 1;
    fps_ = session_->fps() > 0 ? session_->fps() : 25.0;
    model_.input = input;
    model_.description = session_->description();
    model_.input_error.clear();
    model_.live = session_->live();
    model_.frame_count = session_->frame_count();
    model_.ended = false;
    model_.history.clear();
    processed_at_.clear();
    history_.clear();
    targets_.clear();
    tracker_->clear();
    TrackerOptions o = model_.tracker;
    o.keep_maps = true;
    o.keep_device_maps = true;
    tracker_->set_options(o);
    next_id_ = 0;
    selected_ = -1;
    sample_pending_ = false;
    log_event({{"event", "open"}, {"input", input}, {"ok", true}, {"description", model_.description},
               {"frames", model_.frame_count}, {"decode", model_.decode_mode}, {"decode_note", model_.decode_note}});
    for (const BoxF& b : start_boxes_) add_target(b);
    // The first frame's rows, as `corrtrack track` writes them: the given boxes, score 1.
    record_frame();
    re_anchor();
    redraw_ = 2;
    return true;
}

bool GuiApp::read_frame() {
    if (!session_ || !session_->advance()) return false;
    frame_dirty_ = true;
    ++frames_done_;
    return true;
}

// The luma plane as a consumer can read it: the device plane where `device_ok` and there is no
// host copy, else host memory. An NVDEC frame that a CPU consumer needs (a CPU kernel picked
// after the input opened, the A/B comparison) is downloaded once, on the decoder's stream.
ImageView GuiApp::luma_for(bool device_ok) {
    return session_ ? session_->luma(device_ok) : no_frame_.luma_view();
}

void GuiApp::show_current_frame() {
    if (!frame_dirty_ || !has_frame_) return;
    show_frame(*frame_sink_, current(), frame_stream_, &frame_scratch_);
    frame_dirty_ = false;
}

void GuiApp::track_frame() {
    if (sample_pending_) model_.history.push(sample_);  // not shown (screenshot mode): render 0
    StageTimes sum;
    try {
        // The session copies a host frame to the device first on the GPU path and stamps the
        // decode and upload times.
        const std::vector<TrackResult>& results = session_->track_current();
        for (std::size_t i = 0; i < targets_.size(); ++i) {
            Target& t = targets_[i];
            for (const TrackResult& r : results)
                if (r.id == t.tid) t.result = r;
            t.updated = t.heat_dirty = true;
            // The GPU path times the one pass of all targets; the CPU path each target's own.
            if (tracker_->on_gpu() && i > 0) continue;
            sum.upload_ms += t.result.times.upload_ms;
            sum.correlate_ms += t.result.times.correlate_ms;
            sum.peak_ms += t.result.times.peak_ms;
        }
    } catch (const std::exception& e) {
        // A kernel that refuses a shape throws; stop here so the user can pick another.
        message(std::string("tracking: ") + e.what(), true);
        model_.paused = true;
    }
    sample_ = {static_cast<float>(current().decode_ms), static_cast<float>(sum.upload_ms),
               static_cast<float>(sum.correlate_ms), static_cast<float>(sum.peak_ms), 0.0f};
    sample_pending_ = true;
    run_ab();
    record_frame();
    const double now = glfwGetTime();
    processed_at_.push_back(now);
    while (processed_at_.size() > 2 && now - processed_at_.front() > 1.0) processed_at_.pop_front();
}

void GuiApp::step_once() {
    if (!read_frame()) {
        on_end_of_input();
        return;
    }
    track_frame();
    if (model_.max_speed || model_.live) return;
    const double now = glfwGetTime(), interval = 1.0 / fps_ / model_.speed;
    next_due_ = anchor_wall_ + (current().pts - anchor_pts_) / model_.speed + interval;
    if (next_due_ < now - 0.25) re_anchor();  // far behind (slow kernel): stop trying to catch up
}

void GuiApp::on_end_of_input() {
    const std::string error = session_ ? session_->error() : "";
    if (error.empty() && model_.loop && !model_.live) {
        log_event({{"event", "loop"}});
        reset();
        return;
    }
    model_.ended = true;
    model_.paused = true;
    if (error.empty())
        message("end of input after frame " + std::to_string(current().index) + "; Play or R starts again", false);
    else
        message(error, true);
    log_event({{"event", "end"}, {"frame", current().index}, {"error", error}});
}

void GuiApp::seek(long index) {
    if (!session_) return;
    if (model_.live) {
        message("seeking needs a file: live sources only go forward", true);
        return;
    }
    index = std::max(0L, index);
    std::vector<std::pair<int, BoxF>> boxes;
    for (const Target& t : targets_) boxes.emplace_back(t.id, t.result.box);
    // FrameSource cannot seek, so a seek re-opens the input and decodes up to the frame
    // (without tracking): cheap for short clips, linear in the position for long ones.
    std::string error;
    auto session = start_session(input_, &error);
    if (!session) {
        message("seek: " + error, true);
        return;
    }
    session_ = std::move(session);
    frames_done_ = 1;
    while (current().index < index && read_frame()) {
    }
    model_.ended = false;
    has_frame_ = frame_dirty_ = true;
    // The targets restart where they were, on the frame sought.
    tracker_->clear();
    std::vector<Target> kept;
    for (auto& [id, box] : boxes) {
        Target t;
        t.id = id;
        t.tid = tracker_->add_target(luma_for(tracker_->on_gpu()), box, &error);
        if (t.tid < 0) {
            message("target #" + std::to_string(id) + " dropped at the seek: " + error, true);
            continue;
        }
        t.result = initial_result(t.tid, box);
        kept.push_back(std::move(t));
    }
    targets_ = std::move(kept);
    log_event({{"event", "seek"}, {"frame", current().index}});
    re_anchor();
}

void GuiApp::reset() {
    std::string error;
    if (input_.empty()) return;
    if (!open_input(input_, start_boxes_, &error)) {
        message(error, true);
        return;
    }
    log_event({{"event", "reset"}});
}

void GuiApp::open_from_ui(const std::string& input) {
    if (input.empty()) {
        model_.input_error = "type a path, pattern, /dev/videoN or URL first";
        return;
    }
    std::string error;
    // The command line's boxes belong to the command line's input; others get their .box file.
    const bool same = input == opt_.input && !opt_.boxes.empty();
    if (!open_input(input, same ? opt_.boxes : default_boxes(input), &error)) {
        model_.input_error = error;
        message(error, true);
        return;
    }
    model_.paused = false;
    message("opened " + model_.description, false);
}

// The chosen camera's modes for the Mode combo (a few ioctls; only on a scan or a new choice).
void GuiApp::list_camera_modes() {
    model_.camera_modes.clear();
    model_.camera_modes_error.clear();
    model_.camera_mode_choice = 0;
    if (model_.cameras.empty()) return;
    model_.camera_choice = std::clamp(model_.camera_choice, 0, static_cast<int>(model_.cameras.size()) - 1);
    CameraDevice d = enumerate_camera(model_.cameras[static_cast<std::size_t>(model_.camera_choice)]);
    model_.camera_modes = std::move(d.modes);
    model_.camera_modes_error = d.error;
}

// Opens the chosen camera in the chosen mode; "default mode" keeps --camera-* (or none).
void GuiApp::open_camera() {
    const int k = model_.camera_mode_choice;
    camera_request_ = k > 0 && k <= static_cast<int>(model_.camera_modes.size())
                          ? request_for(model_.camera_modes[static_cast<std::size_t>(k - 1)])
                          : opt_.camera;
    open_from_ui(model_.cameras[static_cast<std::size_t>(model_.camera_choice)]);
}

// ---- targets ----

int GuiApp::index_of(int id) const {
    for (std::size_t i = 0; i < targets_.size(); ++i)
        if (targets_[i].id == id) return static_cast<int>(i);
    return -1;
}

void GuiApp::add_target(const BoxF& box) {
    std::string error;
    const TargetId tid = tracker_->add_target(luma_for(tracker_->on_gpu()), box, &error);
    const bool ok = tid >= 0;
    log_event({{"event", "init"}, {"mode", "add"}, {"frame", current().index}, {"box", box_json(box)},
               {"ok", ok}, {"error", error}, {"target", ok ? next_id_ : -1}});
    if (!ok) {
        message("cannot track that: " + error, true);
        return;
    }
    Target t;
    t.id = next_id_++;
    t.tid = tid;
    t.result = initial_result(tid, box);
    selected_ = t.id;
    targets_.push_back(std::move(t));
}

// The new box is added first (the old target keeps tracking when it cannot be), then the old
// one removed: the target keeps its id and colour and moves to the end of the list.
void GuiApp::reselect_target(const BoxF& box) {
    Target* t = selected_target();
    if (!t) {
        add_target(box);
        return;
    }
    std::string error;
    const TargetId tid = tracker_->add_target(luma_for(tracker_->on_gpu()), box, &error);
    const bool ok = tid >= 0;
    log_event({{"event", "init"}, {"mode", "reselect"}, {"frame", current().index}, {"box", box_json(box)},
               {"ok", ok}, {"error", error}, {"target", t->id}});
    if (!ok) {
        message("cannot track that: " + error, true);
        return;
    }
    const int i = index_of(t->id);
    tracker_->remove_target(t->tid);
    Target moved = std::move(targets_[i]);
    targets_.erase(targets_.begin() + i);
    moved.tid = tid;
    moved.result = initial_result(tid, box);
    moved.updated = false;
    targets_.push_back(std::move(moved));
    message("target #" + std::to_string(targets_.back().id) + " re-initialised", false);
}

void GuiApp::drop_target(int id) {
    const int i = index_of(id);
    if (i < 0) return;
    tracker_->remove_target(targets_[i].tid);
    targets_.erase(targets_.begin() + i);
    if (selected_ == id) selected_ = targets_.empty() ? -1 : targets_.front().id;
    log_event({{"event", "drop"}, {"target", id}});
}

Target* GuiApp::selected_target() {
    for (Target& t : targets_)
        if (t.id == selected_) return &t;
    return targets_.empty() ? nullptr : &targets_.front();
}

void GuiApp::set_kernel(const std::string& name) {
    std::string error;
    if (!make_correlator(resolve_kernel_name(name), &error)) {
        message("kernel " + name + ": " + error, true);
        log_event({{"event", "kernel"}, {"name", name}, {"ok", false}, {"error", error}});
        return;
    }
    if (!tracker_->set_kernel(name, &error)) {
        message("kernel " + name + ": " + error, true);
        return;
    }
    model_.kernel = name;
    model_.kernel_running = resolve_kernel_name(name);
    log_event({{"event", "kernel"}, {"name", name}, {"ok", true}, {"frame", current().index}});
    message("kernel " + name + " from the next frame", false);
}

// Every target starts again from its current box on this frame, with the tracker's settings.
void GuiApp::reinit_all() {
    std::vector<Target> kept;
    tracker_->clear();
    for (Target& t : targets_) {
        std::string error;
        t.tid = tracker_->add_target(luma_for(tracker_->on_gpu()), t.result.box, &error);
        if (t.tid < 0) {
            message("target #" + std::to_string(t.id) + " dropped: " + error, true);
            continue;
        }
        t.result.id = t.tid;
        t.updated = false;
        kept.push_back(std::move(t));
    }
    targets_ = std::move(kept);
    if (index_of(selected_) < 0) selected_ = targets_.empty() ? -1 : targets_.front().id;
}

void GuiApp::apply_tracker_options() {
    TrackerOptions o = model_.tracker;
    o.keep_maps = true;
    o.keep_device_maps = true;
    tracker_->set_options(o);
    reinit_all();
    log_event({{"event", "apply_tracker"}, {"frame", current().index}});
    message("tracker settings applied; targets re-initialised on this frame", false);
}

void GuiApp::run_ab() {
    AbModel& ab = model_.ab;
    if (!ab.enabled) return;
    Target* t = selected_target();
    if (!t || !t->updated) {
        ab.valid = false;
        ab.error = "needs a tracked target (one frame after selecting it)";
        return;
    }
    if (!ab_ready_) {
        if (!ab_.set_kernels(ab.a, ab.b, &ab.error)) {
            ab.valid = false;
            return;
        }
        ab_ready_ = true;
    }
    ab.error.clear();
    try {
        ab.valid = ab_.run(luma_for(false), tracker_->last_map_region(t->tid), t->result.box, &ab.error);
    } catch (const std::exception& e) {
        ab.valid = false;
        ab.error = e.what();
    }
    if (!ab.valid) return;
    const Rect r = ab_.roi();
    char buf[128];
    std::snprintf(buf, sizeof buf, "target #%d: search %dx%d at (%d,%d), template %dx%d", t->id, r.width, r.height, r.x,
                  r.y, ab_.templ_size().width, ab_.templ_size().height);
    ab.problem = buf;
    ab.ms_a = ab_.median_ms(0);
    ab.ms_b = ab_.median_ms(1);
    ab.ratio = ab_.median_ratio();
    ab.samples = ab_.samples();
    ab.max_diff = ab_.max_abs_diff();
    ab.peaks_agree = ab_.peaks_agree();
    for (int i = 0; i < 2; ++i) {
        (i == 0 ? ab.peak_a : ab.peak_b)[0] = ab_.peak(i).x;
        (i == 0 ? ab.peak_a : ab.peak_b)[1] = ab_.peak(i).y;
    }
    ab_dirty_ = true;
}

// ---- output ----

void GuiApp::record_frame() {
    nlohmann::json boxes = nlohmann::json::array();
    for (const Target& t : targets_) {
        FrameRecord rec{current().index, current().pts, t.id, t.result};
        rec.result.times.decode_ms = current().decode_ms;
        history_.push_back(rec);
        if (csv_open_) csv_.write(rec);
        boxes.push_back({{"id", t.id}, {"box", box_json(t.result.box)}, {"score", t.result.score}, {"lost", t.result.lost}});
    }
    log_event({{"event", "frame"}, {"frame", current().index}, {"kernel", model_.kernel_running}, {"targets", boxes}});
    if (video_) write_annotated();
}

// The same drawing as `corrtrack track --video`, in the GUI's target colours. Frames that never
// had host RGB (NVDEC through interop) are read back from the frame texture: a host copy only
// while recording.
void GuiApp::write_annotated() {
    if (!current().rgb.empty()) {
        annotated_.assign(current().rgb.begin(), current().rgb.end());
    } else {
        show_current_frame();
        if (!read_frame_rgb(*frame_sink_, &annotated_) || frame_sink_->size() != current().size()) return;
    }
    RgbImage img{annotated_.data(), current().width, current().height, static_cast<std::size_t>(current().width) * 3};
    for (std::size_t i = 0; i < targets_.size(); ++i) {
        const Target& t = targets_[i];
        if (t.updated) {
            draw_dashed_box(img, tracker_->last_map_region(t.tid), {255, 255, 255});
            if (i == 0) draw_heatmap_inset(img, tracker_->last_map(t.tid), 8, 8, std::min(160, current().width / 4));
        }
        draw_box(img, t.result.box, to_rgb(t.result.lost ? kLostColor : target_color(t.id)), 2);
    }
    std::string error;
    if (!video_->write_rgb(annotated_.data(), img.pitch, &error)) {
        model_.export_message = "recording stopped: " + error;
        model_.export_error = true;
        video_.reset();
        return;
    }
    ++model_.recorded_frames;
}

void GuiApp::toggle_recording() {
    std::string error;
    if (video_) {
        const bool ok = video_->close(&error);
        video_.reset();
        model_.export_message = ok ? "wrote " + model_.video_path + " (" + std::to_string(model_.recorded_frames) + " frames)"
                                   : error;
        model_.export_error = !ok;
        return;
    }
    if (!has_frame_) return;
    VideoWriterOptions vo;
    vo.fps = fps_;
    video_size_ = current().size();
    video_ = VideoWriter::open(model_.video_path, video_size_, vo, &error);
    model_.recorded_frames = 0;
    model_.export_message = video_ ? "recording from the next frame" : error;
    model_.export_error = !video_;
}

void GuiApp::save_csv() {
    CsvWriter w;
    std::string error;
    bool ok = w.open(model_.csv_path, &error);
    if (ok) {
        for (const FrameRecord& r : history_) w.write(r);
        ok = w.close(&error);
    }
    model_.export_message = ok ? "wrote " + model_.csv_path : error;
    model_.export_error = !ok;
}

void GuiApp::save_json() {
    nlohmann::json rows = nlohmann::json::array();
    for (const FrameRecord& r : history_) rows.push_back(to_json(r));
    const nlohmann::json doc = {{"input", input_}, {"kernel", model_.kernel_running}, {"results", rows}};
    std::string error;
    const bool ok = write_json_file(model_.json_path, doc, &error);
    model_.export_message = ok ? "wrote " + model_.json_path : error;
    model_.export_error = !ok;
}

void GuiApp::log_event(nlohmann::json ev) {
    if (!log_) return;
    ev["t"] = std::round(std::chrono::duration<double>(Clock::now() - t_start_).count() * 1000) / 1000;
    const std::string line = ev.dump() + "\n";
    std::fputs(line.c_str(), log_);
    std::fflush(log_);  // readers (tests, scripts) follow the file while the GUI runs
}

void GuiApp::message(const std::string& text, bool error) {
    message_ = text;
    message_error_ = error;
    message_time_ = glfwGetTime();
    if (error) std::fprintf(stderr, "corrtrack gui: %s\n", text.c_str());
}

// ---- UI ----

void GuiApp::handle_key(int key, int) {
    switch (key) {
        case GLFW_KEY_SPACE: toggle_pause(); break;
        case GLFW_KEY_RIGHT: step(); break;
        case GLFW_KEY_LEFT: step_back(); break;
        case GLFW_KEY_EQUAL:
        case GLFW_KEY_KP_ADD: change_speed(2.0); break;
        case GLFW_KEY_MINUS:
        case GLFW_KEY_KP_SUBTRACT: change_speed(0.5); break;
        case GLFW_KEY_R: reset(); break;
        case GLFW_KEY_Q:
            quit_ = true;
            log_event({{"event", "quit"}});
            break;
        default: return;
    }
    redraw_ = 2;
}

void GuiApp::toggle_pause() {
    if (model_.ended) {
        reset();
        model_.paused = false;
    } else {
        model_.paused = !model_.paused;
    }
    re_anchor();
    log_event({{"event", model_.paused ? "pause" : "play"}, {"frame", current().index}});
}

void GuiApp::step() {
    model_.paused = true;
    if (!model_.ended) step_once();
    log_event({{"event", "step"}, {"frame", current().index}});
}

void GuiApp::step_back() {
    model_.paused = true;
    if (current().index > 0) seek(current().index - 1);
}

void GuiApp::change_speed(double factor) {
    model_.speed = std::clamp(model_.speed * factor, 1.0 / 16, 16.0);
    re_anchor();
}

void GuiApp::re_anchor() {
    anchor_wall_ = glfwGetTime();
    anchor_pts_ = current().pts;
    next_due_ = anchor_wall_ + 1.0 / fps_ / model_.speed;
}

bool GuiApp::frame_due(double now) const {
    if (!session_ || model_.paused || model_.ended) return false;
    return model_.max_speed || model_.live || now >= next_due_;
}

void GuiApp::sync_model() {
    model_.has_frame = has_frame_;
    model_.frame_index = current().index;
    model_.pts = current().pts;
    model_.targets = static_cast<int>(targets_.size());
    model_.dropped = session_ ? session_->dropped() : 0;
    model_.frame_path = frame_sink_->texture() ? frame_sink_->path() : "";
    model_.recording = video_ != nullptr;
    model_.history_rows = static_cast<long>(history_.size());
    model_.process_fps = processed_at_.size() >= 2 && !model_.paused
                             ? (processed_at_.size() - 1) / std::max(1e-6, processed_at_.back() - processed_at_.front())
                             : 0.0;
    model_.ab.heat_a = ab_heat_[0].get();
    model_.ab.heat_b = ab_heat_[1].get();
}

void GuiApp::video_area(ImVec2 pos, ImVec2 size) {
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
    letterbox_ = Letterbox::fit(current().size(), pos, size);
    ImGui::InvisibleButton("##canvas", size, ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
    const ImGuiIO& io = ImGui::GetIO();

    if (!has_frame_) {
        const char* text = "Open a video, image sequence or camera in the panel on the right.";
        const ImVec2 ts = ImGui::CalcTextSize(text);
        dl->AddText({pos.x + (size.x - ts.x) / 2, pos.y + (size.y - ts.y) / 2}, IM_COL32(200, 200, 200, 255), text);
        ImGui::End();
        return;
    }

    // Targets under a point, smallest first (a small box inside a big one stays reachable).
    auto hit = [&](ImVec2 p) -> Target* {
        double fx, fy;
        letterbox_.to_frame(p, &fx, &fy);
        Target* best = nullptr;
        for (Target& t : targets_) {
            const BoxF& b = t.result.box;
            if (fx >= b.x && fy >= b.y && fx <= b.x + b.width && fy <= b.y + b.height &&
                (!best || b.width * b.height < best->result.box.width * best->result.box.height))
                best = &t;
        }
        return best;
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
            if (Target* t = hit(to)) selected_ = t->id;  // a click selects
        } else {
            double x0, y0, x1, y1;
            letterbox_.to_frame(drag_from_, &x0, &y0);
            letterbox_.to_frame(to, &x1, &y1);
            const BoxF box{std::min(x0, x1), std::min(y0, y1), std::fabs(x1 - x0), std::fabs(y1 - y0)};
            if (drag_add_ || targets_.empty()) add_target(box);
            else reselect_target(box);
        }
        drag_add_ = false;
    }
    if (ImGui::IsItemHovered() && io.MouseClicked[1]) {
        if (Target* t = hit(io.MousePos)) {
            message("target #" + std::to_string(t->id) + " dropped", false);
            drop_target(t->id);
        }
    }

    std::vector<TargetOverlay> overlays;
    for (std::size_t i = 0; i < targets_.size(); ++i) {
        const Target& t = targets_[i];
        TargetOverlay o;
        o.id = t.id;
        o.box = t.result.box;
        o.lost = t.result.lost;
        o.redetected = t.result.redetected;
        o.confidence = t.result.confidence;
        o.selected = t.id == selected_ && targets_.size() > 1;
        o.score = t.result.score;
        if (t.updated) {
            o.search = tracker_->last_map_region(t.tid);
            o.heat = t.heat.get();
        }
        overlays.push_back(o);
    }
    draw_video(dl, letterbox_, *frame_sink_, overlays, model_.view);
    if (dragging_) draw_selection(dl, drag_from_, io.MousePos, drag_add_ || io.KeyShift || targets_.empty());
    if (targets_.empty() && !dragging_) {
        const char* text = "Drag a box around the target to track it";
        const ImVec2 ts = ImGui::CalcTextSize(text);
        const ImVec2 at{pos.x + (size.x - ts.x) / 2, letterbox_.y0 + 16};
        dl->AddRectFilled({at.x - 10, at.y - 6}, {at.x + ts.x + 10, at.y + ts.y + 6}, IM_COL32(0, 0, 0, 170), 4);
        dl->AddText(at, IM_COL32(255, 220, 0, 255), text);
    }
    ImGui::End();
}

void GuiApp::status_bar(ImVec2 pos, ImVec2 size) {
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
    if (model_.frame_count > 0)
        std::snprintf(frame, sizeof frame, "frame %ld/%ld", current().index, model_.frame_count);
    else
        std::snprintf(frame, sizeof frame, "frame %ld", current().index);
    if (model_.ended || model_.paused) std::snprintf(state, sizeof state, "%s", model_.ended ? "ended" : "paused");
    else if (model_.live) std::snprintf(state, sizeof state, "live, %.1f fps", model_.process_fps);
    else if (model_.max_speed) std::snprintf(state, sizeof state, "max speed, %.1f fps", model_.process_fps);
    else std::snprintf(state, sizeof state, "playing %.3gx, %.1f fps", model_.speed, model_.process_fps);
    std::snprintf(left, sizeof left, "%s   %s   %s   %d target%s", frame, state, model_.kernel_running.c_str(),
                  model_.targets, model_.targets == 1 ? "" : "s");
    ImGui::TextUnformatted(has_frame_ ? left : "no input");
    const float used = ImGui::GetItemRectMax().x - pos.x;
    const double age = glfwGetTime() - message_time_;
    if (!message_.empty() && (message_error_ ? age < 20 : age < 6)) {
        ImGui::SameLine(0, 24);
        ImGui::TextColored(message_error_ ? ImVec4(1.0f, 0.42f, 0.42f, 1) : ImVec4(1.0f, 0.86f, 0.3f, 1), "%s",
                           message_.c_str());
    } else if (has_frame_) {
        const char* help = "drag: target   shift-drag: add   right-click: drop";
        const float w = ImGui::CalcTextSize(help).x;
        if (used + w + 40 < size.x) {
            ImGui::SameLine(size.x - w - 10);
            ImGui::TextDisabled("%s", help);
        }
    }
    ImGui::End();
}

void GuiApp::render(const std::string& capture_png, bool* capture_ok) {
    const auto t_upload = Clock::now();
    // Everything below is queued on the tracker's stream (the decoder's too): the interop
    // sinks map, convert and unmap there, and GL draws after each unmap without a host wait.
    show_current_frame();
    const Stream stream = tracker_->stream() ? tracker_->stream() : frame_stream_;
    for (std::size_t i = 0; i < targets_.size(); ++i) {
        Target& t = targets_[i];
        if (t.updated && t.heat_dirty) {
            // On the GPU the interop sink colours the device map in place: no host round trip
            // (a CPU sink, without interop, takes the host copy).
            const MapView device_map = tracker_->last_device_map(t.tid);
            t.heat->upload(device_map.data && t.heat->takes_device_maps() ? device_map : tracker_->last_map(t.tid),
                           model_.heat, stream);
            t.heat_dirty = false;
        }
    }
    if (ab_dirty_) {
        for (int i = 0; i < 2; ++i) ab_heat_[i]->upload(ab_.map(i), model_.heat, stream);
        ab_dirty_ = false;
    }
    gl_upload_ms_ = ms_since(t_upload);

    const auto t_render = Clock::now();
    sync_model();
    window_.begin_frame();
    const ImVec2 ds = ImGui::GetIO().DisplaySize;
    const float panel_w = std::round(std::clamp(ds.x * 0.31f, 330.0f, 430.0f));
    const float status_h = std::round(ImGui::GetFrameHeight() + 8);
    panel_pos_ = {ds.x - panel_w, 0};
    panel_size_ = {panel_w, ds.y};
    video_area({0, 0}, {ds.x - panel_w, ds.y - status_h});
    status_bar({0, ds.y - status_h}, {ds.x - panel_w, status_h});
    GuiActions actions;
    draw_panels(model_, actions, panel_pos_, panel_size_);
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
        sample_[StageHistory::kUpload] += static_cast<float>(gl_upload_ms_);
        sample_[StageHistory::kRender] = static_cast<float>(render_ms);
        model_.history.push(sample_);
        sample_pending_ = false;
    }
    log_layout();
    apply(actions);
}

void GuiApp::apply(const GuiActions& a) {
    if (a.open_path) {
        camera_request_ = opt_.camera;  // a /dev/videoN typed in opens in the command line's mode
        open_from_ui(model_.path_edit);
    }
    if (a.open_camera && !model_.cameras.empty()) open_camera();
    if (a.rescan_cameras) model_.cameras = scan_cameras();
    if (a.rescan_cameras || a.camera_chosen) list_camera_modes();
    if (a.toggle_pause) toggle_pause();
    if (a.step) step();
    if (a.step_back) step_back();
    if (a.reset) reset();
    if (a.seek >= 0) seek(a.seek);
    if (a.speed_factor != 1.0) change_speed(a.speed_factor);
    if (a.pacing_changed) re_anchor();
    if (!a.kernel.empty() && a.kernel != model_.kernel) set_kernel(a.kernel);
    if (a.apply_tracker) apply_tracker_options();
    if (a.heat_style_changed) {
        for (Target& t : targets_) t.heat_dirty = t.updated;
        ab_dirty_ = model_.ab.valid;
    }
    if (a.vsync_changed) window_.set_vsync(model_.vsync);
    if (a.ab_changed) {
        ab_ready_ = false;
        model_.ab.valid = false;
        if (model_.ab.enabled && has_frame_) run_ab();  // show a result without waiting for a frame
    }
    if (a.save_csv) save_csv();
    if (a.save_json) save_json();
    if (a.toggle_recording) toggle_recording();
    if (a.save_png) {
        bool ok = false;
        const std::string path = model_.png_path;
        render(path, &ok);
        model_.export_message = ok ? "wrote " + path : "cannot write " + path;
        model_.export_error = !ok;
    }
    const bool any = a.open_path || a.open_camera || a.rescan_cameras || a.camera_chosen || a.toggle_pause || a.step ||
                     a.step_back || a.reset || a.seek >= 0 || a.speed_factor != 1.0 || !a.kernel.empty() ||
                     a.apply_tracker || a.heat_style_changed || a.ab_changed || a.save_csv || a.save_json || a.toggle_recording;
    if (any) redraw_ = std::max(redraw_, 2);
}

// Where things are on screen, logged whenever it changes, so scripts driving the GUI (and
// the tests) can aim the mouse without guessing the layout.
void GuiApp::log_layout() {
    if (!log_) return;
    nlohmann::json kernels = nlohmann::json::object();
    for (const auto& [name, r] : model_.kernel_buttons) kernels[name] = {r[0], r[1], r[2], r[3]};
    nlohmann::json layout = {{"view", {letterbox_.x0, letterbox_.y0, letterbox_.scale}},
                             {"frame_size", {current().width, current().height}},
                             {"panel", {panel_pos_.x, panel_pos_.y, panel_size_.x, panel_size_.y}},
                             {"kernels", kernels}};
    if (layout == last_layout_) return;
    last_layout_ = layout;
    layout["event"] = "layout";
    log_event(layout);
}

void GuiApp::print_state() const {
    const Size fb = window_.framebuffer_size();
    std::printf("frame %ld\n", current().index);
    std::printf("window %d %d\n", fb.width, fb.height);
    std::printf("view %.3f %.3f %.6f\n", letterbox_.x0, letterbox_.y0, letterbox_.scale);
    std::printf("panel %.0f %.0f %.0f %.0f\n", panel_pos_.x, panel_pos_.y, panel_size_.x, panel_size_.y);
    std::printf("decode %s\n", model_.decode_mode.c_str());
    std::printf("frames_to_gl %s\n", frame_sink_->path());
    for (std::size_t i = 0; i < targets_.size(); ++i) {
        const Target& t = targets_[i];
        const BoxF& b = t.result.box;
        std::printf("target %d box %.3f %.3f %.3f %.3f score %.4f lost %d\n", t.id, b.x, b.y, b.width, b.height,
                    t.result.score, t.result.lost ? 1 : 0);
        if (!t.updated) continue;
        const BoxF s = tracker_->last_map_region(t.tid);
        const BoxF h = heatmap_rect(s, b, t.heat->size());
        std::printf("search %d %.3f %.3f %.3f %.3f\n", t.id, s.x, s.y, s.width, s.height);
        std::printf("heatmap %d %.3f %.3f %.3f %.3f\n", t.id, h.x, h.y, h.width, h.height);
    }
    std::fflush(stdout);
}

int GuiApp::run() {
    std::string error;
    if (!opt_.log.empty() && !(log_ = std::fopen(opt_.log.c_str(), "w"))) {
        std::fprintf(stderr, "corrtrack gui: cannot write the log '%s'\n", opt_.log.c_str());
        return kExitInput;
    }
    if (!opt_.csv.empty() && !(csv_open_ = csv_.open(opt_.csv, &error))) {
        std::fprintf(stderr, "corrtrack gui: %s\n", error.c_str());
        return kExitInput;
    }
    if (!window_.open(opt_.window, &error)) {
        std::fprintf(stderr, "corrtrack gui: %s\n", error.c_str());
        return kExitInput;
    }
    window_.set_key_handler([this](int key, int mods) { keys_.emplace_back(key, mods); });
    model_.gl_renderer = window_.gl_renderer();
    frame_sink_ = make_frame_sink();  // probes CUDA-GL interop with this window's context
    const bool screenshot_mode = !opt_.screenshot.empty();

    if (!open_input(opt_.input, opt_.boxes, &error)) {
        if (screenshot_mode) {
            std::fprintf(stderr, "corrtrack gui: %s\n", error.c_str());
            return kExitInput;
        }
        model_.input_error = error;
        message(error, true);
    }

    if (screenshot_mode) {
        while (frames_done_ < opt_.frames && read_frame()) {
            track_frame();
            window_.poll_events();  // keeps the window responsive to the X server
        }
        if (session_ && frames_done_ < opt_.frames && !session_->error().empty()) {
            std::fprintf(stderr, "corrtrack gui: %s\n", session_->error().c_str());
            return kExitInput;
        }
        // ImGui settles its layout (item sizes, scroll extents) on the first frame it draws.
        render();
        bool ok = false;
        render(opt_.screenshot, &ok);
        if (opt_.print_box) print_state();
        return ok ? 0 : kExitInput;
    }

    while (!quit_ && !window_.should_close()) {
        const double now = glfwGetTime();
        if (frame_due(now) || redraw_ > 0) {
            window_.poll_events();
        } else {
            const bool playing = session_ && !model_.paused && !model_.ended;
            window_.wait_events(playing ? std::max(1e-3, next_due_ - now) : 1.0);
        }
        if (window_.take_input_seen()) redraw_ = std::max(redraw_, 3);  // ImGui needs a few frames to settle
        const bool typing = ImGui::GetIO().WantTextInput;
        for (const auto& [key, mods] : keys_)
            if (!typing) handle_key(key, mods);
        keys_.clear();
        if (quit_) break;
        bool tracked = false;
        if (frame_due(glfwGetTime())) {
            step_once();
            tracked = true;
        }
        if (tracked || redraw_ > 0 || glfwGetTime() - last_render_ > 0.9) {
            render();
            if (!tracked && redraw_ > 0) --redraw_;
        }
    }
    if (window_.should_close()) log_event({{"event", "quit"}});
    return 0;
}

}  // namespace

int run_gui(const GuiOptions& options) {
    GuiApp app(options);
    return app.run();
}

}  // namespace corrtrack
