// One decoded frame: 8-bit luma for the correlation kernels plus optional RGB for display
// and annotated output.
// Thread rules: a Frame belongs to one thread at a time; the frame ring hands it over.
#pragma once

#include <cstdint>
#include <vector>

#include "corrtrack/image.h"

namespace corrtrack {

struct Frame {
    long index = -1;          // 0-based position in the source
    double pts = 0.0;         // presentation time in seconds from the stream start
    int width = 0, height = 0;
    std::vector<std::uint8_t> luma;  // width x height, rows packed (pitch == width)
    std::vector<std::uint8_t> rgb;   // width*3 x height, packed RGB24; empty when not asked for
    double decode_ms = 0.0;   // host time spent decoding and converting this frame

    ImageView luma_view() const {
        return {luma.data(), width, height, static_cast<std::size_t>(width), MemorySpace::kHost};
    }
    Size size() const { return {width, height}; }
};

}  // namespace corrtrack
