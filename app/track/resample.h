// Sampling a search patch or template out of a frame at a given scale, with border
// replication: integer copies at scale 1, bilinear up to 1.25, area averaging above.
// Thread rules: pure functions; the scratch buffer belongs to the caller's thread.
#pragma once

#include <cstdint>
#include <vector>

#include "corrtrack/image.h"

namespace corrtrack {

struct ResampleScratch {
    std::vector<float> rows;               // horizontally filtered source rows
    std::vector<int> col_first, col_count; // per output column: first source column, count
    std::vector<float> col_weights;        // flattened weights
    std::vector<int> row_first, row_count; // the same for output rows
    std::vector<float> row_weights;
};

// Output pixel (u, v) covers the source rectangle [ox + u*s, ox + (u+1)*s) x
// [oy + v*s, oy + (v+1)*s) in continuous coordinates, where source pixel i covers [i, i+1).
// Pixels outside the source repeat its border.
void sample_patch(ImageView src, double ox, double oy, double scale, Size out_size,
                  std::uint8_t* out, std::size_t out_pitch, ResampleScratch& scratch);

}  // namespace corrtrack
