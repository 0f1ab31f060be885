// One per-frame session shared by `corrtrack track`, the end-to-end bench and the GUI: it opens
// the input with decoder settings that go with the tracker, owns the slot ring (FramePipeline)
// and, on the GPU path, the FrameUploader, and steps one frame at a time: acquire (paced to the
// timestamps when asked, late frames dropped and counted) -> copy a host frame to the device
// (GPU tracker) -> hand the tracker a luma view (device or host) -> update -> stamp the results
// with the frame's stage times (decode, upload, latency) -> release the slot to the decoder.
// Two ways to drive it: next()/track()/release() on frames the caller holds (run_track_loop
// keeps one frame of look-ahead, so frame n's copy overlaps tracking of n-1), or advance() and
// track_current() on the session's current frame, which stays valid for display and new
// targets until the next advance() (the GUI, one frame when it is due).
// The session works in its tracker's GPU context (MultiTracker::gpu()), so the two cannot
// disagree: NVDEC decodes on the tracker's stream (the compute stream) and host frames are
// copied on the context's copy stream.
// Thread rules: one thread (the tracker's) drives a session and its tracker; the pipeline's
// decode thread is the only other thread and shares only the slot ring with it.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "app/io/frame.h"
#include "app/io/frame_source.h"
#include "app/pipeline/frame_ring.h"
#include "app/pipeline/pacing_clock.h"
#include "app/track/tracker.h"

namespace corrtrack {

class FrameUploader;

// Decoder settings that go with this tracker: NVDEC (when `decode` allows; auto means NVDEC
// for a GPU tracker only, as a CPU kernel would have every NVDEC frame downloaded) on the
// tracker's CUDA stream, host luma only for a CPU tracker, and decoder surfaces for `slots`
// ring slots plus the one being refilled and one more held by the consumer.
void match_source_to_tracker(SourceOptions& so, const MultiTracker& tracker, DecodeMode decode, int slots);

struct SessionOptions {
    // input, timeouts, stop flag, reader...; the session sets decode, cuda_stream,
    // want_host_luma, want_rgb, want_yuv and held_frames itself.
    SourceOptions source;
    DecodeMode decode = DecodeMode::kAuto;
    bool want_rgb = false;  // a consumer reads Frame::rgb (texture upload, the GUI's recording)
    bool want_yuv = false;  // a consumer reads Frame::yuv (track's annotated video)
    // ...and that consumer also takes NVDEC frames on the device (the GUI's interop frame
    // sink): host RGB only when frames do not stay there. When NVDEC declines the input the
    // input is re-opened with host RGB.
    bool rgb_consumer_takes_device = false;
    int slots = 4;       // ring slots
    int live_slots = 0;  // ring slots for a live source (0: slots)
};

// How next() takes frames; advance() ignores it (the GUI paces itself).
struct SessionPacing {
    bool realtime = false;  // frame n is due at the first next() + (pts_n - pts_0); a frame more
                            // than one interval late is dropped and counted
    long max_frames = -1;   // next() ends after this many frames (-1: all)
    // Once set (a signal), next() takes no further frame. Pass the same flag as
    // SourceOptions::stop so that a blocked read gives up too.
    const std::atomic<bool>* stop = nullptr;
    // The clock frames are paced by and latency is read on (null: the steady clock). A fake
    // one needs a source that stamps Frame::decode_start from it too.
    PacingClock* clock = nullptr;
};

// A frame taken by next(): its slot stays held until release().
struct SessionFrame {
    long index = -1;  // position in the source (lost frames leave gaps)
    double pts = 0;
    Size size;
    Size decoded_size;  // differs from size when the source scaled a frame of another size
    double decode_ms = 0;
    std::chrono::steady_clock::time_point decode_start;
    // Where latency counts from: decode_start; with realtime pacing the frame's due time,
    // when a live source would have delivered it (a file is decoded ahead of it), less the
    // decode time when the frame was decoded by the time it was due.
    std::chrono::steady_clock::time_point latency_start;
    const Frame* frame = nullptr;  // the slot, until released
    int device_slot = -1;          // FrameUploader slot, or -1 (not copied: CPU path, NVDEC)
};

class FrameSession {
public:
    // Opens options.source matched to the tracker (see match_source_to_tracker). nullptr on
    // failure with a message for the user in *error. `tracker` (and so its GPU context) must
    // outlive the session.
    static std::unique_ptr<FrameSession> open(MultiTracker& tracker, const SessionOptions& options, std::string* error);
    // A source opened by the caller (tests: fake sources); only slots, live_slots and
    // source.cuda_stream of `options` apply.
    FrameSession(MultiTracker& tracker, std::unique_ptr<FrameSource> source, const SessionOptions& options);
    ~FrameSession();  // stops the decode thread
    FrameSession(const FrameSession&) = delete;
    FrameSession& operator=(const FrameSession&) = delete;

    MultiTracker& tracker() { return tracker_; }
    void set_pacing(const SessionPacing& pacing) { pacing_ = pacing; }

    // ---- frames the caller holds ----
    // Takes the next frame (waiting for its due time when realtime) and, for a GPU tracker
    // and a host frame, queues its copy to the device. False at the end of the input, at
    // max_frames, or once stop is set (before or during the wait; stopped() then says so).
    bool next(SessionFrame* frame);
    // Queues the copy to the device if the tracker is on the GPU and the frame has host luma
    // and is not copied yet; idempotent.
    void upload(SessionFrame& frame);
    // True once frame's device copy has finished: its host slot may go back (release).
    bool copied(const SessionFrame& frame) const;
    // The luma plane for the tracker: the device copy, the NVDEC plane or host memory (a CPU
    // tracker on an NVDEC-only frame gets a host download). The tracker's stream waits for the
    // copy on the device.
    FrameView tracker_view(SessionFrame& frame);
    // tracker.update() on the frame's tracker_view(), timed (track_ms). Call finish() on the
    // results next. Valid until the next call.
    const std::vector<TrackResult>& track(SessionFrame& frame);
    // Marks the end of the tracker's work on the frame's device copy and stamps `results`
    // with the frame's decode time, its copy time (added to upload_ms) and the latency from
    // decode start to now, which it returns.
    double finish(SessionFrame& frame, std::vector<TrackResult>& results);
    // Gives the host slot back to the decoder (frame.frame becomes null); the device copy, if
    // any, stays usable until the uploader's ring comes round to it.
    void release(SessionFrame& frame);

    // ---- the current frame (pull one frame when it is due) ----
    // Takes the next frame without pacing or copying and makes it the current one, releasing
    // the previous one; false at the end of the input (the previous frame stays current).
    bool advance();
    bool has_frame() const { return current_.frame != nullptr; }
    // The current frame (an empty frame before the first advance()).
    const Frame& frame() const { return current_.frame ? *current_.frame : empty_; }
    // The current frame's luma for a consumer: the device plane where `device_ok` and there is
    // no host copy, else host memory (an NVDEC plane is downloaded once, on the decoder's
    // stream).
    ImageView luma(bool device_ok);
    // The same with the chroma planes where the frame has host YUV (a CPU tracker's colour
    // cue): what tracker_view() gives for the current frame.
    FrameView frame_view(bool device_ok);
    // Tracks the current frame (copied to the device first on the GPU path) and stamps the
    // results as finish() does. Valid until the next call.
    const std::vector<TrackResult>& track_current();

    // ---- the input ----
    FramePipeline& pipeline() { return *pipeline_; }
    const FramePipeline& pipeline() const { return *pipeline_; }
    const std::string& decode_mode() const { return decode_mode_; }  // "nvdec" or "sw"
    const std::string& decode_note() const { return decode_note_; }
    Stream stream() const { return stream_; }  // the stream the decoder works on
    const std::string& error() const { return pipeline_->error(); }
    long dropped() const { return pipeline_->dropped(); }  // live source frames the ring dropped
    bool live() const { return pipeline_->live(); }
    Size size() const { return pipeline_->size(); }
    double fps() const { return pipeline_->fps(); }
    long frame_count() const { return pipeline_->frame_count(); }
    std::string description() const { return pipeline_->description(); }
    void stop() { pipeline_->stop(); }

    // ---- counts ----
    long taken() const { return taken_; }            // frames next() returned
    long late_drops() const { return late_drops_; }  // frames realtime pacing dropped
    bool stopped() const { return stopped_; }        // the stop flag ended next()
    double track_ms() const { return track_ms_; }    // host time inside tracker updates

private:
    FrameSession(MultiTracker& tracker, const SessionOptions& options);
    void start(std::unique_ptr<FrameSource> source);
    static SessionFrame describe(const Frame* f);
    ImageView host_luma_of(const Frame& f, bool* ready);
    // An NVDEC frame (device planes, NV12) for a GPU tracker whose colour cue reads host
    // planes: the device luma with the host luma and chroma. Once per frame, on the decoder's
    // stream (one wait); frames without NV12 chroma give the device luma alone.
    FrameView with_host_colour(const Frame& f);
    bool wants_host_colour(const Frame& f) const {
        return tracker_.on_gpu() && f.on_device() && !f.has_host_luma() && f.device.uv && tracker_.wants_host_colour();
    }

    MultiTracker& tracker_;
    SessionOptions options_;
    SessionPacing pacing_;
    std::unique_ptr<FramePipeline> pipeline_;
    std::unique_ptr<FrameUploader> uploader_;  // made with the first copy (GPU path only)
    std::string decode_mode_ = "sw", decode_note_;
    Stream stream_ = nullptr;
    std::vector<TrackResult> results_;

    SessionFrame current_;
    Frame empty_;
    HostBuffer host_luma_;  // a device plane downloaded for a CPU consumer
    bool host_luma_ready_ = false;
    // An NVDEC frame's planes on the host for a GPU tracker's colour cue (with_host_colour):
    // Y, U, V packed as yuv420_bytes, the interleaved UV as downloaded, and whose they are.
    HostBuffer colour_planes_, colour_uv_;
    const Frame* colour_frame_ = nullptr;
    long colour_index_ = -1;

    long taken_ = 0, late_drops_ = 0;
    bool stopped_ = false;
    bool paced_ = false;
    std::chrono::steady_clock::time_point pace_start_;
    double first_pts_ = -1;
    double track_ms_ = 0;
};

}  // namespace corrtrack
