// A frame's pyramid for sampling large targets: level k halves level k-1 (2x2 mean, rounded
// to nearest), so a level-k pixel stands for the frame's 2^k x 2^k block. A patch at scale s
// (frame pixels per patch pixel) is sampled from the deepest level with 2^k <= s, so area
// averaging never reads more than about four source pixels per output pixel whatever the
// target's size. The GPU builds the same levels bit for bit (device_search.cu).
// Thread rules: one thread uses a HostPyramid; the functions are pure.
#pragma once

#include <cstdint>
#include <vector>

#include "corrtrack/image.h"

namespace corrtrack {

constexpr int kMaxPyramidLevels = 8;  // level 7: 1/128 of the frame

// The level a patch at `scale` is sampled from, and the patch's origin and scale in that
// level's pixels (exact: divisions by powers of two).
struct LevelSample {
    int level = 0;
    double ox = 0, oy = 0, scale = 1;
};
LevelSample level_sample(double ox, double oy, double scale);

Size pyramid_level_size(Size frame, int level);

// dst(i, j) = (sum of src's 2x2 block at (2i, 2j), edge pixels repeated + 2) >> 2, for the
// output pixels in `region` (all of them when it is empty); dst is the whole level's buffer.
void halve_image(ImageView src, std::uint8_t* dst, std::size_t dst_pitch, Rect region = {});

// The pixels of a level that sampling a patch reads (with a pixel of margin), clipped to it.
// Border replication reads only edge pixels, which HostPyramid::level always includes.
Rect level_region(const LevelSample& s, Size patch, Size level_size);

// Building a level only where it is read (HostPyramid here, DevicePyramid on the GPU): `need`
// clipped to a level of `size` (not empty), at least one pixel, since a patch wholly outside
// still reads the border pixels that replication repeats.
Rect clip_to_level(Rect need, Size size);
// The one rectangle to build a level in, valid so far in `valid` (empty: nowhere), so that it
// covers `need` (clipped) as well: both together; empty when `valid` covers `need` already.
Rect region_to_build(Rect valid, Rect need);

class HostPyramid {
public:
    // Level 0 is `frame` itself (not copied; it must outlive the use). Deeper levels are
    // built where they are asked for, and kept until the next reset: a small target in a
    // large frame costs a small region, not the whole level.
    void reset(ImageView frame);
    // Level k, valid at least inside `need` (level coordinates, clipped to the level).
    ImageView level(int k, Rect need);

private:
    ImageView view(int k) const;
    ImageView base_;
    Rect built_[kMaxPyramidLevels];  // the valid region of each level this frame
    std::vector<std::uint8_t> storage_[kMaxPyramidLevels];
};

}  // namespace corrtrack
