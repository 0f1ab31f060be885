// 8-bit Y'CbCr to RGB in 16.16 fixed point, for the video view: the same integer arithmetic on
// the host (fallback, tests) and in the CUDA NV12 -> RGBA kernel, so both give identical pixels.
// Thread rules: pure functions.
#pragma once

#include <cstdint>

#include "app/util/colour.h"  // YuvMatrix

#if defined(__CUDACC__)
#define CORRTRACK_HOST_DEVICE __host__ __device__
#else
#define CORRTRACK_HOST_DEVICE
#endif

namespace corrtrack {

const char* to_string(YuvMatrix m);  // "BT.601", "BT.709", "BT.2020"

// R = (cy*(Y - y_offset) + crv*(V-128)) >> 16, G = (cy*(Y - y_offset) - cgu*(U-128) - cgv*(V-128)) >> 16,
// B = (cy*(Y - y_offset) + cbu*(U-128)) >> 16, each rounded (+0.5) and clamped to 0..255.
// Limited range: y_offset 16, cy = 255/219, chroma scaled by 255/224; full range: 0, 1, 1.
struct YuvToRgb {
    int y_offset = 16;
    int cy = 0, crv = 0, cgu = 0, cgv = 0, cbu = 0;  // scaled by 65536, rounded to nearest
};

// Kr, Kb of the matrix (BT.601: 0.299, 0.114; BT.709: 0.2126, 0.0722; BT.2020: 0.2627, 0.0593).
YuvToRgb yuv_to_rgb_coefficients(YuvMatrix matrix, bool full_range);

CORRTRACK_HOST_DEVICE inline std::uint8_t yuv_clamp_shift(int v) {
    v = (v + 32768) >> 16;  // arithmetic shift: negative sums stay negative and clamp to 0
    return static_cast<std::uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v);
}

// One pixel; out[3] (alpha) is 255.
CORRTRACK_HOST_DEVICE inline void yuv_to_rgba(int y, int u, int v, const YuvToRgb& k, std::uint8_t out[4]) {
    const int yy = k.cy * (y - k.y_offset);
    u -= 128;
    v -= 128;
    out[0] = yuv_clamp_shift(yy + k.crv * v);
    out[1] = yuv_clamp_shift(yy - k.cgu * u - k.cgv * v);
    out[2] = yuv_clamp_shift(yy + k.cbu * u);
    out[3] = 255;
}

}  // namespace corrtrack
