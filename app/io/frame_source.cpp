// FrameSource over libav: the read loop that joins the units of app/io, mpv-style:
//   input_path      what the input string names (files, URLs, cameras, image sequences)
//   demuxer         libavformat: open under deadlines, the video stream, packets
//   decoder         libavcodec, NVDEC with its probe and software fallback
//   nvdec_context   the CUDA primary context NVDEC decodes in
//   frame_convert   swscale, luma and RGB, NVDEC surfaces
//   end_of_input    the counts and what they mean when the input ends
//   av_log          libav's log, captured for messages
// See frame_source.h for the end-of-input policy; everything here runs on the thread that owns
// the source.
#include "app/io/frame_source.h"

#include "app/io/av_log.h"
#include "app/io/decoder.h"
#include "app/io/demuxer.h"
#include "app/io/end_of_input.h"
#include "app/io/frame_convert.h"
#include "app/io/input_path.h"
#include "app/io/libav_handles.h"
#include "app/io/sequence_pattern.h"
#include "app/util/stats.h"

#include <chrono>
#include <filesystem>
#include <optional>
#include <utility>

namespace corrtrack {
namespace {

using Clock = std::chrono::steady_clock;

class LibavSource final : public FrameSource {
public:
    bool open(const SourceOptions& options, const ResolvedInput& input, std::string* error);

    ReadStatus read(Frame& out) override;
    const std::string& error() const override { return error_; }
    bool live() const override { return demuxer_.live(); }
    Size size() const override { return demuxer_.size(); }
    double fps() const override { return demuxer_.fps(); }
    long frame_count() const override { return demuxer_.frame_count(); }
    std::string description() const override {
        return decoder_.nvdec() ? demuxer_.description() + ", nvdec" : demuxer_.description();
    }
    std::string decode_mode() const override { return decoder_.nvdec() ? "nvdec" : "sw"; }
    std::string decode_note() const override { return decoder_.note(); }
    SourceReport report() const override;

private:
    ReadStatus decode_next(double* busy_ms);
    // The packet decode_next feeds next: NVDEC's kept packets first after a fallback.
    int next_packet(AVPacket* pkt, bool* replayed);
    // The demuxer gave ret < 0: drain the decoder (a failed input is reported after the
    // frames the decoder still holds). Empty: carry on with the loop.
    std::optional<ReadStatus> end_of_packets(int ret);
    bool fall_back_to_software();
    // Why image `offset` of a sequence gave no packet (av_read_frame returned ret).
    std::string image_failure(long offset, int ret) const;
    bool convert(const AVFrame* f, Frame& out);
    void stamp(const AVFrame* f, Frame& out);
    ReadStatus finish();
    ReadStatus fail(const std::string& message, EndReason reason = EndReason::kFailed);
    // Why the last read or open failed when it was the byte reader or the stop flag.
    ReadStatus fail_io(const std::string& what);
    // Counts a failed send or receive; true once the decoder has failed too often in a row.
    bool decoder_keeps_failing(int ret, long* errors_in_a_row);

    // Destroyed in reverse: the converter, the decoder, then the demuxer and its input.
    Demuxer demuxer_;
    Decoder decoder_;
    FrameConverter converter_;
    std::unique_ptr<AVFrame, FrameFreer> frame_;
    std::unique_ptr<AVPacket, PacketFreer> packet_;
    bool first_frame_ready_ = false;  // open() decoded the first frame into frame_
    double first_frame_ms_ = 0;
    AVRational time_base_{1, 1};
    int64_t origin_ts_ = AV_NOPTS_VALUE;  // timestamp that maps to pts 0

    InputTally tally_;
    EndReason end_ = EndReason::kNone;
    bool draining_ = false;
    // A stall or read failure met while reading: reported once the decoder has given back
    // the frames it already holds (frame threads keep up to one per thread).
    std::optional<std::pair<std::string, EndReason>> pending_failure_;
    bool finished_ = false;
    ReadStatus final_status_ = ReadStatus::kEnd;
    std::string error_;
};

bool LibavSource::open(const SourceOptions& options, const ResolvedInput& input, std::string* error) {
    if (!demuxer_.open(options, input, error)) return false;
    time_base_ = demuxer_.stream()->time_base;
    origin_ts_ = demuxer_.start_time();
    converter_.configure(demuxer_.name(), options.want_rgb, options.want_yuv, options.want_host_luma);

    frame_.reset(av_frame_alloc());
    packet_.reset(av_packet_alloc());
    if (!frame_ || !packet_) {
        *error = "out of memory (av_frame_alloc)";
        return false;
    }
    if (!decoder_.open(demuxer_, options, &tally_.delivered, error)) return false;

    // NVDEC proves itself on the first frame here, so that decode_mode() and decode_note()
    // are settled when open() returns; read() delivers that frame first.
    if (decoder_.probing()) {
        demuxer_.arm_read_deadline();
        first_frame_ready_ = decode_next(&first_frame_ms_) == ReadStatus::kFrame;
    }
    return true;
}

// Starts a software decoder on the packets NVDEC was given, so no frame is lost.
bool LibavSource::fall_back_to_software() {
    av_frame_unref(frame_.get());
    draining_ = false;
    tally_.restart_decoding(decoder_.probe_packets_dropped());
    return decoder_.fall_back_to_software(&error_);
}

ReadStatus LibavSource::fail(const std::string& message, EndReason reason) {
    finished_ = true;
    final_status_ = ReadStatus::kError;
    end_ = reason;
    error_ = message;
    return final_status_;
}

ReadStatus LibavSource::fail_io(const std::string& what) {
    const auto [message, reason] = demuxer_.io_failure(what);
    return fail(message, reason);
}

SourceReport LibavSource::report() const {
    SourceReport r;
    r.end = end_;
    r.delivered = tally_.delivered;
    r.lost = tally_.frames.lost();
    r.lost_at = tally_.frames.lost_at();
    r.missing_at_end = missing_at_end(demuxer_, tally_, finished_);
    r.concealed = tally_.concealed;
    r.resized = converter_.resized();
    r.resize_note = converter_.resize_note();
    return r;
}

// What the end of input means; see the policy in frame_source.h.
ReadStatus LibavSource::finish() {
    finished_ = true;
    EndVerdict verdict = judge_end(demuxer_, tally_);
    if (verdict.end != EndReason::kClean) return fail(verdict.message, verdict.end);
    final_status_ = ReadStatus::kEnd;
    end_ = EndReason::kClean;
    return final_status_;
}

ReadStatus LibavSource::read(Frame& out) {
    out.decode_start = std::chrono::steady_clock::now();
    double busy_ms = 0;  // decoding and conversion; waiting for input is not decode time
    if (first_frame_ready_) {
        first_frame_ready_ = false;
        busy_ms = first_frame_ms_;
    } else {
        if (finished_) return final_status_;
        demuxer_.arm_read_deadline();
        ReadStatus status = decode_next(&busy_ms);
        if (status != ReadStatus::kFrame) return status;
    }
    const auto t0 = Clock::now();
    bool ok = convert(frame_.get(), out);
    av_frame_unref(frame_.get());
    if (!ok) return fail(error_);
    out.decode_ms = busy_ms + ms_since(t0);
    ++tally_.delivered;
    tally_.last_index = out.index;
    return ReadStatus::kFrame;
}

bool LibavSource::decoder_keeps_failing(int ret, long* errors_in_a_row) {
    tally_.note_decode_error(av_error_string(ret));
    if (++*errors_in_a_row <= 1000) return false;
    fail("'" + demuxer_.name() + "': the decoder keeps failing: " + av_error_string(ret));
    return true;
}

int LibavSource::next_packet(AVPacket* pkt, bool* replayed) {
    clear_av_log();
    *replayed = decoder_.next_replayed(pkt);
    return *replayed ? 0 : demuxer_.read_packet(pkt);
}

std::optional<ReadStatus> LibavSource::end_of_packets(int ret) {
    if (demuxer_.input_failed(ret)) {
        if (demuxer_.interrupted()) return fail_io("stopped sending data");
        // Stalled or failed: the frames already decoded come first, then the failure.
        pending_failure_ = demuxer_.io_failure("stopped sending data");
        draining_ = true;
        const int flushed = avcodec_send_packet(decoder_.context(), nullptr);
        if (flushed < 0 && flushed != AVERROR_EOF) tally_.note_decode_error(av_error_string(flushed));
        return std::nullopt;
    }
    // An image that image2 cannot read (empty, unreadable) ends its packets; the images after
    // it are still there: count it and read on from the next (the hole in the timestamps
    // makes it a lost frame).
    const long image = tally_.packets_read + tally_.unreadable_images;
    if (demuxer_.input().kind == SourceKind::kImageSequence && image < demuxer_.frame_count()) {
        const std::string why = image_failure(image, ret);
        if (tally_.unreadable_images++ == 0) tally_.first_unreadable = demuxer_.image_name(image) + " (" + why + ")";
        if (demuxer_.skip_to_image(image + 1)) return std::nullopt;
    } else if (ret == AVERROR_EOF && !demuxer_.live() && !last_av_log().empty()) {
        tally_.eof_complaint = last_av_log();  // matroska's "File ended prematurely"
    }
    if (ret != AVERROR_EOF && tally_.unreadable_images == 0) {
        tally_.demux_error = ret;
        tally_.demux_error_detail = log_detail(av_error_string(ret));
    }
    // Deliver what the decoder still holds, then finish() judges the end.
    draining_ = true;
    ret = avcodec_send_packet(decoder_.context(), nullptr);
    if (decoder_.probing() && decoder_.probe_failed(ret, nullptr)) {
        if (!fall_back_to_software()) return fail(error_);
        return std::nullopt;
    }
    // avcodec_send_packet decodes as it goes: an error here is an earlier packet's, and the
    // flush was taken; the frames after the bad one still come out (a frame-threaded PNG or
    // H.264 decoder holds them), so drain on.
    if (ret < 0 && ret != AVERROR_EOF) tally_.note_decode_error(av_error_string(ret));
    return std::nullopt;
}

// Runs the decoder until frame_ holds the next frame (kFrame) or the input ends (finish()).
ReadStatus LibavSource::decode_next(double* busy_ms) {
    AVFrame* f = frame_.get();
    AVPacket* pkt = packet_.get();
    const bool live = demuxer_.live();
    long errors_in_a_row = 0;
    for (;;) {
        if (demuxer_.stop_requested()) return fail_io("stopped");
        auto t0 = Clock::now();
        int ret = avcodec_receive_frame(decoder_.context(), f);
        *busy_ms += ms_since(t0);
        if (decoder_.probing() && decoder_.probe_failed(ret, f)) {
            if (!fall_back_to_software()) return fail(error_);
            continue;
        }
        if (ret == 0) {
            // Concealed damage: the frame is usable, but the file is not what it claims.
            if (!live && (f->decode_error_flags || (f->flags & AV_FRAME_FLAG_CORRUPT))) {
                ++tally_.concealed;
                tally_.note_decode_error("frame " + std::to_string(tally_.delivered) +
                                         " decoded with concealed errors");
            }
            return ReadStatus::kFrame;
        }
        if (ret == AVERROR_EOF || (draining_ && ret == AVERROR(EAGAIN))) {
            if (pending_failure_) return fail(pending_failure_->first, pending_failure_->second);
            return finish();
        }
        if (ret != AVERROR(EAGAIN)) {
            if (decoder_keeps_failing(ret, &errors_in_a_row)) return final_status_;
            if (draining_) continue;
        }
        bool replayed = false;
        ret = next_packet(pkt, &replayed);
        if (ret == AVERROR(EAGAIN)) {  // non-blocking camera with no new frame yet
            switch (demuxer_.wait_for_frame()) {
            case Demuxer::Wait::kStopped: return fail_io("stopped");
            case Demuxer::Wait::kStalled: return fail(demuxer_.stalled_message(), EndReason::kStalled);
            case Demuxer::Wait::kAgain: continue;
            }
        }
        if (ret < 0) {
            if (const std::optional<ReadStatus> status = end_of_packets(ret)) return *status;
            continue;
        }
        if (pkt->stream_index != demuxer_.stream_index()) {
            av_packet_unref(pkt);
            continue;
        }
        // Kept for a software decoder, should NVDEC refuse the stream.
        if (decoder_.probing() && !decoder_.keep_for_probe(pkt)) return fail("out of memory (av_packet_clone)");
        // Every packet is a source frame (edit-list preroll marked discard is never shown).
        if (!replayed) ++tally_.packets_read;
        if (!live && !(pkt->flags & AV_PKT_FLAG_DISCARD))
            tally_.frames.packet_sent(pkt->pts, pkt->dts, pkt->duration);  // AV_NOPTS_VALUE == kNoTimestamp
        t0 = Clock::now();
        ret = avcodec_send_packet(decoder_.context(), pkt);
        *busy_ms += ms_since(t0);
        av_packet_unref(pkt);
        if (decoder_.probing() && decoder_.probe_failed(ret, nullptr)) {
            if (!fall_back_to_software()) return fail(error_);
            continue;
        }
        if (ret < 0 && ret != AVERROR(EAGAIN)) {
            if (decoder_keeps_failing(ret, &errors_in_a_row)) return final_status_;
        } else {
            errors_in_a_row = 0;
        }
    }
}

std::string LibavSource::image_failure(long offset, int ret) const {
    std::error_code ec;
    SequencePattern sp;
    if (parse_sequence_pattern(demuxer_.input().url, &sp)) {
        const std::filesystem::path file = std::filesystem::path(sp.dir) / demuxer_.image_name(offset);
        if (std::filesystem::is_regular_file(file, ec) && std::filesystem::file_size(file, ec) == 0 && !ec)
            return "the file is empty";
    }
    return ret == AVERROR_EOF ? "nothing could be read" : av_error_string(ret) + log_detail(av_error_string(ret));
}

bool LibavSource::convert(const AVFrame* f, Frame& out) {
    if (!converter_.convert(f, out)) {
        error_ = converter_.error();
        return false;
    }
    stamp(f, out);
    converter_.count_resize(out);
    return true;
}

void LibavSource::stamp(const AVFrame* f, Frame& out) {
    const double fps = demuxer_.fps();
    int64_t ts = f->best_effort_timestamp;
    if (ts != AV_NOPTS_VALUE && origin_ts_ == AV_NOPTS_VALUE) origin_ts_ = ts;
    if (ts != AV_NOPTS_VALUE)
        out.pts = (ts - origin_ts_) * av_q2d(time_base_);
    else
        out.pts = fps > 0 ? tally_.delivered / fps : 0.0;
    // Files and sequences: the frame's place in the source, so that a frame that failed to
    // decode leaves a gap instead of shifting every later index against the ground truth
    // (image2 stamps image k with k - start). Live sources count what they deliver.
    if (demuxer_.live())
        out.index = tally_.delivered;
    else
        out.index = tally_.frames.frame_out(f->pts == AV_NOPTS_VALUE ? FrameAccounting::kNoTimestamp : f->pts);
}

}  // namespace

const char* to_string(DecodeMode mode) {
    switch (mode) {
    case DecodeMode::kSoftware: return "sw";
    case DecodeMode::kNvdec: return "nvdec";
    case DecodeMode::kAuto: return "auto";
    }
    return "sw";
}

bool parse_decode_mode(const std::string& text, DecodeMode* out) {
    for (DecodeMode m : {DecodeMode::kSoftware, DecodeMode::kNvdec, DecodeMode::kAuto}) {
        if (text == to_string(m)) {
            *out = m;
            return true;
        }
    }
    return false;
}

std::unique_ptr<FrameSource> FrameSource::open(const SourceOptions& options, std::string* error) {
    std::string message;
    ResolvedInput input;
    if (!resolve_input(options, &input, &message)) {
        if (error) *error = message;
        return nullptr;
    }
    auto source = std::make_unique<LibavSource>();
    if (!source->open(options, input, &message)) {
        if (error) *error = message;
        return nullptr;
    }
    return source;
}

}  // namespace corrtrack
