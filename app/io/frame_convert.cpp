// Frame conversion (swscale, luma, RGB, NVDEC surfaces); see frame_convert.h.
#include "app/io/frame_convert.h"

#include "app/io/av_log.h"

extern "C" {
#include <libavutil/hwcontext.h>
#include <libavutil/pixdesc.h>
}

#include <cstddef>
#include <cstring>
#include <type_traits>

namespace corrtrack {
namespace {

// FFmpeg copies a stream's colour fields into AVFrame's enums unchecked (a damaged H.264 VUI
// can give colorspace 214), and loading an enum outside its values is undefined behaviour:
// these fields are read as their raw integers.
template <typename E>
int raw_enum(const E& e) {
    std::underlying_type_t<E> v;
    std::memcpy(&v, &e, sizeof v);
    return static_cast<int>(v);
}

AVPixelFormat without_jpeg_range(AVPixelFormat f, bool* full_range) {
    switch (f) {
    case AV_PIX_FMT_YUVJ420P: *full_range = true; return AV_PIX_FMT_YUV420P;
    case AV_PIX_FMT_YUVJ422P: *full_range = true; return AV_PIX_FMT_YUV422P;
    case AV_PIX_FMT_YUVJ444P: *full_range = true; return AV_PIX_FMT_YUV444P;
    case AV_PIX_FMT_YUVJ440P: *full_range = true; return AV_PIX_FMT_YUV440P;
    case AV_PIX_FMT_YUVJ411P: *full_range = true; return AV_PIX_FMT_YUV411P;
    default: return f;
    }
}

// YUV of any layout: the tracker takes its Y values as they are (no range expansion), as
// NVDEC's device plane gives them, so every decoder hands the tracker the same pixels.
bool is_yuv(AVPixelFormat f) {
    const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(f);
    return d && d->nb_components >= 3 && !(d->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL));
}

// 8-bit Y in a plane of its own (yuv420p, nv12, yuvj422p, ...): copied row by row.
bool has_plain_y_plane(AVPixelFormat f) {
    const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(f);
    return is_yuv(f) && !(d->flags & AV_PIX_FMT_FLAG_BE) && d->comp[0].plane == 0 && d->comp[0].step == 1 &&
           d->comp[0].offset == 0 && d->comp[0].shift == 0 && d->comp[0].depth == 8;
}

}  // namespace

#define CT_AV_CHECK(call) check((call), #call, __LINE__)

bool FrameConverter::check(int ret, const char* call, int line) {
    if (ret >= 0) return true;
    error_ = av_call_error(name_, ret, call, __FILE__, line);
    return false;
}

void FrameConverter::configure(const std::string& name, bool want_rgb, bool want_yuv, bool want_host_luma) {
    name_ = name;
    want_rgb_ = want_rgb;
    want_yuv_ = want_yuv;
    want_host_luma_ = want_host_luma;
}

bool FrameConverter::convert(const AVFrame* f, Frame& out) {
    const Size decoded{f->width, f->height};
    if (decoded.width < 1 || decoded.height < 1) {
        error_ = "'" + name_ + "': the decoder returned a frame of size " + std::to_string(decoded.width) + "x" +
                 std::to_string(decoded.height);
        return false;
    }
    // The first frame fixes the size of every frame (see frame_source.h, resolution changes).
    if (out_size_.width == 0) out_size_ = decoded;
    if (f->format == AV_PIX_FMT_CUDA) {
        if (!convert_device(f, out)) return false;
    } else {
        out.device = DevicePlanes{};  // releases the surface a reused slot may still hold
        if (!convert_host(f, out)) return false;
    }
    out.decoded_size = decoded;
    return true;
}

void FrameConverter::count_resize(const Frame& out) {
    const Size decoded = out.decoded_size;
    if (decoded == out_size_ || resized_++ > 0) return;
    const std::string first = std::to_string(out_size_.width) + "x" + std::to_string(out_size_.height);
    resize_note_ = "frame " + std::to_string(out.index) + " is " + std::to_string(decoded.width) + "x" +
                   std::to_string(decoded.height) + " where the first frame was " + first +
                   ": frames of another size are scaled to " + first + " (boxes stay in the first frame's coordinates)";
}

// The swscale contexts for f's format, size and colours (rebuilt only when they change).
bool FrameConverter::prepare_conversion(const AVFrame* f) {
    const int w = f->width, h = f->height;
    bool full_range = raw_enum(f->color_range) == AVCOL_RANGE_JPEG;
    const AVPixelFormat src_format = without_jpeg_range(static_cast<AVPixelFormat>(f->format), &full_range);
    const int colorspace = raw_enum(f->colorspace);
    ConversionKey key{w, h, src_format, full_range ? 1 : 0, colorspace};
    if (key == conversion_key_) return true;
    conversion_key_ = ConversionKey{};
    const int ow = out_size_.width, oh = out_size_.height;
    gray_sws_.reset(sws_getCachedContext(gray_sws_.release(), w, h, src_format, ow, oh, AV_PIX_FMT_GRAY8,
                                         SWS_BILINEAR | SWS_ACCURATE_RND, nullptr, nullptr, nullptr));
    if (want_rgb_)
        rgb_sws_.reset(sws_getCachedContext(rgb_sws_.release(), w, h, src_format, ow, oh, AV_PIX_FMT_RGB24,
                                            SWS_BILINEAR | SWS_ACCURATE_RND, nullptr, nullptr, nullptr));
    yuv_copy_ = src_format == AV_PIX_FMT_YUV420P && Size{w, h} == out_size_;
    if (want_yuv_ && !yuv_copy_)
        yuv_sws_.reset(sws_getCachedContext(yuv_sws_.release(), w, h, src_format, ow, oh, AV_PIX_FMT_YUV420P,
                                            SWS_BILINEAR, nullptr, nullptr, nullptr));
    if (!gray_sws_ || (want_rgb_ && !rgb_sws_) || (want_yuv_ && !yuv_copy_ && !yuv_sws_)) {
        const char* fmt_name = av_get_pix_fmt_name(src_format);
        error_ = "'" + name_ + "': cannot convert frames of pixel format " + (fmt_name ? fmt_name : "unknown") +
                 " (sws_getCachedContext failed)";
        return false;
    }
    // Unspecified colorspace: BT.601, as swscale and most players assume for SD.
    int cs = colorspace == AVCOL_SPC_BT709                                             ? SWS_CS_ITU709
             : colorspace == AVCOL_SPC_BT2020_NCL || colorspace == AVCOL_SPC_BT2020_CL ? SWS_CS_BT2020
                                                                                       : SWS_CS_ITU601;
    const int* coeffs = sws_getCoefficients(cs);
    // Fails (-1) for RGB and grey sources, which have no YUV range to set: harmless. Grey
    // output keeps YUV's Y values (source range = output range); RGB is expanded for display.
    sws_setColorspaceDetails(gray_sws_.get(), coeffs, 1, coeffs, 1, 0, 1 << 16, 1 << 16);
    if (rgb_sws_) sws_setColorspaceDetails(rgb_sws_.get(), coeffs, full_range ? 1 : 0, coeffs, 1, 0, 1 << 16, 1 << 16);
    // The video's YUV keeps a YUV source's values (same matrix and range in and out); RGB and
    // grey sources get limited-range BT.601, what players assume without tags.
    const bool yuv_source = is_yuv(src_format);
    yuv_format_ = {yuv_source && cs == SWS_CS_ITU709   ? YuvMatrix::kBt709
                   : yuv_source && cs == SWS_CS_BT2020 ? YuvMatrix::kBt2020
                                                       : YuvMatrix::kBt601,
                   yuv_source && full_range};
    if (yuv_sws_ && yuv_source)
        sws_setColorspaceDetails(yuv_sws_.get(), coeffs, full_range ? 1 : 0, coeffs, full_range ? 1 : 0, 0, 1 << 16,
                                 1 << 16);
    conversion_key_ = key;
    return true;
}

bool FrameConverter::scale_rgb(const AVFrame* f, Frame& out) {
    const int w = out_size_.width, h = out_size_.height;
    out.rgb.resize(static_cast<std::size_t>(w) * 3 * h);
    uint8_t* rgb_dst[4] = {out.rgb.data(), nullptr, nullptr, nullptr};
    int rgb_stride[4] = {3 * w, 0, 0, 0};
    if (sws_scale(rgb_sws_.get(), f->data, f->linesize, 0, f->height, rgb_dst, rgb_stride) != h) {
        error_ = "'" + name_ + "': sws_scale to RGB24 failed (" + code_location(__FILE__, __LINE__) + ")";
        return false;
    }
    return true;
}

bool FrameConverter::fill_yuv(const AVFrame* f, Frame& out) {
    const int w = out_size_.width, h = out_size_.height, cw = (w + 1) / 2, ch = (h + 1) / 2;
    out.yuv.resize(yuv420_bytes(w, h));
    std::uint8_t* planes[4] = {out.yuv.data(), out.yuv.data() + static_cast<std::size_t>(w) * h,
                               out.yuv.data() + static_cast<std::size_t>(w) * h + static_cast<std::size_t>(cw) * ch,
                               nullptr};
    int strides[4] = {w, cw, cw, 0};
    out.yuv_format = yuv_format_;
    if (yuv_copy_) {
        for (int p = 0; p < 3; ++p)
            for (int y = 0; y < (p ? ch : h); ++y)
                std::memcpy(planes[p] + static_cast<std::size_t>(y) * strides[p],
                            f->data[p] + static_cast<std::ptrdiff_t>(y) * f->linesize[p], strides[p]);
        return true;
    }
    if (sws_scale(yuv_sws_.get(), f->data, f->linesize, 0, f->height, planes, strides) != h) {
        error_ = "'" + name_ + "': sws_scale to YUV 4:2:0 failed (" + code_location(__FILE__, __LINE__) + ")";
        return false;
    }
    return true;
}

bool FrameConverter::finish_host(const AVFrame* f, Frame& out) {
    if (want_rgb_) {
        if (!scale_rgb(f, out)) return false;
    } else {
        out.rgb.clear();
    }
    if (want_yuv_) return fill_yuv(f, out);
    out.yuv.clear();
    return true;
}

bool FrameConverter::convert_host(const AVFrame* f, Frame& out) {
    if (!prepare_conversion(f)) return false;
    const int w = out_size_.width, h = out_size_.height;
    out.width = w;
    out.height = h;
    out.luma.resize(static_cast<std::size_t>(w) * h);
    if (Size{f->width, f->height} == out_size_ && has_plain_y_plane(static_cast<AVPixelFormat>(f->format))) {
        for (int y = 0; y < h; ++y)
            std::memcpy(out.luma.data() + static_cast<std::size_t>(y) * w,
                        f->data[0] + static_cast<std::ptrdiff_t>(y) * f->linesize[0], w);
        return finish_host(f, out);
    }
    uint8_t* gray_dst[4] = {out.luma.data(), nullptr, nullptr, nullptr};
    int gray_stride[4] = {w, 0, 0, 0};
    if (sws_scale(gray_sws_.get(), f->data, f->linesize, 0, f->height, gray_dst, gray_stride) != h) {
        error_ = "'" + name_ + "': sws_scale to GRAY8 failed (" + code_location(__FILE__, __LINE__) + ")";
        return false;
    }
    return finish_host(f, out);
}

// An NVDEC frame: the Y plane stays on the device, kept mapped by a reference to the frame.
// Host copies only where asked for; each waits for the CUDA stream (cuda_transfer_data).
bool FrameConverter::convert_device(const AVFrame* f, Frame& out) {
    const int w = f->width, h = f->height;
    if (Size{w, h} != out_size_) {
        // Another size than the first frame's: the kernels cannot take it as is. The frame goes
        // to the host and is scaled there like a software frame (rare: a resolution change).
        out.device = DevicePlanes{};
        AVFrame* host = download_frame(f);
        return host && convert_host(host, out);
    }
    AVFrame* ref = av_frame_clone(f);
    if (!ref) {
        error_ = "'" + name_ + "': out of memory (av_frame_clone)";
        return false;
    }
    out.width = w;
    out.height = h;
    out.device.data = ref->data[0];
    out.device.pitch = static_cast<std::size_t>(ref->linesize[0]);
    const auto* frames =
        ref->hw_frames_ctx ? reinterpret_cast<const AVHWFramesContext*>(ref->hw_frames_ctx->data) : nullptr;
    const bool nv12 = frames && frames->sw_format == AV_PIX_FMT_NV12 && ref->data[1];
    out.device.uv = nv12 ? ref->data[1] : nullptr;
    out.device.uv_pitch = nv12 ? static_cast<std::size_t>(ref->linesize[1]) : 0;
    out.device.format = {ref->colorspace == AVCOL_SPC_BT709 ? YuvMatrix::kBt709
                         : ref->colorspace == AVCOL_SPC_BT2020_NCL || ref->colorspace == AVCOL_SPC_BT2020_CL
                             ? YuvMatrix::kBt2020
                             : YuvMatrix::kBt601,
                         ref->color_range == AVCOL_RANGE_JPEG};
    out.device.owner = std::shared_ptr<void>(ref, [](void* p) {
        auto* frame = static_cast<AVFrame*>(p);
        av_frame_free(&frame);
    });
    if (!want_rgb_ && !want_yuv_) {
        out.rgb.clear();
        out.yuv.clear();
        if (!want_host_luma_) {
            out.luma.clear();
            return true;
        }
        return download_luma(f, out);
    }
    // RGB and YUV 4:2:0 need the whole frame on the host: NV12 into a reused frame, then swscale.
    AVFrame* host = download_frame(f);
    if (!host) return false;
    if (want_host_luma_) {
        out.luma.resize(static_cast<std::size_t>(w) * h);
        for (int y = 0; y < h; ++y)
            std::memcpy(out.luma.data() + static_cast<std::size_t>(y) * w,
                        host->data[0] + static_cast<std::ptrdiff_t>(y) * host->linesize[0], w);
    } else {
        out.luma.clear();
    }
    return prepare_conversion(host) && finish_host(host, out);
}

// The whole NV12 frame in host memory (a frame reused while the size stays), or nullptr.
AVFrame* FrameConverter::download_frame(const AVFrame* f) {
    const int w = f->width, h = f->height;
    const auto* frames = reinterpret_cast<const AVHWFramesContext*>(f->hw_frames_ctx->data);
    AVFrame* host = host_frame_.get();
    if (!host || host->width != w || host->height != h || host->format != frames->sw_format) {
        host_frame_.reset(av_frame_alloc());
        host = host_frame_.get();
        if (!host) {
            error_ = "'" + name_ + "': out of memory (av_frame_alloc)";
            return nullptr;
        }
        host->format = frames->sw_format;
        host->width = w;
        host->height = h;
        if (!CT_AV_CHECK(av_frame_get_buffer(host, 0))) return nullptr;
    }
    if (!CT_AV_CHECK(av_hwframe_transfer_data(host, f, 0))) return nullptr;
    std::memcpy(&host->color_range, &f->color_range, sizeof host->color_range);  // raw: see raw_enum
    std::memcpy(&host->colorspace, &f->colorspace, sizeof host->colorspace);
    return host;
}

// Copies only the Y plane, straight into Frame::luma (pinned when a GPU is present):
// cuda_transfer_data copies the planes of the source up to the first null data pointer, so a
// reference to the frame with its chroma pointers cleared moves just the luma.
bool FrameConverter::download_luma(const AVFrame* f, Frame& out) {
    const int w = f->width, h = f->height;
    out.luma.resize(static_cast<std::size_t>(w) * h);
    if (!y_src_) y_src_.reset(av_frame_alloc());
    if (!y_dst_) y_dst_.reset(av_frame_alloc());
    AVFrame* src = y_src_.get();
    AVFrame* dst = y_dst_.get();
    if (!src || !dst) {
        error_ = "'" + name_ + "': out of memory (av_frame_alloc)";
        return false;
    }
    if (!CT_AV_CHECK(av_frame_ref(src, f))) return false;
    for (int i = 1; i < AV_NUM_DATA_POINTERS; ++i) src->data[i] = nullptr;
    const auto* frames = reinterpret_cast<const AVHWFramesContext*>(f->hw_frames_ctx->data);
    dst->format = frames->sw_format;
    dst->width = w;
    dst->height = h;
    dst->data[0] = out.luma.data();
    dst->linesize[0] = w;
    // av_hwframe_transfer_data wants an owned destination; this one owns nothing.
    dst->buf[0] = av_buffer_create(
        out.luma.data(), out.luma.size(), [](void*, uint8_t*) {}, nullptr, 0);
    bool ok = dst->buf[0] != nullptr;
    if (!ok)
        error_ = "'" + name_ + "': out of memory (av_buffer_create)";
    else
        ok = CT_AV_CHECK(av_hwframe_transfer_data(dst, src, 0));
    av_frame_unref(dst);
    av_frame_unref(src);
    return ok;
}

}  // namespace corrtrack
