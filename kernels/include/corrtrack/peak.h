// Peak search shared by all kernels: integer argmax, sub-pixel refinement and a confidence.
// Thread rules: pure functions over host memory (the CUDA peak search, cuda_peak.h, shares
// parabolic_offset with it so that both refine alike).
#pragma once

#include "corrtrack/image.h"
#include "corrtrack/ncc_math.h"  // CORRTRACK_HD

namespace corrtrack {

struct Peak {
    int x = 0, y = 0;            // integer argmax in map coordinates
    float sub_x = 0, sub_y = 0;  // refined position (x + dx, y + dy), |dx|,|dy| <= 0.5
    float score = 0;             // map value at the argmax
    float second = 0;            // best value outside the exclusion zone around the peak
    float psr = 0;               // peak-to-sidelobe ratio: (score - mean) / stddev outside it
};

struct PeakOptions {
    // Half-size of the zone around the peak left out of the sidelobe statistics; <= 0 picks
    // max(2, min(map w, map h) / 8).
    int exclusion_radius = 0;
};

// Sub-pixel refinement: a separable three-point parabola through the peak and its
// neighbours on each axis (the vertex of the fitted parabola), skipped at the map border.
Peak find_peak(const MapView& map, PeakOptions opt = {});

// Vertex offset of the parabola through (-1, a), (0, b), (1, c), clamped to [-0.5, 0.5].
// Host and device code, rounding alike: 2b and 0.5(a - c) are exact, so an FMA contraction
// cannot change a result, and the device spells out each IEEE operation so that no fast-math
// flag (approximate division) can make the CUDA peak search disagree with find_peak.
CORRTRACK_HD float parabolic_offset(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
    const float denom = __fadd_rn(__fsub_rn(a, __fmul_rn(2.0f, b)), c);
#else
    const float denom = a - 2.0f * b + c;
#endif
    if (!(denom < 0.0f)) return 0.0f;  // not a maximum (flat or NaN): keep the integer peak
#if defined(__CUDA_ARCH__)
    const float d = __fdiv_rn(__fmul_rn(0.5f, __fsub_rn(a, c)), denom);
#else
    const float d = 0.5f * (a - c) / denom;
#endif
    return d < -0.5f ? -0.5f : (0.5f < d ? 0.5f : d);  // std::clamp(d, -0.5f, 0.5f)
}

}  // namespace corrtrack
