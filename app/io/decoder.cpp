// The decoder with its NVDEC probe and fallback; see decoder.h.
#include "app/io/decoder.h"

#include "app/io/av_log.h"
#include "app/io/nvdec_context.h"

extern "C" {
#include <libavutil/pixdesc.h>
}

#include <algorithm>

namespace corrtrack {
namespace {

// Whether this FFmpeg's decoder has an NVDEC hwaccel (set up through a CUDA device context).
bool has_cuda_hwaccel(const AVCodec* decoder) {
    for (int i = 0;; ++i) {
        const AVCodecHWConfig* config = avcodec_get_hw_config(decoder, i);
        if (!config) return false;
        if ((config->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX) && config->device_type == AV_HWDEVICE_TYPE_CUDA)
            return true;
    }
}

int luma_depth(int pixel_format) {
    const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(pixel_format));
    return d ? d->comp[0].depth : 0;
}

// "hevc Main 10, yuv420p10le": what a note about a refused stream names.
std::string stream_kind(AVCodecID codec, int profile, int pixel_format) {
    std::string s = avcodec_get_name(codec);
    if (const char* p = avcodec_profile_name(codec, profile)) s += std::string(" ") + p;
    if (const char* f = av_get_pix_fmt_name(static_cast<AVPixelFormat>(pixel_format))) s += std::string(", ") + f;
    return s;
}

// NVDEC would give 10/12-bit video as P010/P016; the device path hands 8-bit luma to the
// kernels, so such video decodes on the CPU (to GRAY8, like any other).
std::string eight_bit_only_note(const std::string& kind) {
    return "NVDEC not used for " + kind +
           " (the GPU path takes 8-bit video only): decoding on "
           "the CPU";
}

}  // namespace

bool Decoder::open(const Demuxer& demuxer, const SourceOptions& options, const long* delivered, std::string* error) {
    stream_ = demuxer.stream();
    codec_ = demuxer.codec();
    kind_ = demuxer.input().kind;
    live_ = demuxer.live();
    name_ = demuxer.name();
    what_ = demuxer.what();
    mode_ = options.decode;
    cuda_stream_ = options.cuda_stream;
    max_pixels_ = options.max_pixels;
    held_frames_ = options.held_frames;
    delivered_ = delivered;

    std::string message;
    if (mode_ != DecodeMode::kSoftware && prepare_nvdec()) {
        hw_ = Hw::kProbing;
        if (!open_codec(true, &message)) {
            hw_ = Hw::kOff;
            hw_device_.reset();
            note_ = "NVDEC unavailable (" + message + "): decoding on the CPU";
        }
    }
    if (hw_ == Hw::kOff && !open_codec(false, &message)) {
        *error = message;
        return false;
    }
    return true;
}

// Whether NVDEC may serve this input; the note says why not where the user should hear it.
bool Decoder::prepare_nvdec() {
    const bool quiet = mode_ == DecodeMode::kAuto;  // auto: only news about the stream
    const AVCodecParameters* par = stream_->codecpar;
    if (kind_ == SourceKind::kImageSequence || kind_ == SourceKind::kCamera) {
        if (!quiet)
            note_ = std::string("NVDEC decodes video files and streams only: decoding the ") +
                    (kind_ == SourceKind::kCamera ? "camera" : "image sequence") + " on the CPU";
        return false;
    }
    if (!has_cuda_hwaccel(codec_)) {
        if (!quiet)
            note_ = std::string("NVDEC unavailable (this FFmpeg has no NVDEC hwaccel for ") +
                    avcodec_get_name(par->codec_id) + "): decoding on the CPU";
        return false;
    }
    std::string why;
    clear_av_log();
    hw_device_.reset(open_cuda_device(cuda_stream_, &why));
    if (!hw_device_) {
        if (!quiet) note_ = "NVDEC unavailable (" + why + "): decoding on the CPU";
        return false;
    }
    if (luma_depth(par->format) > 8) {
        hw_device_.reset();
        note_ = eight_bit_only_note(stream_kind(par->codec_id, par->profile, par->format));
        return false;
    }
    return true;
}

bool Decoder::open_codec(bool hw, std::string* message) {
    AVCodecContext* cc = avcodec_alloc_context3(codec_);
    context_.reset(cc);
    if (!cc) {
        *message = "out of memory (avcodec_alloc_context3)";
        return false;
    }
    const int copied = avcodec_parameters_to_context(cc, stream_->codecpar);
    if (copied < 0) {
        *message = av_call_error(name_, copied, "avcodec_parameters_to_context(cc, st->codecpar)", __FILE__, __LINE__);
        return false;
    }
    cc->pkt_timebase = stream_->time_base;
    if (max_pixels_ > 0) cc->max_pixels = max_pixels_;
    if (hw) {
        cc->hw_device_ctx = av_buffer_ref(hw_device_.get());
        if (!cc->hw_device_ctx) {
            *message = "out of memory (av_buffer_ref)";
            return false;
        }
        cc->opaque = this;
        cc->get_format = &Decoder::get_format_callback;
        // Every frame the consumer holds keeps a decoder surface mapped (nvdec.c maps the
        // output surface into the AVFrame until it is freed).
        cc->extra_hw_frames = std::max(held_frames_, 0);
        // The GPU decodes; frame threads would add latency and one surface per thread.
        cc->thread_count = 1;
    } else {
        cc->thread_count = 0;  // one per core
        // Frame threads add one frame of latency per thread: fine for files, not for live.
        cc->thread_type = live_ ? FF_THREAD_SLICE : (FF_THREAD_FRAME | FF_THREAD_SLICE);
    }
    if (live_) cc->flags |= AV_CODEC_FLAG_LOW_DELAY;
    clear_av_log();
    int ret = avcodec_open2(cc, codec_, nullptr);
    if (ret < 0) {
        std::string reason = av_error_string(ret);
        *message = "cannot start the " + std::string(codec_->name) + " decoder for " + what_ + ": " + reason +
                   log_detail(reason);
        context_.reset();
        return false;
    }
    return true;
}

AVPixelFormat Decoder::get_format_callback(AVCodecContext* cc, const AVPixelFormat* formats) {
    return static_cast<Decoder*>(cc->opaque)->choose_format(cc, formats);
}

// libavcodec calls this on the decode thread when a sequence starts; when the hwaccel it
// picked fails to initialise, it calls again without that format (decode.c, ff_get_format).
AVPixelFormat Decoder::choose_format(AVCodecContext* cc, const AVPixelFormat* formats) {
    bool cuda = false;
    AVPixelFormat software = AV_PIX_FMT_NONE;
    for (const AVPixelFormat* p = formats; *p != AV_PIX_FMT_NONE; ++p) {
        const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(*p);
        if (*p == AV_PIX_FMT_CUDA) cuda = true;
        if (d && !(d->flags & AV_PIX_FMT_FLAG_HWACCEL)) software = *p;
    }
    const bool eight_bit = luma_depth(cc->sw_pix_fmt) == 8;
    if (hw_ != Hw::kOff && cuda && eight_bit) {
        cuda_chosen_ = true;
        return AV_PIX_FMT_CUDA;
    }
    if (hw_ == Hw::kOff) return software;
    const std::string kind = stream_kind(cc->codec_id, cc->profile, cc->sw_pix_fmt);
    // decode.c's "Failed setup for format cuda" follows nvdec.c's own reason.
    std::string log = last_av_log();
    if (log.rfind("Failed setup for format", 0) == 0 && !previous_av_log().empty()) log = previous_av_log();
    const std::string why = cuda_chosen_ ? "refused" + (log.empty() ? "" : ": " + log) : "no NVDEC format offered";
    const std::string note = !eight_bit ? eight_bit_only_note(kind)
                                        : "NVDEC does not decode " + kind + " here (" + why + "): decoding on the CPU";
    if (hw_ == Hw::kProbing) {
        // Nothing decoded yet: give up here and let a threaded software decoder start over.
        refusal_ = note;
        return AV_PIX_FMT_NONE;
    }
    // The stream changed under a running NVDEC decode: carry on in software in this context.
    hw_ = Hw::kOff;
    note_ = "after frame " + std::to_string(*delivered_ - 1) + ": " + note;
    return software;
}

bool Decoder::probe_failed(int ret, const AVFrame* received) {
    if (!refusal_.empty()) return true;
    if (received && ret == 0) {
        if (received->format == AV_PIX_FMT_CUDA) {
            hw_ = Hw::kOn;
            probe_packets_.clear();
            return false;
        }
        refusal_ = "NVDEC did not take this stream: decoding on the CPU";
        return true;
    }
    if (received && ret == AVERROR_EOF) {
        refusal_ = "NVDEC delivered no frame: decoding on the CPU";
        return true;
    }
    if (ret < 0 && ret != AVERROR(EAGAIN) && ret != AVERROR_EOF && cuda_chosen_) {
        std::string reason = av_error_string(ret);
        refusal_ = "NVDEC failed on the first frame (" + reason + log_detail(reason) + "): decoding on the CPU";
        return true;
    }
    return false;
}

bool Decoder::keep_for_probe(const AVPacket* pkt) {
    // Bounded: a stream that yields no frame for this long (waiting for a keyframe) loses its
    // oldest.
    constexpr std::size_t kMaxProbePackets = 512;
    if (probe_packets_.size() == kMaxProbePackets) {
        probe_packets_.pop_front();
        ++probe_packets_dropped_;
    }
    probe_packets_.emplace_back(av_packet_clone(pkt));
    return probe_packets_.back() != nullptr;
}

bool Decoder::fall_back_to_software(std::string* error) {
    note_ = refusal_;
    if (probe_packets_dropped_ > 0)
        note_ += " (the first " + std::to_string(probe_packets_dropped_) +
                 " packets were not kept; their frames are missing)";
    hw_ = Hw::kOff;
    context_.reset();
    hw_device_.reset();
    replay_ = std::move(probe_packets_);
    probe_packets_.clear();
    return open_codec(false, error);
}

bool Decoder::next_replayed(AVPacket* pkt) {
    if (replay_.empty()) return false;
    av_packet_move_ref(pkt, replay_.front().get());
    replay_.pop_front();
    return true;
}

}  // namespace corrtrack
