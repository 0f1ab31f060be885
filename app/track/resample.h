// Sampling a search patch or template out of a frame at a given scale, with border
// replication: integer copies at scale 1, bilinear up to 1.25, area averaging above.
// Thread rules: pure functions; the scratch buffer belongs to the caller's thread.
#pragma once

#include <cstdint>
#include <vector>

#include "corrtrack/image.h"
#include "corrtrack/ncc_math.h"  // CORRTRACK_HD

namespace corrtrack {

// lroundf clamped to 0..255, without the library call: the host sampler and the device's
// (device_search.cu) both round through this, so they agree bit for bit.
CORRTRACK_HD std::uint8_t round_to_u8(float v) {
    if (!(v > 0.0f)) return 0;
    if (v >= 255.0f) return 255;
    const int i = static_cast<int>(v);  // floor, v > 0; v - i is exact
    return static_cast<std::uint8_t>(i + (v - static_cast<float>(i) >= 0.5f ? 1 : 0));
}

struct ResampleScratch {
    std::vector<int> bx0, bx1;              // bilinear: per output column, the two source columns
    std::vector<float> bfx;                 // ... and the weight of the second
    std::vector<float> rows;                // horizontally filtered source rows
    std::vector<int> col_first, col_count;  // per output column: first source column, count
    std::vector<float> col_weights;         // flattened weights
    std::vector<int> col_index;             // per tap and output column: the clamped source column
    std::vector<float> col_weights_by_tap;  // ... and its weight (zero past the column's taps)
    std::vector<float> source_row;          // one source row's columns read, as floats
    std::vector<float> acc;                 // one output row's column sums
    std::vector<int> row_first, row_count;  // the same for output rows
    std::vector<float> row_weights;
};

// Output pixel (u, v) covers the source rectangle [ox + u*s, ox + (u+1)*s) x
// [oy + v*s, oy + (v+1)*s) in continuous coordinates, where source pixel i covers [i, i+1).
// Pixels outside the source repeat its border.
void sample_patch(ImageView src, double ox, double oy, double scale, Size out_size, std::uint8_t* out,
                  std::size_t out_pitch, ResampleScratch& scratch);

}  // namespace corrtrack
