// Where the e2e bench's --targets boxes go: N boxes of one size on a grid over the frame, one
// per cell, each moved within its cell to where the first frame has the most texture (the
// largest grey-level standard deviation under the box), so that no target sits on flat colour
// (a flat template has nothing to correlate: the tracker refuses it). Where flat cells leave
// fewer than N textured ones (testsrc2's colour bars), a finer grid is taken and N of its
// textured cells, spread evenly; boxes then overlap.
// Thread rules: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "app/track/types.h"

namespace corrtrack {

// A box counts as textured at this grey-level standard deviation or more.
constexpr double kTexturedStdDev = 8.0;

struct TargetGrid {
    int cols = 0, rows = 0;  // the grid the boxes came from: cols x rows >= n, cells about square
    std::vector<BoxF> boxes;
    std::vector<double> std_dev;  // under each box, on the given frame
    int textured = 0;             // boxes with std_dev >= kTexturedStdDev
};

// n boxes of box_w x box_h on a frame of width x height (luma: rows packed, pitch == width),
// in grid order. Each cell is searched for its most textured position every `step` pixels (0:
// a quarter of the box's shorter side); when a box is larger than its cell, each is centred on
// its cell as far as the frame allows. Without n textured cells even on the finest grid, the
// most textured of the others fill up. Empty when n < 1 or the box does not fit.
TargetGrid grid_targets(const std::uint8_t* luma, int width, int height, int box_w, int box_h, int n, int step = 0);

}  // namespace corrtrack
