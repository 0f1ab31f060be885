// One decoded frame: 8-bit luma for the correlation kernels plus optional RGB for display
// and annotated output. Software decode fills host buffers (pinned when a GPU is present);
// NVDEC leaves the luma plane in device memory, kept alive by the decoder's frame reference.
// Thread rules: a Frame belongs to one thread at a time; the frame ring hands it over.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "app/io/host_buffer.h"
#include "app/util/colour.h"
#include "corrtrack/image.h"

namespace corrtrack {

// Bytes of a packed 8-bit YUV 4:2:0 picture: Y (w x h), then U and V ((w+1)/2 x (h+1)/2 each).
inline std::size_t yuv420_bytes(int w, int h) {
    return static_cast<std::size_t>(w) * h + 2 * static_cast<std::size_t>((w + 1) / 2) * ((h + 1) / 2);
}

// The planes of a hardware-decoded NV12 frame in device memory: Y (8-bit, pitch in bytes), and
// the interleaved UV plane ((width + 1) / 2 pairs a row, (height + 1) / 2 rows) with the
// source's colour tags, for display and for colour on the device.
struct DevicePlanes {
    const std::uint8_t* data = nullptr;  // Y
    std::size_t pitch = 0;
    const std::uint8_t* uv = nullptr;  // null when the decoder's surface is not NV12
    std::size_t uv_pitch = 0;
    YuvFormat format;             // unspecified matrices count as BT.601, as swscale assumes
    std::shared_ptr<void> owner;  // the AVFrame reference; releasing it recycles the surface
};

struct Frame {
    long index = -1;   // 0-based position in the source (a frame lost in decoding
                       // leaves a gap: indices are source positions, not a count)
    double pts = 0.0;  // presentation time in seconds from the stream start
    int width = 0, height = 0;
    Size decoded_size;       // as decoded: differs from width x height when the input changed
                             // resolution and this frame was scaled to the first frame's size
    HostBuffer luma;         // width x height, rows packed (pitch == width); empty when only
                             // the device plane exists
    HostBuffer rgb;          // width*3 x height, packed RGB24; empty when not asked for
    HostBuffer yuv;          // the picture as packed YUV 4:2:0 (yuv420_bytes), for the annotated
                             // video: the decoder's own planes where it gives 4:2:0, so no colour
                             // conversion; empty when not asked for
    YuvFormat yuv_format;    // how yuv's values map to colour (the source's tags)
    DevicePlanes device;     // set by NVDEC decode, else empty
    double decode_ms = 0.0;  // host time spent decoding and converting this frame
    std::chrono::steady_clock::time_point decode_start;  // when the decoder began this frame

    bool has_host_luma() const { return !luma.empty(); }
    bool on_device() const { return device.data != nullptr; }
    ImageView host_luma_view() const {
        return {luma.data(), width, height, static_cast<std::size_t>(width), MemorySpace::kHost};
    }
    ImageView device_luma_view() const { return {device.data, width, height, device.pitch, MemorySpace::kDevice}; }
    // The device plane when there is no host copy, else the host one.
    ImageView luma_view() const { return has_host_luma() ? host_luma_view() : device_luma_view(); }
    Size size() const { return {width, height}; }
    // Luma (as luma_view()) with the chroma planes of yuv where it was asked for and the
    // luma is on the host.
    FrameView frame_view() const {
        if (yuv.empty() || !has_host_luma()) return luma_view();
        const int cw = (width + 1) / 2, ch = (height + 1) / 2;
        const std::uint8_t* u = yuv.data() + static_cast<std::size_t>(width) * height;
        const std::uint8_t* v = u + static_cast<std::size_t>(cw) * ch;
        return {host_luma_view(), {u, cw, ch, static_cast<std::size_t>(cw)}, {v, cw, ch, static_cast<std::size_t>(cw)}};
    }
};

}  // namespace corrtrack
