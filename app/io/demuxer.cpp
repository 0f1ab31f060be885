// The demuxer side of FrameSource; see demuxer.h.
#include "app/io/demuxer.h"

#include "app/io/av_log.h"
#include "app/io/libav_handles.h"
#include "app/io/sequence_pattern.h"

extern "C" {
#include <libavutil/dict.h>
#include <libavutil/pixdesc.h>
}

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <thread>

namespace corrtrack {
namespace {

using Clock = Deadline::Clock;

// "HH:MM:SS.fffffffff" as Matroska's muxer writes per-track DURATION tags; -1 if absent.
double parse_duration_tag(const AVDictionary* metadata) {
    const AVDictionaryEntry* e = av_dict_get(metadata, "DURATION", nullptr, 0);
    if (!e) return -1;
    int h = 0, m = 0;
    double s = 0;
    if (std::sscanf(e->value, "%d:%d:%lf", &h, &m, &s) != 3) return -1;
    return h * 3600.0 + m * 60.0 + s;
}

std::string rational_text(double rate) {
    AVRational q = av_d2q(rate, 1001000);
    return std::to_string(q.num) + "/" + std::to_string(q.den);
}

int read_bytes(void* opaque, uint8_t* buf, int size) { return static_cast<ByteReader*>(opaque)->read(buf, size); }

int64_t seek_bytes(void* opaque, int64_t offset, int whence) {
    return static_cast<ByteReader*>(opaque)->seek(offset, whence);
}

}  // namespace

void Deadline::arm(double seconds) {
    expired = false;
    at = seconds > 0
             ? Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds))
             : Clock::time_point::max();
}

int Deadline::check(void* opaque) {
    auto* d = static_cast<Deadline*>(opaque);
    if (d->stop && d->stop->load()) {
        d->interrupted = true;
        return 1;
    }
    if (Clock::now() < d->at) return 0;
    d->expired = true;
    return 1;
}

std::string format_fps(double fps) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", fps);
    return buf;
}

bool Demuxer::open(const SourceOptions& options, const ResolvedInput& input, std::string* error) {
    // 0 means "no limit"; anything not a finite positive number is taken as that.
    auto limit = [](double t) { return std::isfinite(t) && t > 0 ? t : 0.0; };
    const double open_timeout_s = limit(options.open_timeout_s);
    read_timeout_s_ = limit(options.read_timeout_s);
    input_ = input;
    deadline_.stop = options.stop;
    live_ = input.kind == SourceKind::kCamera || input.kind == SourceKind::kUrl;
    name_ = input.kind == SourceKind::kUrl ? redact_url(options.input) : options.input;
    what_ = "'" + name_ + "'";
    init_libav_once();  // before looking up v4l2, which libavdevice registers
    clear_av_log();

    std::error_code ec;
    if (input.kind == SourceKind::kFile && std::filesystem::is_regular_file(input.url, ec) &&
        std::filesystem::file_size(input.url, ec) == 0 && !ec) {
        *error = "cannot open '" + name_ + "': the file is empty";
        return false;
    }

    AVDictionary* raw_opts = nullptr;
    Dictionary opts(&raw_opts, av_dict_free);
    const AVInputFormat* input_format = nullptr;
    if (!set_input_options(options, opts.get(), &input_format, error)) return false;

    clear_av_log();
    AVFormatContext* fc = avformat_alloc_context();
    if (!fc) {
        *error = "out of memory (avformat_alloc_context)";
        return false;
    }
    fc->interrupt_callback.callback = &Deadline::check;
    fc->interrupt_callback.opaque = &deadline_;
    // A blocking V4L2 dequeue ignores the interrupt callback; non-blocking mode returns
    // EAGAIN instead, and read() polls until its deadline.
    if (input.kind == SourceKind::kCamera) fc->flags |= AVFMT_FLAG_NONBLOCK;
    if (!attach_reader(options, fc, opts.get(), error)) {
        avformat_free_context(fc);
        return false;
    }
    deadline_.arm(open_timeout_s);
    int ret = avformat_open_input(&fc, input.url.c_str(), input_format, opts.get());
    if (ret < 0) {  // avformat_open_input freed fc
        *error = open_failure(ret, true, options.open_timeout_s);
        if (input.kind == SourceKind::kCamera && !camera_request(options).empty() && !deadline_.interrupted)
            *error = camera_refusal_message(name_, camera_request(options), camera_open_reason(ret),
                                            enumerate_camera(input.url));
        return false;
    }
    format_.reset(fc);
    ret = avformat_find_stream_info(fc, nullptr);
    if (ret < 0) {
        *error = open_failure(ret, false, options.open_timeout_s);
        return false;
    }
    if (!find_video_stream(error)) return false;
    read_stream_facts(options);
    if (input.kind == SourceKind::kCamera && !camera_request(options).empty()) return check_camera_mode(options, error);
    return true;
}

// Why the v4l2 demuxer did not open: its last log line says more than the error code
// ("Cannot find a proper format for codec 'mjpeg'").
std::string Demuxer::camera_open_reason(int ret) const {
    if (deadline_.expired) return "no answer within the open timeout";
    std::string reason = av_error_string(ret);
    return reason + log_detail(reason);
}

CameraRequest Demuxer::camera_request(const SourceOptions& options) {
    CameraRequest r;
    r.size = options.camera_size;
    r.fps = options.camera_fps;
    r.format = options.camera_format;
    return r;
}

// V4L2 drivers answer a size or rate they lack with the nearest they have, and libav falls
// back to another raw format: the user asked for a mode, so anything else is a refusal.
bool Demuxer::check_camera_mode(const SourceOptions& options, std::string* error) {
    const AVCodecParameters* par = stream_->codecpar;
    const char* pix =
        par->codec_id == AV_CODEC_ID_RAWVIDEO ? av_get_pix_fmt_name(static_cast<AVPixelFormat>(par->format)) : nullptr;
    const std::string format = camera_format_from_libav(avcodec_get_name(par->codec_id), pix ? pix : "");
    const std::string wrong = camera_mode_mismatch(camera_request(options), size_, format, fps_);
    if (wrong.empty()) return true;
    *error = camera_refusal_message(name_, camera_request(options), wrong, enumerate_camera(input_.url));
    return false;
}

// The demuxer and its options for sequences, cameras and URLs; files need neither.
bool Demuxer::set_input_options(const SourceOptions& options, AVDictionary** opts, const AVInputFormat** format,
                                std::string* error) {
    switch (input_.kind) {
    case SourceKind::kImageSequence: {
        long count = 0;
        if (!scan_sequence(input_.url, &sequence_start_, &count, &sequence_beyond_gap_, error)) return false;
        frame_count_ = count;
        *format = av_find_input_format("image2");
        if (!*format) {
            *error = "this FFmpeg has no image2 demuxer";
            return false;
        }
        av_dict_set(opts, "pattern_type", "sequence", 0);
        av_dict_set_int(opts, "start_number", sequence_start_, 0);
        av_dict_set(opts, "framerate", rational_text(options.sequence_fps > 0 ? options.sequence_fps : 30.0).c_str(),
                    0);
        what_ = "image sequence '" + input_.url + "'";
        return true;
    }
    case SourceKind::kCamera:
        *format = av_find_input_format("v4l2");
        if (!*format) {
            *error = "cannot open camera '" + name_ + "': this FFmpeg was built without the video4linux2 input";
            return false;
        }
        if (!options.camera_size.empty()) av_dict_set(opts, "video_size", options.camera_size.c_str(), 0);
        if (options.camera_fps > 0) av_dict_set(opts, "framerate", rational_text(options.camera_fps).c_str(), 0);
        if (!options.camera_format.empty()) {
            const std::string f = v4l2_input_format(options.camera_format);
            if (f.empty()) {
                *error = "cannot open camera '" + name_ + "': unknown camera format '" + options.camera_format +
                         "' (use " + camera_format_names() + ")";
                return false;
            }
            av_dict_set(opts, "input_format", f.c_str(), 0);
        }
        what_ = "camera '" + name_ + "'";
        return true;
    case SourceKind::kUrl: {
        // Socket timeouts back up the interrupt callback inside protocols that poll without
        // it. All in microseconds. RTMP is left out: its "timeout" means "listen".
        const int64_t us = static_cast<int64_t>(std::clamp(read_timeout_s_, 0.1, 1e6) * 1e6);
        const std::string scheme = url_scheme(input_.url);
        av_dict_set_int(opts, "rw_timeout", us, 0);
        if (scheme == "rtsp" || scheme == "rtsps") {
#if LIBAVFORMAT_VERSION_MAJOR < 59
            av_dict_set_int(opts, "stimeout", us, 0);
#else
            av_dict_set_int(opts, "timeout", us, 0);
#endif
            av_dict_set(opts, "rtsp_flags", "prefer_tcp", 0);
        } else if (scheme == "http" || scheme == "https" || scheme == "tcp" || scheme == "udp" || scheme == "srt") {
            av_dict_set_int(opts, "timeout", us, 0);
        }
        return true;
    }
    case SourceKind::kFile:
    case SourceKind::kAuto: return true;
    }
    return true;
}

// Custom I/O for the caller's ByteReader, or for a pipe or FIFO: FFmpeg's own reads of those
// would block for ever on a writer that never comes or stalls; poll() under the read timeout.
bool Demuxer::attach_reader(const SourceOptions& options, AVFormatContext* fc, AVDictionary** opts,
                            std::string* error) {
    reader_ = options.reader;
    if (!reader_ && input_.kind == SourceKind::kFile && is_stream_path(input_.url)) {
        const int fd = open_stream_descriptor(input_.url, error);
        if (fd < 0) return false;
        reader_ = descriptor_reader(fd, read_timeout_s_, [this] { return Deadline::check(&deadline_) != 0; });
        what_ = "'" + name_ + "'";
    }
    if (!reader_) return true;
    constexpr int kBufferBytes = 1 << 16;
    auto* buffer = static_cast<unsigned char*>(av_malloc(kBufferBytes));
    AVIOContext* io = buffer ? avio_alloc_context(buffer, kBufferBytes, 0, reader_.get(), &read_bytes, nullptr,
                                                  reader_->seekable() ? &seek_bytes : nullptr)
                             : nullptr;
    if (!io) {
        av_free(buffer);
        *error = "out of memory (avio_alloc_context)";
        return false;
    }
    avio_.reset(io);
    fc->pb = io;
    fc->flags |= AVFMT_FLAG_CUSTOM_IO;
    // Bytes from memory or a pipe name no other file: a playlist or reference inside them
    // (HLS, concat, external MOV data) must not make the demuxer open paths or URLs.
    av_dict_set(opts, "protocol_whitelist", "none", 0);
    return true;
}

// Why avformat_open_input (opening) or avformat_find_stream_info failed, for the user.
std::string Demuxer::open_failure(int ret, bool opening, double open_timeout_s) const {
    const std::string verb = opening ? "cannot open " : "cannot read ";
    if (deadline_.interrupted) return "cannot open " + what_ + ": interrupted";
    if (reader_ && !deadline_.expired && !reader_->failure().empty()) return verb + what_ + ": " + reader_->failure();
    if (deadline_.expired)
        return "cannot open " + what_ + (opening ? ": no answer within " : ": no video data within ") +
               format_fps(open_timeout_s) + " s (open timeout)";
    std::string reason = av_error_string(ret);
    reason += log_detail(reason);
    if (opening && ret == AVERROR_INVALIDDATA && input_.kind == SourceKind::kFile)
        return what_ + " is not a video FFmpeg can read: " + reason;
    return verb + what_ + ": " + reason;
}

bool Demuxer::find_video_stream(std::string* error) {
    AVFormatContext* fc = format_.get();
    const AVCodec* decoder = nullptr;
    const int index = av_find_best_stream(fc, AVMEDIA_TYPE_VIDEO, -1, -1, &decoder, 0);
    if (index == AVERROR_STREAM_NOT_FOUND ||
        (index >= 0 && (fc->streams[index]->disposition & AV_DISPOSITION_ATTACHED_PIC))) {
        *error = what_ + " has no video stream";
        return false;
    }
    if (index == AVERROR_DECODER_NOT_FOUND || (index >= 0 && !decoder)) {
        int idx = av_find_best_stream(fc, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
        const char* codec_name = idx >= 0 ? avcodec_get_name(fc->streams[idx]->codecpar->codec_id) : "unknown";
        *error = what_ + ": this FFmpeg has no decoder for its video codec '" + codec_name + "'";
        return false;
    }
    if (index < 0) {
        *error = "cannot read " + what_ + ": " + av_error_string(index);
        return false;
    }
    for (unsigned i = 0; i < fc->nb_streams; ++i)
        if (static_cast<int>(i) != index) fc->streams[i]->discard = AVDISCARD_ALL;
    stream_ = fc->streams[index];
    codec_ = decoder;
    return true;
}

// Size, rate, the frame count a file promises (for the truncation check) and description().
void Demuxer::read_stream_facts(const SourceOptions& options) {
    const AVFormatContext* fc = format_.get();
    AVStream* st = stream_;
    size_ = {st->codecpar->width, st->codecpar->height};
    if (input_.kind == SourceKind::kImageSequence) {
        fps_ = options.sequence_fps > 0 ? options.sequence_fps : 30.0;
    } else {
        AVRational rate = av_guess_frame_rate(format_.get(), st, nullptr);
        fps_ = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : 0.0;
    }
    if (input_.kind == SourceKind::kFile) {
        if (st->nb_frames > 0) {
            declared_frames_ = static_cast<long>(st->nb_frames);
        } else if (fps_ > 0) {
            double seconds = -1;
            if (st->duration != AV_NOPTS_VALUE && st->duration > 0) seconds = st->duration * av_q2d(st->time_base);
            if (seconds <= 0) seconds = parse_duration_tag(st->metadata);
            // The container's duration covers every stream; trust it only when video is alone.
            if (seconds <= 0 && fc->nb_streams == 1 && fc->duration != AV_NOPTS_VALUE)
                seconds = fc->duration / static_cast<double>(AV_TIME_BASE);
            if (seconds > 0 && seconds * fps_ < 1e12) {
                declared_frames_ = std::lround(seconds * fps_);
                duration_count_ = true;
                // Only a count that is not whole can lose a frame to rounding: a Matroska
                // file cut by its last frame (1.00 s at 25 fps, 24 frames) is not whole.
                declared_slack_ = std::fabs(seconds * fps_ - static_cast<double>(declared_frames_)) > 0.02 ? 1 : 0;
            }
        }
        frame_count_ = declared_frames_;
    }
    // A sequence declares the images its scan found up to the first gap: one that ends the
    // demuxer early (empty, unreadable) leaves the rest missing, never a clean end.
    if (input_.kind == SourceKind::kImageSequence) declared_frames_ = frame_count_;
    if (!live_ && st->start_time != AV_NOPTS_VALUE) start_time_ = st->start_time;

    description_ = input_.display + ": " + avcodec_get_name(st->codecpar->codec_id) + " " +
                   std::to_string(size_.width) + "x" + std::to_string(size_.height);
    if (fps_ > 0) description_ += " @ " + format_fps(fps_) + " fps";
    if (live_)
        description_ += ", live";
    else if (frame_count_ > 0)
        description_ += ", " + std::to_string(frame_count_) + " frames";
}

bool Demuxer::skip_to_image(long offset) {
    if (input_.kind != SourceKind::kImageSequence || offset >= frame_count_) return false;
    // image2's read_seek takes the image's offset from the first (its pts) and reads on from it.
    return av_seek_frame(format_.get(), stream_->index, offset, AVSEEK_FLAG_ANY) >= 0;
}

std::string Demuxer::image_name(long offset) const {
    SequencePattern sp;
    if (!parse_sequence_pattern(input_.url, &sp)) return std::to_string(offset);
    return sp.name(sequence_start_ + offset);
}

Demuxer::Wait Demuxer::wait_for_frame() {
    if (Clock::now() >= deadline_.at) deadline_.expired = true;
    if (interrupted()) return Wait::kStopped;
    if (deadline_.expired) return Wait::kStalled;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return Wait::kAgain;
}

std::string Demuxer::stalled_message() const {
    return "'" + name_ + "' stopped sending frames: nothing for " + format_fps(read_timeout_s_) + " s (read timeout)";
}

bool Demuxer::input_failed(int ret) const {
    return deadline_.expired || deadline_.interrupted || ret == AVERROR_EXIT ||
           (reader_ && !reader_->failure().empty());
}

std::pair<std::string, EndReason> Demuxer::io_failure(const std::string& what) const {
    if (interrupted()) return {"'" + name_ + "': interrupted", EndReason::kInterrupted};
    const std::string failure = reader_ ? reader_->failure() : std::string();
    if (!deadline_.expired && !failure.empty()) {
        const bool stalled = failure.find("read timeout") != std::string::npos;
        return {"'" + name_ + "' " + what + ": " + failure, stalled ? EndReason::kStalled : EndReason::kFailed};
    }
    return {"'" + name_ + "' stopped sending data: nothing for " + format_fps(read_timeout_s_) + " s (read timeout)",
            EndReason::kStalled};
}

}  // namespace corrtrack
