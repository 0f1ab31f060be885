// The tracker's device-side steps: sampling search patches out of a device frame into one
// atlas (the same arithmetic as resample.cpp, bit for bit), and the motion-penalised peak of
// every map in one launch, so a whole frame's search costs one round trip.
// Thread rules: launchers queue work on the caller's stream and never synchronize; the
// caller owns every buffer and keeps it alive until the stream has passed the work.
#pragma once

#include <cstdint>
#include <vector>

#include "corrtrack/image.h"
#include "corrtrack/peak.h"

namespace corrtrack {

// One patch to sample: output pixel (u, v) covers the source rectangle
// [ox + u*scale, ox + (u+1)*scale) x [oy + v*scale, ...), written to atlas row dst_row + v.
struct SampleItem {
    double ox = 0, oy = 0, scale = 1;
    int width = 0, height = 0;
    int dst_row = 0;
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

void launch_sample_patches(ImageView frame, const std::vector<SampleItem>& items, std::uint8_t* atlas,
                           std::size_t atlas_pitch, void* stream);
void launch_ranked_peaks(const float* maps, const std::vector<PeakItem>& items, RankedPeak* out, void* stream);

}  // namespace corrtrack
