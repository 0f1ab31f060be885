// The planes of an NVDEC frame for display: NV12's Y plane and its interleaved UV plane, with
// the frame's colour matrix and range, as Frame::device carries them (frame_convert.cpp).
// Thread rules: pure functions; the planes stay valid while the Frame's owner lives.
#pragma once

#include <cstddef>
#include <cstdint>

#include "app/io/frame.h"
#include "render/yuv_rgb.h"

namespace corrtrack {

// Device pointers. uv == nullptr shows the luma plane as grey (U = V = 128).
struct Nv12Planes {
    int width = 0, height = 0;
    const std::uint8_t* y = nullptr;
    std::size_t y_pitch = 0;           // bytes
    const std::uint8_t* uv = nullptr;  // (width + 1) / 2 pairs U, V per row, (height + 1) / 2 rows
    std::size_t uv_pitch = 0;          // bytes
    YuvMatrix matrix = YuvMatrix::kBt601;
    bool full_range = false;
};

// The planes of `frame` when it is an NVDEC frame; false for software frames. Where the
// decoder's surface is not NV12, uv stays null (grey).
bool device_nv12_planes(const Frame& frame, Nv12Planes* out);

}  // namespace corrtrack
