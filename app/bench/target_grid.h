// Where the e2e bench's --targets boxes go: N boxes of one size on a grid over the frame, one
// per cell, each moved within its cell to where the first frame has the most texture (the
// largest grey-level standard deviation under the box), so that no target sits on flat colour
// (a flat template has nothing to correlate: the tracker refuses it). Where flat cells leave
// fewer than N textured ones (testsrc2's colour bars), a finer grid is taken and N of its
// textured cells, spread evenly; boxes then overlap. The crowded layout (issue 30) instead
// packs boxes at fixed positions, overlapping their neighbours: crowd_targets().
// Thread rules: pure functions.
#pragma once

#include <cstdint>
#include <string>
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

// Where `corrtrack bench --e2e --targets` puts its boxes (--layout).
enum class TargetLayout { kGrid, kCrowded };
const char* to_string(TargetLayout layout);
bool parse_target_layout(const std::string& text, TargetLayout* out);

// The crowded layout, as issue 30 measured it: up to kCrowdColumns boxes a row, starting
// kCrowdOrigin px from the top-left corner, 1.45 box widths apart across (58 px for 40 px boxes,
// 18 px of gap) and box_h - box_h / 5 apart down (32 px for 40 px: each box overlaps the one
// below by 8 px), row after row while they fit the frame (1024 boxes of 40x40 fill 32 rows of
// 1080p). Fewer columns where the frame is narrower. When n boxes do not fit one layer, the
// next layer starts half a pitch right and down, overlapping the first. Positions whose box
// would be flat (grey-level standard deviation below kFlatStdDev; the tracker refuses a template
// under 1, and resampling smooths) are
// skipped and the pattern goes on. Empty when n < 1 or not even one box fits.
constexpr int kCrowdColumns = 32;
constexpr int kCrowdOrigin = 8;
constexpr double kFlatStdDev = 2.0;
struct CrowdPitch {
    int across = 0, down = 0;
};
CrowdPitch crowd_pitch(int box_w, int box_h);
TargetGrid crowd_targets(const std::uint8_t* luma, int width, int height, int box_w, int box_h, int n);

// Either layout: grid_targets or crowd_targets.
TargetGrid layout_targets(TargetLayout layout, const std::uint8_t* luma, int width, int height, int box_w, int box_h,
                          int n);

}  // namespace corrtrack
