// The GUI's playback: opening inputs (paths, cameras in a chosen mode) as a FrameSession, the
// current frame (shown and tracked), stepping to the next frame, seeking (re-open and decode
// up to a frame), the end of input, and pacing (real time at a speed, maximum speed, live).
// It owns the session; what happens to the targets on a new input or a seek is the
// controller's (gui_controller.h).
// Thread rules: main thread only; the session's decode thread is the only other thread and
// shares only the session's slot ring. The session decodes on the tracker's CUDA stream, so
// close() (or the controller's shutdown) must end it before the tracker goes.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "app/io/camera_modes.h"
#include "app/io/frame.h"
#include "app/pipeline/frame_session.h"
#include "app/track/tracker.h"
#include "render/frame_sink.h"
#include "render/gui_app.h"
#include "render/gui_log.h"
#include "render/panels.h"

namespace corrtrack {

class Playback {
public:
    Playback(const GuiOptions& options, MultiTracker& tracker, GuiModel& model, EventLog& log, StatusLine& status);

    // The window's frame sink (made once the GL context exists): it decides whether frames may
    // stay on the device, and shows them.
    void set_frame_sink(FrameSink* sink) { sink_ = sink; }
    void close();  // ends the session (decode thread, decoder surfaces)

    // Opens `input` at its first frame, replacing the current session only on success (the
    // "open" event is logged either way). `start_boxes` are kept for reset().
    bool open(const std::string& input, const std::vector<BoxF>& start_boxes, std::string* error);
    const std::string& input() const { return input_; }
    const std::vector<BoxF>& start_boxes() const { return start_boxes_; }

    // Cameras: the scan, the chosen camera's modes, the mode a camera opens in.
    void rescan_cameras();
    void list_camera_modes();
    void use_command_line_camera_mode() { camera_request_ = options_.camera; }
    // Picks the Mode combo's choice (or --camera-*) and returns the chosen camera's path.
    std::string choose_camera();

    // Frames
    bool advance();  // the next frame becomes current (false at the end or on an error)
    bool has_frame() const { return has_frame_; }
    const Frame& current() const { return session_ ? session_->frame() : no_frame_; }
    // The luma plane as a consumer can read it: the device plane where `device_ok` and there
    // is no host copy, else host memory (an NVDEC frame is then downloaded once).
    ImageView luma(bool device_ok);
    FrameView frame_view(bool device_ok);  // luma plus chroma where the frame has host YUV
    FrameSession* session() { return session_.get(); }
    std::string session_error() const { return session_ ? session_->error() : ""; }
    long frames_done() const { return frames_done_; }  // since the input opened, the first included
    double fps() const { return fps_; }
    Stream stream() const { return frame_stream_; }  // the one the session decodes on
    void show_current_frame();                       // into the frame sink, once per frame
    // Re-opens the input and decodes (without tracking) up to frame `index`; messages the
    // user and returns false when it cannot (a live source, an input that no longer opens).
    bool seek_to(long index);

    // Pacing: frame k is due at anchor + (pts_k - pts_anchor) / speed.
    void re_anchor();
    void change_speed(double factor);
    void schedule_next();  // after a frame was tracked
    bool frame_due(double now) const;
    bool playing() const;  // a session, not paused, not ended
    double next_due() const { return next_due_; }
    void count_processed(double now);  // for the fps figure
    double process_fps() const;

private:
    std::unique_ptr<FrameSession> start_session(const std::string& input, std::string* error);

    const GuiOptions& options_;
    MultiTracker& tracker_;
    GuiModel& model_;
    EventLog& log_;
    StatusLine& status_;
    FrameSink* sink_ = nullptr;
    CameraRequest camera_request_;  // the mode a camera input opens in (the panel's or --camera-*)

    std::string input_;
    std::vector<BoxF> start_boxes_;
    // The shared per-frame session (as `corrtrack track`'s): decoder, slot ring, device copies;
    // its current frame is the one shown and tracked.
    std::unique_ptr<FrameSession> session_;
    Stream frame_stream_ = nullptr;
    const Frame no_frame_;
    std::vector<std::uint8_t> frame_scratch_;
    bool has_frame_ = false;
    bool frame_dirty_ = false;
    long frames_done_ = 0;
    double fps_ = 25;

    double anchor_wall_ = 0, anchor_pts_ = 0, next_due_ = 0;
    std::deque<double> processed_at_;  // glfw times of recent frames
};

}  // namespace corrtrack
