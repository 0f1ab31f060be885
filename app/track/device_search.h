// The tracker's device-side steps: the frame's pyramid, sampling search patches out of it
// into one atlas (the same arithmetic as pyramid.cpp and resample.cpp, bit for bit), and the
// motion-penalised peak of every map in one or two launches, so a whole frame's search costs
// one round trip.
// Thread rules: launchers queue work on the caller's stream and never synchronize; the
// caller owns every buffer and keeps it alive until the stream has passed the work.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "app/track/pyramid.h"
#include "corrtrack/cuda_util.h"
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

// One map to search: `height` rows of `width` floats, rows `pitch` floats apart, starting at
// `offset` floats into the map buffer. penalty: the motion penalty's weight at the window edge
// (0: none). Results are find_peak's on the penalised map, except that score, sub_x and
// sub_y come from the raw map (as the host tracker ranks and refines).
struct PeakItem {
    std::size_t offset = 0;
    int width = 0, height = 0;
    double penalty = 0;
    int pitch = 0;
};

struct RankedPeak {
    Peak peak;
    float ranked = 0;  // the penalised map's value at the peak
    // The best local maximum of the NCC map (no cue, no motion penalty) whose box overlaps
    // the peak's by at most a fifth, where it lies (map coordinates), and the same map's value
    // at the peak: a look-alike in the window. Filled on the host (search_cues.h), not by
    // launch_ranked_peaks (rival -2: none).
    float rival = -2, rival_x = 0, rival_y = 0, rival_of = 0;
    // The best look-alike's NCC at the peak (-2: none searched).
    float lookalike = -2;
    // Each look-alike found again near where it stood (SearchRequest::distractor_x): its best
    // NCC there (-2: under kLookalikeFound or not searched) and where (map coordinates).
    static constexpr int kLookalikes = 2;
    float lookalike_found[kLookalikes] = {-2, -2}, lookalike_x[kLookalikes] = {}, lookalike_y[kLookalikes] = {};
};

// At most this many items per launch (they travel as kernel parameters); longer lists are
// split into several launches by the launchers.
constexpr int kMaxItemsPerLaunch = 32;

// The gradient channel (gradient.h) of one atlas patch: reads `width` x `height` pixels at
// src_offset, writes the same shape at dst_offset (both with `pitch`).
struct GradientItem {
    std::size_t src_offset = 0, dst_offset = 0, pitch = 0;
    int width = 0, height = 0;
    // The slot the patch lies in (>= width x height): pixels past the patch are written 0.
    int fill_width = 0, fill_height = 0;
};

// Blends one gradient map into its grey-level map (gradient.h's blend_maps): `count` floats.
struct BlendItem {
    std::size_t grey_offset = 0, gradient_offset = 0, count = 0;
    float weight = 0;
};

// Pyramid levels base + 1 .. base + kMaxLevelsPerBuild in one launch, each output pixel from
// level `base` through the same chain of pyramid.h's halve_image roundings (bit for bit):
// levels[i] is level base + depth: its buffer, pitch and the region of output pixels to write.
constexpr int kMaxLevelsPerBuild = 3;  // level base + 3 reads 64 pixels of level base
struct LevelBuild {
    std::uint8_t* dst = nullptr;
    std::size_t pitch = 0;
    Rect region;
    int depth = 1;  // 1 .. kMaxLevelsPerBuild levels below base
};
void launch_build_levels(ImageView base, const std::vector<LevelBuild>& levels, Stream stream);

// The launchers below take every item of a search in one launch when `on_device` holds the same
// items in device memory (queued there before the launch); without it they launch once per
// kMaxItemsPerLaunch items, passed by value (cheaper for the few items of a few targets).
void launch_sample_patches(const DeviceLevels& levels, const std::vector<SampleItem>& items, std::uint8_t* dst,
                           Stream stream, const SampleItem* on_device = nullptr);
void launch_gradient_patches(std::uint8_t* atlas, const std::vector<GradientItem>& items, Stream stream,
                             const GradientItem* on_device = nullptr);
void launch_blend_maps(float* maps, const std::vector<BlendItem>& items, Stream stream,
                       const BlendItem* on_device = nullptr);

// The ranked peaks split a large map into bands of rows, one block each, so that a few maps
// (one target's scales) spread over many SMs: a first launch finds each band's maximum, a
// second each band's sidelobe sums, and the last band of a map to finish (counted by the
// map's ticket, which returns to zero by itself, so graph replays need no reset) combines them.
constexpr int kMaxPeakBands = 32;
// Launches whose maps are all this small take one block a map: there a second launch costs
// more than the block's walk (bench/results/h200_2026-12-04: 6400-float maps took 8.8 us of
// GPU time in one launch, 14.1 in two; 40000-float maps 23.4 in one, 15.5 in two).
constexpr long long kPeakSplitFloats = 16384;
struct PeakBand {
    long long best_index = 0;  // first launch: the band's first maximum, row-major in the map
    float best = 0;
    float second = 0;  // second launch: outside the exclusion zone, the band's maximum and sums
    double sum = 0, sum_sq = 0;
};
// Sized before the launches (never while a graph captures them); grows only.
struct PeakScratch {
    DeviceBuffer<PeakBand> bands;    // kMaxPeakBands per map
    DeviceBuffer<unsigned> tickets;  // one per map, zero between launches
    std::size_t maps = 0;
    void ensure(std::size_t count, Stream stream);
};
void launch_ranked_peaks(const float* maps, const std::vector<PeakItem>& items, RankedPeak* out, PeakScratch& scratch,
                         Stream stream, const PeakItem* on_device = nullptr);

// Many targets: a launcher's items also go to device memory (one copy from pinned memory,
// queued before the launch), so that one launch takes them all; few items go by value in the
// launch, which costs nothing more. (Mapped memory would save the copy call, but every
// thread's read of its item would then cross the bus.) The pinned side is rewritten only once
// the stream has passed the copy: a search waits for its peaks, sample() for its last call.
template <typename T>
struct StagedItems {
    PinnedBuffer<T> host;
    DeviceBuffer<T> device;
    const T* stage(const std::vector<T>& items, Stream stream) {
        if (items.size() <= static_cast<std::size_t>(kMaxItemsPerLaunch)) return nullptr;
        T* h = host.grow(items.size());  // headroom: target counts grow one by one
        std::copy(items.begin(), items.end(), h);
        T* d = device.grow(items.size());
        CORRTRACK_CUDA(cudaMemcpyAsync(d, h, items.size() * sizeof(T), cudaMemcpyHostToDevice, as_cuda(stream)));
        return d;
    }
};

}  // namespace corrtrack
