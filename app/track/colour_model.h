// A target's colour model: the complementary learner of Staple (Bertinetto et al., CVPR 2016)
// and the colour model of DAT (Possegger et al., CVPR 2015). Histograms of the pixels inside
// the box (foreground) and of a ring around it (background) give every colour bin a
// likelihood of being the target; a candidate box scores the mean likelihood of its pixels.
// Unlike a grey template it does not care where in the box a colour lies, so it holds
// through deformation and rotation, and it fails in other ways (a background of the target's
// colours), which is why it is blended with the NCC rather than used alone.
// Bins: 8 luma x 16 x 16 chroma levels of YUV 4:2:0 (no RGB conversion). A grey source (no
// chroma planes, or chroma flat around the target at the start: thermal, night) has no model:
// a luma histogram there cost accuracy on the tune half, so the NCC decides alone.
// Thread rules: plain state, driven by the MultiTracker's thread.
#pragma once

#include <cstdint>
#include <vector>

#include "app/track/types.h"
#include "corrtrack/image.h"

namespace corrtrack {

// What a search request needs to score colour: the likelihood per bin and how to bin.
struct ColourCue {
    const float* likelihood = nullptr;  // kColourBins entries, P(target | bin); null: no cue
    float weight = 0;                   // share of the colour score in the blended map
    // Whose map a search gets: the model's last learning (unique in the process) and the
    // target's frame (Target::plan_track). Requests over one window with equal stamps share it.
    std::uint64_t version = 0, frame = 0;
};

constexpr int kColourBins = 2048;

// The bin of one pixel: 8 luma x 16 x 16 chroma levels.
inline int colour_bin(std::uint8_t y, std::uint8_t u, std::uint8_t v) {
    return ((y >> 5) << 8) | ((u >> 4) << 4) | (v >> 4);
}

class ColourModel {
public:
    // Learns from the box in `frame` (host planes): rate 1 (or the first call) starts afresh,
    // else the histograms move `rate` of the way. A grey frame leaves the model unready.
    void learn(const FrameView& frame, const BoxF& box, float rate);
    bool ready() const { return ready_; }
    // The cue for this frame's searches; weight = max_weight x how well the model tells the
    // target from its surroundings (0 when it does not).
    ColourCue cue(float max_weight) const;
    // The target's size as its colours see it (DAT's extent from the likelihood map): log f of
    // the factor f in [e^-0.3, e^0.3] whose box f x `box` about the same centre holds the most
    // pixels more likely target than background (the sum of likelihood - 0.5 over its pixels,
    // sampled on a grid of at most about 4096 points). NaN when it has no opinion: no model,
    // or one that separates the target from its ring by less than 0.3.
    double extent_log_scale(const FrameView& frame, const BoxF& box, std::vector<double>& scratch) const;

private:
    std::vector<float> fg_, bg_, likelihood_;
    std::vector<std::uint32_t> counts_;  // the last learnt frame's counts, box then ring (scratch)
    bool ready_ = false;
    float separation_ = 0;       // mean likelihood inside the box minus in the ring, last learnt
    std::uint64_t version_ = 0;  // ColourCue::version
};

// Buffers of colour_score_map, reused between calls (no allocation once grown).
struct ColourMapScratch {
    std::vector<double> ii;            // integral image of the likelihood
    std::vector<int> column;           // chroma column of each patch column
    std::vector<std::uint8_t> chroma;  // the chroma part of each patch column's bin, this chroma row
};

// The colour score map of one search: `patch` is the sampled luma (patch.width x height,
// packed), pixel (u, v) sampled at frame position (ox + u*scale, oy + v*scale), whose chroma
// is read from `frame` (nearest 4:2:0 sample of the pixel's centre); `templ` is the template
// size; out gets (patch - templ + 1) positions, each the mean likelihood over the template's
// box there. The frame must have chroma.
void colour_score_map(const FrameView& frame, const ColourCue& cue, const std::uint8_t* patch, Size patch_size,
                      double ox, double oy, double scale, Size templ, ColourMapScratch& scratch, float* out);

}  // namespace corrtrack
