// The cues that rank a search's positions besides the NCC (search.h): the colour cue and the
// look-alike term, and the peak they pick. One definition for both backends: the CPU backend
// calls it on every map, the GPU backend on the maps of the requests that carry a cue (copied
// to the host with the search's peaks), so their boxes stay identical.
// Thread rules: plain functions; the scratch belongs to the backend's thread.
#pragma once

#include <cstdint>
#include <vector>

#include "app/track/backends.h"
#include "app/track/colour_model.h"
#include "app/track/search.h"
#include "app/util/recent_cache.h"

namespace corrtrack {

// Buffers reused between requests (no allocation once grown).
struct CueScratch {
    std::vector<float> ncc, lookalike_max, filter;
    FilterScratch filter_arrays;
    // Whose answer `filter` holds: the filter's version (unique in the process), the target's
    // frame (FilterCue) and the map's size.
    std::uint64_t answered_version = 0, answered_frame = 0;
    Size answered_size;
    float answer_psr = 0;
    PenaltyScratch penalised;
    ColourMapScratch colour_map;
    // The last few colour score maps and whose they are (colour_map_of): a target's templates
    // search the same windows. A key holds the model's learning and the target's frame.
    struct ColourKey {
        std::uint64_t version = 0, frame = 0;
        double ox = 0, oy = 0, scale = 0;
        Size patch, templ;
        bool operator==(const ColourKey& k) const {
            return version == k.version && frame == k.frame && ox == k.ox && oy == k.oy && scale == k.scale &&
                   patch == k.patch && templ == k.templ;
        }
    };
    RecentCache<ColourKey, std::vector<float>, 4> colour;  // a target's scales, and one more
};

// Whether request r's colour cue applies on this frame (it needs the frame's host chroma).
inline bool colour_applies(const SearchRequest& r, const FrameView& frame) {
    return r.colour.likelihood && frame.has_chroma();
}
inline bool lookalikes_apply(const SearchRequest& r) { return r.distractor_count > 0 && r.distractor_weight > 0; }
// Whether request r's correlation filter applies (it reads the sampled window).
inline bool filter_applies(const SearchRequest& r) {
    return r.filter.filter && r.filter.cap > 0 && r.filter.filter->ready() && r.filter.filter->window() == r.patch;
}
// Whether the host needs r's sampled window (packed r.patch) to rank it.
inline bool reads_window(const SearchRequest& r, const FrameView& frame) {
    return colour_applies(r, frame) || filter_applies(r);
}

// Whether a cue moves r's peak, so that only the host's ranking (rank_request) gives it.
inline bool cues_apply(const SearchRequest& r, const FrameView& frame) {
    return colour_applies(r, frame) || lookalikes_apply(r) || filter_applies(r);
}
// Whether the hit of r needs the host: a cue, or its rival fields asked for.
inline bool needs_host_rank(const SearchRequest& r, const FrameView& frame) {
    return r.want_rival || cues_apply(r, frame);
}

// Adds the rival fields of `hit` (RankedPeak) from `map`, r's NCC map (packed o): the best
// local maximum that stands apart from the peak. Where no cue applies the ranking map is the
// NCC map itself, so a backend that ranked such a request's peak on its own adds the rival here
// and gets rank_request's hit, every field.
void add_rival(const SearchRequest& r, const float* map, Size o, RankedPeak& hit);

// Request r's hit. `map`: its NCC map (o = patch - template + 1, packed; gradient-blended
// where asked), turned in place into the ranking map. `patch`: the sampled window (packed
// r.patch; read for colour and the filter). `lookalike[d]`: distractor d's NCC map over the same window
// (packed o; read when lookalikes_apply). The peak is chosen on the ranking map with the
// motion penalty; its score stays the NCC there, and rival fields come from the NCC map. Each
// look-alike is found again near where it stood, and a still one claims its place
// (SearchRequest::lookalike_claim).
RankedPeak rank_request(const SearchRequest& r, const FrameView& frame, const std::uint8_t* patch, float* map, Size o,
                        const float* const* lookalike, CueScratch& s);

}  // namespace corrtrack
