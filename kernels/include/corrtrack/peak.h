// Peak search shared by all kernels: integer argmax, sub-pixel refinement and a confidence.
// Thread rules: pure functions over host memory (the CUDA peak search lives in cuda/).
#pragma once

#include "corrtrack/image.h"

namespace corrtrack {

struct Peak {
    int x = 0, y = 0;          // integer argmax in map coordinates
    float sub_x = 0, sub_y = 0;  // refined position (x + dx, y + dy), |dx|,|dy| <= 0.5
    float score = 0;           // map value at the argmax
    float second = 0;          // best value outside the exclusion zone around the peak
    float psr = 0;             // peak-to-sidelobe ratio: (score - mean) / stddev outside it
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
float parabolic_offset(float a, float b, float c);

}  // namespace corrtrack
