// The tracker's device-side steps: the frame's pyramid, sampling search patches out of it
// into one atlas (the same arithmetic as pyramid.cpp and resample.cpp, bit for bit), and the
// motion-penalised peak of every map in one launch, so a whole frame's search costs one
// round trip.
// Thread rules: launchers queue work on the caller's stream and never synchronize; the
// caller owns every buffer and keeps it alive until the stream has passed the work.
#pragma once

#include <cstdint>
#include <vector>

#include "app/track/pyramid.h"
#include "corrtrack/image.h"
#include "corrtrack/peak.h"

namespace corrtrack {

// One patch to sample from pyramid level `level`: output pixel (u, v) covers that level's
// rectangle [ox + u*scale, ox + (u+1)*scale) x [oy + v*scale, ...) (level coordinates), and
// is written to dst[dst_offset + v * dst_pitch + u].
struct SampleItem {
    double ox = 0, oy = 0, scale = 1;
    int width = 0, height = 0;
    int level = 0;
    std::size_t dst_offset = 0, dst_pitch = 0;
};

// The pyramid's levels on the device (pyramid.h): level 0 is the frame.
struct DeviceLevels {
    ImageView level[kMaxPyramidLevels];
};

// One map to search: `height` rows of `width` floats starting at `offset` floats into the
// map buffer (pitch == width). penalty: the motion penalty's weight at the window edge
// (0: none). Results are find_peak's on the penalised map, except that score, sub_x and
// sub_y come from the raw map (as the host tracker ranks and refines).
struct PeakItem {
    std::size_t offset = 0;
    int width = 0, height = 0;
    double penalty = 0;
};

struct RankedPeak {
    Peak peak;
    float ranked = 0;  // the penalised map's value at the peak
};

// At most this many items per launch (they travel as kernel parameters); longer lists are
// split into several launches by the launchers.
constexpr int kMaxItemsPerLaunch = 32;

// The gradient channel (gradient.h) of one atlas patch: reads `width` x `height` pixels at
// src_offset, writes the same shape at dst_offset (both with `pitch`).
struct GradientItem {
    std::size_t src_offset = 0, dst_offset = 0, pitch = 0;
    int width = 0, height = 0;
};

// Blends one gradient map into its grey-level map (gradient.h's blend_maps): `count` floats.
struct BlendItem {
    std::size_t grey_offset = 0, gradient_offset = 0, count = 0;
    float weight = 0;
};

// Level k + 1 from level k (pyramid.h's halve_image, bit for bit) for the output pixels in
// `region` (all of them when it is empty); dst is the whole level's buffer, with the pitch given.
void launch_halve(ImageView src, std::uint8_t* dst, std::size_t dst_pitch, Rect region, void* stream);
void launch_sample_patches(const DeviceLevels& levels, const std::vector<SampleItem>& items, std::uint8_t* dst,
                           void* stream);
void launch_gradient_patches(std::uint8_t* atlas, const std::vector<GradientItem>& items, void* stream);
void launch_blend_maps(float* maps, const std::vector<BlendItem>& items, void* stream);
void launch_ranked_peaks(const float* maps, const std::vector<PeakItem>& items, RankedPeak* out, void* stream);

}  // namespace corrtrack
