// The optional gradient channel (--gradient W): the edge strength of a patch, matched beside
// its grey levels. NCC on grey levels follows brightness patterns, which lighting, shadows
// and low contrast wash out; the gradient magnitude keeps the target's outline. Both search
// backends compute it from the sampled patch with this one function (the GPU bit for bit), so
// template and window see the same operator.
// Thread rules: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "corrtrack/image.h"

namespace corrtrack {

// out(x, y) = (|in(x+1, y) - in(x-1, y)| + |in(x, y+1) - in(x, y-1)| + 1) / 2, with the
// patch's edge pixels repeated outside it. in and out are packed rows of `size`.
void gradient_patch(const std::uint8_t* in, Size size, std::uint8_t* out);

// The map combined from the grey-level map and the gradient map of the same window:
// grey + weight * (gradient - grey), in place over `grey`.
void blend_maps(float* grey, const float* gradient, std::size_t count, float weight);

}  // namespace corrtrack
