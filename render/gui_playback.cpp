// Opening inputs, stepping, seeking and pacing; see gui_playback.h.
#include "render/gui_playback.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cstdio>

namespace corrtrack {

Playback::Playback(const GuiOptions& options, MultiTracker& tracker, GuiModel& model, EventLog& log, StatusLine& status)
    : options_(options), tracker_(tracker), model_(model), log_(log), status_(status), camera_request_(options.camera) {
    model_.cameras = camera_paths();
    list_camera_modes();
}

void Playback::close() {
    session_.reset();
    has_frame_ = false;
}

std::unique_ptr<FrameSession> Playback::start_session(const std::string& input, std::string* error) {
    // The session matches the decoder to the tracker (see FrameSession::open): NVDEC decodes
    // on the tracker's stream, so the tracker and the frame sink read finished pixels with no
    // host wait. Frames stay on the device (no host luma, no host RGB: the decoder would
    // download every frame) only where every reader can take them there: a GPU tracker and a
    // frame sink with CUDA-GL interop; when NVDEC declines the input, the session re-opens it
    // with host RGB. auto means NVDEC for a GPU tracker only.
    SessionOptions so;
    so.source.input = input;
    so.source.read_timeout_s = options_.read_timeout_s;
    if (input.rfind("/dev/video", 0) == 0) {
        so.source.camera_size = camera_request_.size;
        so.source.camera_fps = camera_request_.fps;
        so.source.camera_format = camera_request_.format;
    }
    so.decode = options_.decode;
    so.want_rgb = true;  // the frame sink's texture upload path
    so.rgb_consumer_takes_device = sink_->takes_device_frames();
    // Live sources: three slots keep latency at one frame; files: four ride out decode jitter.
    so.slots = 4;
    so.live_slots = 3;
    auto session = FrameSession::open(tracker_, so, error);
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

bool Playback::open(const std::string& input, const std::vector<BoxF>& start_boxes, std::string* error) {
    auto session = start_session(input, error);
    if (!session) {
        log_.log({{"event", "open"}, {"input", input}, {"ok", false}, {"error", *error}});
        return false;
    }
    if (!model_.decode_note.empty()) std::fprintf(stderr, "corrtrack: %s\n", model_.decode_note.c_str());
    session_ = std::move(session);
    input_ = input;
    start_boxes_ = start_boxes;
    has_frame_ = frame_dirty_ = true;
    frames_done_ = 1;
    fps_ = session_->fps() > 0 ? session_->fps() : 25.0;
    model_.input = input_;
    model_.description = session_->description();
    model_.input_error.clear();
    model_.live = session_->live();
    model_.frame_count = session_->frame_count();
    model_.ended = false;
    model_.history.clear();
    processed_at_.clear();
    log_.log({{"event", "open"},
              {"input", input_},
              {"ok", true},
              {"description", model_.description},
              {"frames", model_.frame_count},
              {"decode", model_.decode_mode},
              {"decode_note", model_.decode_note}});
    return true;
}

void Playback::rescan_cameras() { model_.cameras = camera_paths(); }

// The chosen camera's modes for the Mode combo (a few ioctls; only on a scan or a new choice).
void Playback::list_camera_modes() {
    model_.camera_modes.clear();
    model_.camera_modes_error.clear();
    model_.camera_mode_choice = 0;
    if (model_.cameras.empty()) return;
    model_.camera_choice = std::clamp(model_.camera_choice, 0, static_cast<int>(model_.cameras.size()) - 1);
    CameraDevice d = enumerate_camera(model_.cameras[static_cast<std::size_t>(model_.camera_choice)]);
    model_.camera_modes = std::move(d.modes);
    model_.camera_modes_error = d.error;
}

// "default mode" keeps --camera-* (or none).
std::string Playback::choose_camera() {
    const int k = model_.camera_mode_choice;
    camera_request_ = k > 0 && k <= static_cast<int>(model_.camera_modes.size())
                          ? request_for(model_.camera_modes[static_cast<std::size_t>(k - 1)])
                          : options_.camera;
    return model_.cameras[static_cast<std::size_t>(model_.camera_choice)];
}

bool Playback::advance() {
    if (!session_ || !session_->advance()) return false;
    frame_dirty_ = true;
    ++frames_done_;
    return true;
}

// An NVDEC frame that a CPU consumer needs (a CPU kernel picked after the input opened, the
// A/B comparison) is downloaded once, on the decoder's stream.
ImageView Playback::luma(bool device_ok) { return session_ ? session_->luma(device_ok) : no_frame_.luma_view(); }
FrameView Playback::frame_view(bool device_ok) {
    return session_ ? session_->frame_view(device_ok) : FrameView(no_frame_.luma_view());
}

void Playback::show_current_frame() {
    if (!frame_dirty_ || !has_frame_) return;
    show_frame(*sink_, current(), frame_stream_, &frame_scratch_);
    frame_dirty_ = false;
}

bool Playback::seek_to(long index) {
    if (!session_) return false;
    if (model_.live) {
        status_.set("seeking needs a file: live sources only go forward", true);
        return false;
    }
    index = std::max(0L, index);
    // FrameSource cannot seek, so a seek re-opens the input and decodes up to the frame
    // (without tracking): cheap for short clips, linear in the position for long ones.
    std::string error;
    auto session = start_session(input_, &error);
    if (!session) {
        status_.set("seek: " + error, true);
        return false;
    }
    session_ = std::move(session);
    frames_done_ = 1;
    while (current().index < index && advance()) {}
    model_.ended = false;
    has_frame_ = frame_dirty_ = true;
    return true;
}

void Playback::re_anchor() {
    anchor_wall_ = glfwGetTime();
    anchor_pts_ = current().pts;
    next_due_ = anchor_wall_ + 1.0 / fps_ / model_.speed;
}

void Playback::change_speed(double factor) {
    model_.speed = std::clamp(model_.speed * factor, 1.0 / 16, 16.0);
    re_anchor();
}

void Playback::schedule_next() {
    if (model_.max_speed || model_.live) return;
    const double now = glfwGetTime(), interval = 1.0 / fps_ / model_.speed;
    next_due_ = anchor_wall_ + (current().pts - anchor_pts_) / model_.speed + interval;
    if (next_due_ < now - 0.25) re_anchor();  // far behind (slow kernel): stop trying to catch up
}

bool Playback::playing() const { return session_ && !model_.paused && !model_.ended; }

bool Playback::frame_due(double now) const {
    if (!playing()) return false;
    return model_.max_speed || model_.live || now >= next_due_;
}

void Playback::count_processed(double now) {
    processed_at_.push_back(now);
    while (processed_at_.size() > 2 && now - processed_at_.front() > 1.0) processed_at_.pop_front();
}

double Playback::process_fps() const {
    return processed_at_.size() >= 2 && !model_.paused
               ? (processed_at_.size() - 1) / std::max(1e-6, processed_at_.back() - processed_at_.front())
               : 0.0;
}

}  // namespace corrtrack
