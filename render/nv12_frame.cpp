#include "render/nv12_frame.h"

extern "C" {
#include <libavutil/frame.h>
#include <libavutil/hwcontext.h>
#include <libavutil/pixfmt.h>
}

namespace corrtrack {

bool device_nv12_planes(const Frame& frame, Nv12Planes* out) {
    if (!frame.on_device() || !frame.device.owner) return false;
    // frame.h documents the owner as the decoder's AVFrame reference; the checks below make
    // sure it is one for this plane before anything else is read from it.
    const auto* f = static_cast<const AVFrame*>(frame.device.owner.get());
    if (f->data[0] != frame.device.data || f->format != AV_PIX_FMT_CUDA || !f->hw_frames_ctx) return false;
    const auto* frames = reinterpret_cast<const AVHWFramesContext*>(f->hw_frames_ctx->data);
    *out = Nv12Planes{};
    out->width = frame.width;
    out->height = frame.height;
    out->y = frame.device.data;
    out->y_pitch = frame.device.pitch;
    if (frames->sw_format == AV_PIX_FMT_NV12 && f->data[1]) {
        out->uv = f->data[1];
        out->uv_pitch = static_cast<std::size_t>(f->linesize[1]);
    }
    out->matrix = f->colorspace == AVCOL_SPC_BT709                                                ? YuvMatrix::kBt709
                  : f->colorspace == AVCOL_SPC_BT2020_NCL || f->colorspace == AVCOL_SPC_BT2020_CL ? YuvMatrix::kBt2020
                                                                                                  : YuvMatrix::kBt601;
    out->full_range = f->color_range == AVCOL_RANGE_JPEG;
    return true;
}

}  // namespace corrtrack
