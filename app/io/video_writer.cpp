// VideoWriter over libavformat/libavcodec/libswscale. See video_writer.h for the choices of
// codec, pixel format and padding; one thread owns a writer.
#include "app/io/video_writer.h"
#include "app/io/libav_handles.h"
#include "corrtrack/correlator.h"  // cuda_available()

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

#include <algorithm>
#include <cmath>
#include <cstring>

namespace corrtrack {
namespace {

bool is_image_muxer(const AVOutputFormat* f) {
    return std::strcmp(f->name, "image2") == 0 || std::strcmp(f->name, "image2pipe") == 0;
}

bool supports_format(const AVCodec* codec, AVPixelFormat fmt) {
    if (!codec->pix_fmts) return fmt == AV_PIX_FMT_YUV420P;
    for (const AVPixelFormat* p = codec->pix_fmts; *p != AV_PIX_FMT_NONE; ++p)
        if (*p == fmt) return true;
    return false;
}

class LibavWriter final : public VideoWriter {
public:
    ~LibavWriter() override { close(nullptr); }
    bool open(const std::string& path, Size size, const VideoWriterOptions& options, std::string* error);

    bool write_rgb(const std::uint8_t* rgb, std::size_t pitch, std::string* error) override {
        return write(rgb, pitch, AV_PIX_FMT_RGB24, error);
    }
    bool write_yuv420(const std::uint8_t* yuv, YuvFormat format, std::string* error) override;
    bool write_gray(const std::uint8_t* gray, std::size_t pitch, std::string* error) override {
        return write(gray, pitch, AV_PIX_FMT_GRAY8, error);
    }
    bool close(std::string* error) override;
    std::string encoder() const override { return encoder_; }
    std::string encoder_note() const override { return note_; }
    void set_note(const std::string& note) { note_ = note; }

private:
    bool write(const std::uint8_t* data, std::size_t pitch, AVPixelFormat format, std::string* error);
    void pad_edges();
    bool encode(const AVFrame* frame, std::string* error);
    // Reports the failing libav call with its line, so a user's report says which call broke.
    bool check(int ret, const char* call, int line, std::string* error);
    void release();

    std::string path_;
    Size size_;   // what the caller writes
    Size coded_;  // what the encoder gets: size_ padded to even where chroma is subsampled
    AVPixelFormat pixel_format_ = AV_PIX_FMT_NONE;
    bool full_range_ = false;
    YuvMatrix matrix_ = YuvMatrix::kBt601;  // of the file's YUV (tagged)
    AVFormatContext* format_ = nullptr;     // output contexts have no unique_ptr-friendly closer
    AVStream* stream_ = nullptr;
    std::unique_ptr<AVCodecContext, CodecFreer> codec_;
    std::unique_ptr<AVFrame, FrameFreer> frame_;
    std::unique_ptr<AVPacket, PacketFreer> packet_;
    std::unique_ptr<SwsContext, SwsFreer> rgb_sws_, gray_sws_, yuv_sws_;
    YuvFormat yuv_sws_format_;  // the input format yuv_sws_ was made for
    int64_t next_pts_ = 0;
    bool open_ = false;
    std::string encoder_, note_;
};

const char* x264_preset(VideoQuality q) {
    return q == VideoQuality::kFast ? "ultrafast" : q == VideoQuality::kBest ? "medium" : "veryfast";
}

int sws_matrix(YuvMatrix m) {
    return m == YuvMatrix::kBt709 ? SWS_CS_ITU709 : m == YuvMatrix::kBt2020 ? SWS_CS_BT2020 : SWS_CS_ITU601;
}
AVColorSpace av_matrix(YuvMatrix m) {
    return m == YuvMatrix::kBt709    ? AVCOL_SPC_BT709
           : m == YuvMatrix::kBt2020 ? AVCOL_SPC_BT2020_NCL
                                     : AVCOL_SPC_SMPTE170M;
}
const char* nvenc_preset(VideoQuality q) {
    return q == VideoQuality::kFast ? "p1" : q == VideoQuality::kBest ? "p7" : "p4";
}

#define CT_AV_CHECK(call, error) check((call), #call, __LINE__, (error))

bool LibavWriter::check(int ret, const char* call, int line, std::string* error) {
    if (ret >= 0) return true;
    if (error)
        *error = "writing '" + path_ + "': " + call + " failed: " + av_error_string(ret) +
                 " (video_writer.cpp:" + std::to_string(line) + ")";
    return false;
}

bool LibavWriter::open(const std::string& path, Size size, const VideoWriterOptions& options, std::string* error) {
    path_ = path;
    size_ = size;
    auto fail = [&](const std::string& message) {
        if (error) *error = message;
        release();
        return false;
    };
    if (size.width < 1 || size.height < 1)
        return fail("cannot write '" + path + "': invalid frame size " + std::to_string(size.width) + "x" +
                    std::to_string(size.height));
    if (!(options.fps > 0) || options.fps > 1000)
        return fail("cannot write '" + path + "': invalid frame rate " + std::to_string(options.fps));

    int ret = avformat_alloc_output_context2(&format_, nullptr, nullptr, path.c_str());
    if (ret < 0 || !format_)
        return fail("cannot write '" + path +
                    "': FFmpeg knows no container for this file name (use .mp4, .mkv, .avi, or "
                    "a numbered image pattern such as img/%05d.png)");
    const AVOutputFormat* ofmt = format_->oformat;

    const AVCodec* codec = nullptr;
    if (!options.codec.empty()) {
        codec = avcodec_find_encoder_by_name(options.codec.c_str());
        if (!codec) return fail("cannot write '" + path + "': this FFmpeg has no encoder '" + options.codec + "'");
    } else if (is_image_muxer(ofmt)) {
        // One image per frame: the codec follows the extension (.png, .jpg, ...).
        AVCodecID id = av_guess_codec(ofmt, nullptr, path.c_str(), nullptr, AVMEDIA_TYPE_VIDEO);
        codec = id != AV_CODEC_ID_NONE ? avcodec_find_encoder(id) : nullptr;
    } else {
        codec = avcodec_find_encoder_by_name("libx264");
        if (!codec || avformat_query_codec(ofmt, codec->id, FF_COMPLIANCE_NORMAL) == 0)
            codec = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
    }
    if (!codec) return fail("cannot write '" + path + "': no video encoder for this file type");
    if (avformat_query_codec(ofmt, codec->id, FF_COMPLIANCE_NORMAL) == 0)
        return fail("cannot write '" + path + "': the " + ofmt->name + " container cannot hold " + codec->name +
                    " video");

    const bool x264 = std::strcmp(codec->name, "libx264") == 0;
    const bool nvenc = std::strcmp(codec->name, "h264_nvenc") == 0;
    if (x264)
        // Lossless x264 is High 4:4:4 whatever the input, so keep full chroma there too.
        pixel_format_ = options.crf == 0 ? AV_PIX_FMT_YUV444P : AV_PIX_FMT_YUV420P;
    else if (codec->id == AV_CODEC_ID_MJPEG)
        pixel_format_ = AV_PIX_FMT_YUVJ420P;  // non-"J" YUV needs unofficial compliance
    else if (supports_format(codec, AV_PIX_FMT_YUV420P))
        pixel_format_ = AV_PIX_FMT_YUV420P;
    else
        pixel_format_ = avcodec_find_best_pix_fmt_of_list(codec->pix_fmts, AV_PIX_FMT_RGB24, 0, nullptr);
    if (pixel_format_ == AV_PIX_FMT_NONE)
        return fail("cannot write '" + path + "': no usable pixel format for " + codec->name);
    const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(pixel_format_);
    coded_ = size_;
    if (desc->log2_chroma_w > 0) coded_.width += coded_.width & 1;
    if (desc->log2_chroma_h > 0) coded_.height += coded_.height & 1;
    // Lossless output is full range so that grey levels survive exactly.
    full_range_ = (x264 && options.crf == 0) || pixel_format_ == AV_PIX_FMT_YUVJ420P;
    // YUV frames go in as they come where the encoder takes their layout.
    if (options.yuv && pixel_format_ == AV_PIX_FMT_YUV420P) {
        full_range_ = options.yuv->full_range;
        matrix_ = options.yuv->matrix;
    }

    codec_.reset(avcodec_alloc_context3(codec));
    AVCodecContext* cc = codec_.get();
    if (!cc) return fail("out of memory (avcodec_alloc_context3)");
    const AVRational rate = av_d2q(options.fps, 1001000);
    cc->width = coded_.width;
    cc->height = coded_.height;
    cc->pix_fmt = pixel_format_;
    cc->framerate = rate;
    cc->time_base = av_inv_q(rate);
    cc->sample_aspect_ratio = AVRational{1, 1};
    cc->color_range = full_range_ ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
    if (!(desc->flags & AV_PIX_FMT_FLAG_RGB)) cc->colorspace = av_matrix(matrix_);  // = sws's
    // x264 threads well on its own. The others are fallbacks or single images, where
    // slice threads only cost quality; frame threads would also keep a reference to our
    // frame and force a copy per frame.
    cc->thread_count = x264 ? 0 : 1;
    if (ofmt->flags & AVFMT_GLOBALHEADER) cc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    const int crf = std::clamp(options.crf, 0, 51);
    encoder_ = codec->name;
    if (nvenc) {
        // Option names of FFmpeg 4.4+; an older one keeps its defaults (still constant quality).
        av_opt_set(cc->priv_data, "preset", nvenc_preset(options.quality), 0);
        av_opt_set(cc->priv_data, "rc", "vbr", 0);
        av_opt_set_int(cc->priv_data, "cq", std::clamp(crf + 3, 1, 51), 0);
        cc->bit_rate = 0;
        encoder_ += std::string(" ") + nvenc_preset(options.quality);
    } else if (x264) {
        encoder_ += std::string(" ") + x264_preset(options.quality);
        if (!CT_AV_CHECK(av_opt_set(cc->priv_data, "preset", x264_preset(options.quality), 0), error) ||
            !CT_AV_CHECK(av_opt_set_double(cc->priv_data, "crf", crf, 0), error)) {
            release();
            return false;
        }
    } else if (codec->id == AV_CODEC_ID_PNG) {
        cc->compression_level = 3;  // zlib level: default 9 is slow for little gain on frames
    } else {
        // crf 0..51 onto the MPEG quantiser scale 2..31 (2 is near transparent).
        cc->flags |= AV_CODEC_FLAG_QSCALE;
        cc->global_quality = FF_QP2LAMBDA * std::clamp(2 + crf / 5, 2, 31);
    }
    ret = avcodec_open2(cc, codec, nullptr);
    if (ret < 0)
        return fail("cannot write '" + path + "': the " + codec->name + " encoder refused " +
                    std::to_string(coded_.width) + "x" + std::to_string(coded_.height) + " " + desc->name + ": " +
                    av_error_string(ret));

    stream_ = avformat_new_stream(format_, nullptr);
    if (!stream_) return fail("out of memory (avformat_new_stream)");
    stream_->time_base = cc->time_base;
    stream_->avg_frame_rate = rate;
    if (!CT_AV_CHECK(avcodec_parameters_from_context(stream_->codecpar, cc), error)) {
        release();
        return false;
    }
    if (!(ofmt->flags & AVFMT_NOFILE)) {
        ret = avio_open(&format_->pb, path.c_str(), AVIO_FLAG_WRITE);
        if (ret < 0) return fail("cannot write '" + path + "': " + av_error_string(ret));
    }
    AVDictionary* mux_options = nullptr;
    // The index up front: a result video plays while it downloads, and a cut copy still
    // opens.
    if (std::strstr(ofmt->name, "mp4") || std::strstr(ofmt->name, "mov"))
        av_dict_set(&mux_options, "movflags", "+faststart", 0);
    ret = avformat_write_header(format_, &mux_options);
    av_dict_free(&mux_options);
    if (ret < 0) return fail("cannot write '" + path + "': " + av_error_string(ret));

    frame_.reset(av_frame_alloc());
    packet_.reset(av_packet_alloc());
    if (!frame_ || !packet_) return fail("out of memory (av_frame_alloc)");
    frame_->format = pixel_format_;
    frame_->width = coded_.width;
    frame_->height = coded_.height;
    frame_->color_range = cc->color_range;
    frame_->colorspace = cc->colorspace;
    if (!CT_AV_CHECK(av_frame_get_buffer(frame_.get(), 0), error)) {
        release();
        return false;
    }
    open_ = true;
    return true;
}

bool LibavWriter::write(const std::uint8_t* data, std::size_t pitch, AVPixelFormat format, std::string* error) {
    if (!open_) {
        if (error) *error = "writing '" + path_ + "': the writer is closed";
        return false;
    }
    auto& sws = format == AV_PIX_FMT_RGB24 ? rgb_sws_ : gray_sws_;
    if (!sws) {
        // swscale warns about the deprecated "J" formats; same planes, range set below.
        const AVPixelFormat target = pixel_format_ == AV_PIX_FMT_YUVJ420P ? AV_PIX_FMT_YUV420P : pixel_format_;
        sws.reset(sws_getContext(size_.width, size_.height, format, size_.width, size_.height, target,
                                 SWS_BILINEAR | SWS_ACCURATE_RND, nullptr, nullptr, nullptr));
        if (!sws) {
            if (error)
                *error = "writing '" + path_ + "': sws_getContext failed for " + av_get_pix_fmt_name(format) + " -> " +
                         av_get_pix_fmt_name(pixel_format_);
            return false;
        }
        const int* coeffs = sws_getCoefficients(sws_matrix(matrix_));
        // Fails (-1) when the target is RGB: no YUV range to set then.
        sws_setColorspaceDetails(sws.get(), coeffs, 1, coeffs, full_range_ ? 1 : 0, 0, 1 << 16, 1 << 16);
    }
    AVFrame* f = frame_.get();
    if (!CT_AV_CHECK(av_frame_make_writable(f), error)) return false;
    const std::uint8_t* src[4] = {data, nullptr, nullptr, nullptr};
    int src_stride[4] = {static_cast<int>(pitch), 0, 0, 0};
    if (sws_scale(sws.get(), src, src_stride, 0, size_.height, f->data, f->linesize) != size_.height) {
        if (error) *error = "writing '" + path_ + "': sws_scale failed (video_writer.cpp)";
        return false;
    }
    pad_edges();
    f->pts = next_pts_++;
    return encode(f, error);
}

bool LibavWriter::write_yuv420(const std::uint8_t* yuv, YuvFormat format, std::string* error) {
    if (!open_) {
        if (error) *error = "writing '" + path_ + "': the writer is closed";
        return false;
    }
    AVFrame* f = frame_.get();
    if (!CT_AV_CHECK(av_frame_make_writable(f), error)) return false;
    const int w = size_.width, h = size_.height, cw = (w + 1) / 2, ch = (h + 1) / 2;
    const std::uint8_t* planes[4] = {yuv, yuv + static_cast<std::size_t>(w) * h,
                                     yuv + static_cast<std::size_t>(w) * h + static_cast<std::size_t>(cw) * ch,
                                     nullptr};
    int strides[4] = {w, cw, cw, 0};
    if (pixel_format_ == AV_PIX_FMT_YUV420P && format == YuvFormat{matrix_, full_range_}) {
        for (int p = 0; p < 3; ++p)
            for (int y = 0; y < (p ? ch : h); ++y)
                std::memcpy(f->data[p] + static_cast<std::ptrdiff_t>(y) * f->linesize[p],
                            planes[p] + static_cast<std::size_t>(y) * strides[p], strides[p]);
    } else {
        if (!yuv_sws_ || !(yuv_sws_format_ == format)) {
            const AVPixelFormat target = pixel_format_ == AV_PIX_FMT_YUVJ420P ? AV_PIX_FMT_YUV420P : pixel_format_;
            yuv_sws_.reset(
                sws_getContext(w, h, AV_PIX_FMT_YUV420P, w, h, target, SWS_BILINEAR, nullptr, nullptr, nullptr));
            if (!yuv_sws_) {
                if (error)
                    *error = "writing '" + path_ + "': sws_getContext failed for yuv420p -> " +
                             av_get_pix_fmt_name(pixel_format_);
                return false;
            }
            sws_setColorspaceDetails(yuv_sws_.get(), sws_getCoefficients(sws_matrix(format.matrix)),
                                     format.full_range ? 1 : 0, sws_getCoefficients(sws_matrix(matrix_)),
                                     full_range_ ? 1 : 0, 0, 1 << 16, 1 << 16);
            yuv_sws_format_ = format;
        }
        if (sws_scale(yuv_sws_.get(), planes, strides, 0, h, f->data, f->linesize) != h) {
            if (error) *error = "writing '" + path_ + "': sws_scale failed (video_writer.cpp)";
            return false;
        }
    }
    pad_edges();
    f->pts = next_pts_++;
    return encode(f, error);
}

// Padding repeats the last column/row so the encoder spends no bits on an artificial edge.
void LibavWriter::pad_edges() {
    if (coded_ == size_) return;
    const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(pixel_format_);
    AVFrame* f = frame_.get();
    for (int p = 0; p < 4 && f->data[p]; ++p) {
        const int sw = (p == 1 || p == 2) ? desc->log2_chroma_w : 0;
        const int sh = (p == 1 || p == 2) ? desc->log2_chroma_h : 0;
        const int w = AV_CEIL_RSHIFT(size_.width, sw), cw = AV_CEIL_RSHIFT(coded_.width, sw);
        const int h = AV_CEIL_RSHIFT(size_.height, sh), ch = AV_CEIL_RSHIFT(coded_.height, sh);
        for (int y = 0; y < h && cw > w; ++y) {
            std::uint8_t* row = f->data[p] + static_cast<std::ptrdiff_t>(y) * f->linesize[p];
            std::memset(row + w, row[w - 1], cw - w);
        }
        for (int y = h; y < ch; ++y)
            std::memcpy(f->data[p] + static_cast<std::ptrdiff_t>(y) * f->linesize[p],
                        f->data[p] + static_cast<std::ptrdiff_t>(h - 1) * f->linesize[p], cw);
    }
}

bool LibavWriter::encode(const AVFrame* frame, std::string* error) {
    AVCodecContext* cc = codec_.get();
    AVPacket* pkt = packet_.get();
    if (!CT_AV_CHECK(avcodec_send_frame(cc, frame), error)) return false;
    for (;;) {
        int ret = avcodec_receive_packet(cc, pkt);
        if (ret == AVERROR(EAGAIN) || ret == AVERROR_EOF) return true;
        if (!CT_AV_CHECK(ret, error)) return false;
        if (pkt->duration <= 0) pkt->duration = 1;  // one frame in the encoder's time base
        av_packet_rescale_ts(pkt, cc->time_base, stream_->time_base);
        pkt->stream_index = stream_->index;
        // Takes the packet's reference and leaves pkt blank for the next one.
        if (!CT_AV_CHECK(av_interleaved_write_frame(format_, pkt), error)) return false;
        // avio reports a failed flush of its buffer (a full disk) only here.
        if (format_->pb && !CT_AV_CHECK(format_->pb->error, error)) return false;
    }
}

bool LibavWriter::close(std::string* error) {
    if (!open_) return true;
    open_ = false;
    bool ok = encode(nullptr, error);
    if (ok) ok = CT_AV_CHECK(av_write_trailer(format_), error);
    if (format_->pb && !(format_->oformat->flags & AVFMT_NOFILE)) {
        avio_flush(format_->pb);
        if (ok) ok = CT_AV_CHECK(format_->pb->error, error);
        int ret = avio_closep(&format_->pb);
        if (ok) ok = CT_AV_CHECK(ret, error);
    }
    release();
    return ok;
}

void LibavWriter::release() {
    open_ = false;
    rgb_sws_.reset();
    gray_sws_.reset();
    yuv_sws_.reset();
    packet_.reset();
    frame_.reset();
    codec_.reset();
    if (format_) {
        if (format_->pb && !(format_->oformat->flags & AVFMT_NOFILE)) avio_closep(&format_->pb);
        avformat_free_context(format_);
        format_ = nullptr;
    }
    stream_ = nullptr;
}

}  // namespace

bool VideoWriter::check_path(const std::string& path, std::string* error) {
    if (av_guess_format(nullptr, path.c_str(), nullptr)) return true;
    if (error)
        *error = "cannot write '" + path +
                 "': FFmpeg knows no container for this file name (use .mp4, .mkv, .avi, or a numbered image "
                 "pattern such as img/%05d.png)";
    return false;
}

const char* to_string(VideoQuality q) {
    return q == VideoQuality::kFast ? "fast" : q == VideoQuality::kBest ? "best" : "balanced";
}

bool parse_video_quality(const std::string& text, VideoQuality* out) {
    for (VideoQuality q : {VideoQuality::kFast, VideoQuality::kBalanced, VideoQuality::kBest})
        if (text == to_string(q)) {
            *out = q;
            return true;
        }
    return false;
}

std::unique_ptr<VideoWriter> VideoWriter::open(const std::string& path, Size size, const VideoWriterOptions& options,
                                               std::string* error) {
    std::string note;
    if (options.hardware && options.codec.empty() && options.crf > 0) {
        const AVOutputFormat* f = av_guess_format(nullptr, path.c_str(), nullptr);
        if (!f || is_image_muxer(f)) {
            // numbered images: no video encoder to speed up
        } else if (!avcodec_find_encoder_by_name("h264_nvenc")) {
            note = "this FFmpeg has no h264_nvenc encoder";
        } else if (!cuda_available()) {
            note = "no CUDA GPU for NVENC";
        } else {
            VideoWriterOptions hw = options;
            hw.codec = "h264_nvenc";
            auto writer = std::make_unique<LibavWriter>();
            std::string why;
            if (writer->open(path, size, hw, &why)) return writer;
            note = "NVENC did not open (" + why + ")";
        }
    }
    auto writer = std::make_unique<LibavWriter>();
    writer->set_note(note);
    if (!writer->open(path, size, options, error)) return nullptr;
    return writer;
}

}  // namespace corrtrack
