#include "render/nv12_frame.h"

namespace corrtrack {

bool device_nv12_planes(const Frame& frame, Nv12Planes* out) {
    if (!frame.on_device()) return false;
    *out = Nv12Planes{};
    out->width = frame.width;
    out->height = frame.height;
    out->y = frame.device.data;
    out->y_pitch = frame.device.pitch;
    out->uv = frame.device.uv;
    out->uv_pitch = frame.device.uv_pitch;
    out->matrix = frame.device.format.matrix;
    out->full_range = frame.device.format.full_range;
    return true;
}

}  // namespace corrtrack
