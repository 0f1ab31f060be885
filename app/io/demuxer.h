// The demuxer side of FrameSource: opens the resolved input with libavformat (image2 for
// sequences, v4l2 for cameras, socket timeouts for URLs, poll()ed descriptors for pipes and
// FIFOs, a caller's ByteReader), picks the video stream, says what the container promises
// (size, rate, frame count) and reads packets under the open and read deadlines.
// Thread rules: belongs to the thread that owns the FrameSource; not movable (libav and the
// descriptor reader keep pointers to it).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "app/io/camera_modes.h"
#include "app/io/frame_source.h"
#include "app/io/input_path.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
}

namespace corrtrack {

// Deadline checked by libav's blocking I/O through AVIOInterruptCB.
struct Deadline {
    using Clock = std::chrono::steady_clock;
    Clock::time_point at = Clock::time_point::max();
    bool expired = false;
    const std::atomic<bool>* stop = nullptr;  // SourceOptions::stop
    bool interrupted = false;

    void arm(double seconds);        // 0: no deadline
    static int check(void* opaque);  // the AVIOInterruptCB
};

// "%.4g": rates and timeouts in messages.
std::string format_fps(double fps);

class Demuxer {
public:
    Demuxer() = default;
    Demuxer(const Demuxer&) = delete;
    Demuxer& operator=(const Demuxer&) = delete;

    // Opens the input and finds its video stream; false with a message for the user.
    bool open(const SourceOptions& options, const ResolvedInput& input, std::string* error);

    const std::string& name() const { return name_; }  // as given (URLs redacted)
    const std::string& what() const { return what_; }  // "'clip.mp4'", "camera '/dev/video0'"
    const ResolvedInput& input() const { return input_; }
    bool live() const { return live_; }  // cameras and URLs
    const AVStream* stream() const { return stream_; }
    int stream_index() const { return stream_->index; }
    const AVCodec* codec() const { return codec_; }  // the stream's software decoder

    // What the container says, settled by open().
    Size size() const { return size_; }
    double fps() const { return fps_; }
    long frame_count() const { return frame_count_; }
    long declared_frames() const { return declared_frames_; }  // -1: no promise
    bool duration_count() const { return duration_count_; }    // declared from duration x fps
    // Frames by which the packets read may fall short of declared_frames() and still be whole:
    // 1 for a duration x fps count that is not a whole number (its rounding), else 0.
    long declared_slack() const { return declared_slack_; }
    int64_t start_time() const { return start_time_; }  // AV_NOPTS_VALUE for live
    long sequence_start() const { return sequence_start_; }
    long sequence_beyond_gap() const { return sequence_beyond_gap_; }
    double read_timeout_s() const { return read_timeout_s_; }
    const std::string& description() const { return description_; }

    // Starts the read timeout for the next frame.
    void arm_read_deadline() { deadline_.arm(read_timeout_s_); }
    // av_read_frame: 0, AVERROR(EAGAIN) (a non-blocking camera has nothing yet), or an error.
    int read_packet(AVPacket* pkt) { return av_read_frame(format_.get(), pkt); }
    // Image sequences: the next packet is image `offset` (0: the first image); false if image2
    // cannot go there.
    bool skip_to_image(long offset);
    // The file name of image `offset` of a sequence ("00004.png").
    std::string image_name(long offset) const;

    // After AVERROR(EAGAIN): sleeps a moment (kAgain), or says why to stop waiting.
    enum class Wait { kAgain, kStopped, kStalled };
    Wait wait_for_frame();
    std::string stalled_message() const;  // for kStalled

    bool stop_requested() const { return deadline_.stop && deadline_.stop->load(); }
    bool interrupted() const { return deadline_.interrupted || stop_requested(); }
    // Whether a failed read_packet was the input going quiet or away (deadline, stop, the
    // byte reader) rather than the demuxer's own end or error.
    bool input_failed(int ret) const;
    // The message and reason for such a failure; `what` completes "'name' ...".
    std::pair<std::string, EndReason> io_failure(const std::string& what) const;

private:
    struct FormatCloser {
        void operator()(AVFormatContext* c) const { avformat_close_input(&c); }
    };
    struct AvioFreer {
        void operator()(AVIOContext* c) const {
            av_freep(&c->buffer);
            avio_context_free(&c);
        }
    };
    using Dictionary = std::unique_ptr<AVDictionary*, void (*)(AVDictionary**)>;

    bool set_input_options(const SourceOptions& options, AVDictionary** opts, const AVInputFormat** format,
                           std::string* error);
    bool attach_reader(const SourceOptions& options, AVFormatContext* fc, AVDictionary** opts, std::string* error);
    std::string open_failure(int ret, bool opening, double open_timeout_s) const;
    bool find_video_stream(std::string* error);
    std::string camera_open_reason(int ret) const;
    static CameraRequest camera_request(const SourceOptions& options);
    bool check_camera_mode(const SourceOptions& options, std::string* error);
    void read_stream_facts(const SourceOptions& options);

    ResolvedInput input_;
    std::string name_, what_;
    bool live_ = false;
    double read_timeout_s_ = 0;
    Deadline deadline_;
    // Custom input (SourceOptions::reader, or a pipe/FIFO): declared before format_ so that it
    // outlives the format context that reads through it.
    std::shared_ptr<ByteReader> reader_;
    std::unique_ptr<AVIOContext, AvioFreer> avio_;
    std::unique_ptr<AVFormatContext, FormatCloser> format_;
    AVStream* stream_ = nullptr;
    const AVCodec* codec_ = nullptr;

    Size size_;
    double fps_ = 0;
    long frame_count_ = -1;
    long declared_frames_ = -1;  // what the container promises, for the truncation check
    bool duration_count_ = false;
    long declared_slack_ = 0;
    int64_t start_time_ = AV_NOPTS_VALUE;
    long sequence_start_ = 0;
    long sequence_beyond_gap_ = 0;  // images after a missing number, which image2 skips
    std::string description_;
};

}  // namespace corrtrack
