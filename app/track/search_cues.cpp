// The cues of a search request and the peak they pick (search_cues.h), with the host's
// motion-penalised peak and the rival search (backends.h) that both backends rank with.
#include "app/track/search_cues.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "app/track/backends.h"

namespace corrtrack {

namespace {

// The filter's answer blended into `m` (rank_request). One answer per target and frame: the
// first request's (the centre scale's) serves the other scales too, whose windows cover the
// same place a step larger or smaller (answering each cost 1.5x the time for the same SRE-13).
void blend_filter(const SearchRequest& r, const FrameView& frame, const std::uint8_t* patch, float* m, Size o,
                  CueScratch& s) {
    const std::size_t n = static_cast<std::size_t>(o.width) * o.height;
    const CorrelationFilter* f = r.filter.filter;
    if (s.answered_version != f->version() || s.answered_frame != r.filter.frame || !(s.answered_size == o)) {
        s.filter.resize(n);
        f->respond(patch, window_in_frame(r.ox, r.oy, r.scale, r.patch, frame.size()), s.filter.data(),
                   s.filter_arrays);
        s.answer_psr = find_peak({s.filter.data(), o.width, o.height, static_cast<std::size_t>(o.width)}).psr;
        s.answered_version = f->version();
        s.answered_frame = r.filter.frame;
        s.answered_size = o;
    }
    // Each map counts as much as its peak stands out of it.
    const Peak own = find_peak({m, o.width, o.height, static_cast<std::size_t>(o.width)});
    const float w = filter_weight(r.filter, s.answer_psr, own.psr);
    for (std::size_t i = 0; i < n; ++i) m[i] = (1 - w) * m[i] + w * s.filter[i];
}

// r's colour score map (n positions). A target's templates search the same windows (its
// working and first templates at each scale): a map whose key matches one of the last few is
// taken as it is.
const std::vector<float>& colour_map_of(const SearchRequest& r, const FrameView& frame, const std::uint8_t* patch,
                                        std::size_t n, CueScratch& s) {
    const CueScratch::ColourKey key{r.colour.version, r.colour.frame,      r.ox, r.oy, r.scale,
                                    r.patch,          r.templ.image.size()};
    return s.colour.get(key, [&](std::vector<float>& score) {
        score.resize(n);
        colour_score_map(frame, r.colour, patch, r.patch, r.ox, r.oy, r.scale, r.templ.image.size(), s.colour_map,
                         score.data());
    });
}

// Each look-alike found again (RankedPeak::lookalike_found), and the places of the still ones
// taken out of the ranking map `m` (SearchRequest::lookalike_claim). A claimed position gets
// the map's mean, not a floor value: the peak's PSR reads the rest of the map.
void find_lookalikes(const SearchRequest& r, Size o, const float* const* lookalike, float* m, RankedPeak& hit) {
    const Size t = r.templ.image.size();
    const int hx = std::max(1, t.width / 2), hy = std::max(1, t.height / 2);
    // Still: within a quarter of the search radius of where it stood.
    const int still_x = std::max(1, hx / 4), still_y = std::max(1, hy / 4);
    const int cx = (o.width - 1) / 2, cy = (o.height - 1) / 2;
    float mean = 0;
    bool have_mean = false;
    for (int d = 0; d < r.distractor_count; ++d) {
        const int ex = static_cast<int>(std::lround(r.distractor_x[d]));
        const int ey = static_cast<int>(std::lround(r.distractor_y[d]));
        float best = -2;
        int bx = 0, by = 0;
        for (int y = std::max(0, ey - hy); y <= std::min(o.height - 1, ey + hy); ++y) {
            const float* row = lookalike[d] + static_cast<std::size_t>(y) * o.width;
            for (int x = std::max(0, ex - hx); x <= std::min(o.width - 1, ex + hx); ++x)
                if (row[x] > best) {
                    best = row[x];
                    bx = x;
                    by = y;
                }
        }
        if (best < SearchRequest::kLookalikeFound) continue;
        hit.lookalike_found[d] = best;
        hit.lookalike_x[d] = static_cast<float>(bx);
        hit.lookalike_y[d] = static_cast<float>(by);
        const bool claims = r.lookalike_claim > 0 && best >= r.lookalike_claim && std::abs(bx - ex) <= still_x &&
                            std::abs(by - ey) <= still_y && !(std::abs(cx - bx) < hx && std::abs(cy - by) < hy);
        if (!claims) continue;
        if (!have_mean) {
            double sum = 0;
            const std::size_t n = static_cast<std::size_t>(o.width) * o.height;
            for (std::size_t k = 0; k < n; ++k) sum += m[k];
            mean = static_cast<float>(sum / n);
            have_mean = true;
        }
        for (int y = std::max(0, by - hy + 1); y <= std::min(o.height - 1, by + hy - 1); ++y) {
            float* row = m + static_cast<std::size_t>(y) * o.width;
            for (int x = std::max(0, bx - hx + 1); x <= std::min(o.width - 1, bx + hx - 1); ++x)
                row[x] = std::min(row[x], mean);
        }
    }
}

}  // namespace

RankedPeak rank_request(const SearchRequest& r, const FrameView& frame, const std::uint8_t* patch, float* m, Size o,
                        const float* const* lookalike, CueScratch& s) {
    const std::size_t n = static_cast<std::size_t>(o.width) * o.height;
    // Cues that only rank positions: the NCC at the chosen one stays the score that the
    // policy's gates read.
    const bool colour = colour_applies(r, frame);
    const bool lookalikes = lookalikes_apply(r);
    const bool filter = filter_applies(r);
    const bool any = colour || lookalikes || filter;
    if (any) s.ncc.assign(m, m + n);
    if (filter) blend_filter(r, frame, patch, m, o, s);
    if (colour) {
        const std::vector<float>& score = colour_map_of(r, frame, patch, n, s);
        const float w = r.colour.weight;
        for (std::size_t k = 0; k < n; ++k) m[k] = (1 - w) * m[k] + w * (2 * score[k] - 1);
    }
    if (lookalikes) {
        // Where the best look-alike beats the template's own NCC, the weight times the
        // difference comes off; where the target matches itself better nothing changes, so
        // the look-alikes cannot pull the peak off a target they resemble.
        s.lookalike_max.assign(n, 0.0f);
        for (int d = 0; d < r.distractor_count; ++d)
            for (std::size_t k = 0; k < n; ++k) s.lookalike_max[k] = std::max(s.lookalike_max[k], lookalike[d][k]);
        for (std::size_t k = 0; k < n; ++k) m[k] -= r.distractor_weight * std::max(0.0f, s.lookalike_max[k] - s.ncc[k]);
    }
    RankedPeak found;
    if (lookalikes) find_lookalikes(r, o, lookalike, m, found);
    const MapView map{m, o.width, o.height, static_cast<std::size_t>(o.width)};
    RankedPeak hit = penalised_peak(map, r.penalty, s.penalised);
    std::copy(found.lookalike_found, found.lookalike_found + RankedPeak::kLookalikes, hit.lookalike_found);
    std::copy(found.lookalike_x, found.lookalike_x + RankedPeak::kLookalikes, hit.lookalike_x);
    std::copy(found.lookalike_y, found.lookalike_y + RankedPeak::kLookalikes, hit.lookalike_y);
    if (any) {
        // ... and ranks it against the other scales and templates: the colour score of a
        // smaller box is higher (less background), so it must not pick the scale.
        Peak& pk = hit.peak;
        const std::size_t at = static_cast<std::size_t>(pk.y) * o.width + pk.x;
        const float penalty = r.penalty > 0 ? m[at] - s.penalised.map[at] : 0.0f;
        pk.score = s.ncc[at];
        hit.ranked = pk.score - penalty;
        if (lookalikes) hit.lookalike = s.lookalike_max[at];
    }
    // Only where asked: it scans the whole map. With cues, on the NCC map: the filter's answer
    // has no second hill where a look-alike stands, so look-alikes were never noted with it.
    if (r.want_rival) add_rival(r, any ? s.ncc.data() : m, o, hit);
    return hit;
}

void add_rival(const SearchRequest& r, const float* map, Size o, RankedPeak& hit) {
    // Look-alikes stand apart: a box overlapping the target by more than a fifth would hold
    // part of the target itself.
    const Size t = r.templ.image.size();
    find_rival(map, o, hit, {std::max(1, t.width * 4 / 5), std::max(1, t.height * 4 / 5)});
}

void find_rival(const float* map, Size size, RankedPeak& hit, Size apart) {
    const int px = hit.peak.x, py = hit.peak.y;
    hit.rival = -2;
    hit.rival_of = map[static_cast<std::size_t>(py) * size.width + px];
    for (int y = 0; y < size.height; ++y) {
        const float* row = map + static_cast<std::size_t>(y) * size.width;
        for (int x = 0; x < size.width; ++x) {
            const float v = row[x];
            if (!(v > hit.rival)) continue;
            if (std::abs(x - px) < apart.width && std::abs(y - py) < apart.height) continue;
            // A local maximum, not the slope of the peak's own hill.
            bool top = true;
            for (int ny = std::max(0, y - 1); top && ny <= std::min(size.height - 1, y + 1); ++ny)
                for (int nx = std::max(0, x - 1); nx <= std::min(size.width - 1, x + 1); ++nx)
                    if (map[static_cast<std::size_t>(ny) * size.width + nx] > v) {
                        top = false;
                        break;
                    }
            if (!top) continue;
            hit.rival = v;
            hit.rival_x = static_cast<float>(x);
            hit.rival_y = static_cast<float>(y);
        }
    }
}

RankedPeak penalised_peak(const MapView& map, double weight, PenaltyScratch& scratch) {
    RankedPeak out;
    if (weight <= 0) {
        out.peak = find_peak(map);
        out.ranked = out.peak.score;
        return out;
    }
    scratch.map.resize(static_cast<std::size_t>(map.width) * map.height);
    const double cx = (map.width - 1) / 2.0, cy = (map.height - 1) / 2.0;
    const double rx2 = std::max(1.0, cx * cx), ry2 = std::max(1.0, cy * cy);
    // The column terms once per map, not per pixel (the same doubles, so the same floats).
    scratch.column_penalty.resize(map.width);
    double* const column = scratch.column_penalty.data();
    for (int x = 0; x < map.width; ++x) column[x] = (x - cx) * (x - cx) / rx2;
    for (int y = 0; y < map.height; ++y) {
        const double dy2 = (y - cy) * (y - cy) / ry2;
        const float* src = map.row(y);
        float* dst = &scratch.map[static_cast<std::size_t>(y) * map.width];
        for (int x = 0; x < map.width; ++x) dst[x] = src[x] - static_cast<float>(weight * (column[x] + dy2));
    }
    const MapView pm{scratch.map.data(), map.width, map.height, static_cast<std::size_t>(map.width)};
    Peak& pk = out.peak;
    pk = find_peak(pm);
    out.ranked = pk.score;
    const float* row = map.row(pk.y);
    pk.score = row[pk.x];
    pk.sub_x = static_cast<float>(pk.x);
    pk.sub_y = static_cast<float>(pk.y);
    if (pk.x > 0 && pk.x + 1 < map.width) pk.sub_x += parabolic_offset(row[pk.x - 1], pk.score, row[pk.x + 1]);
    if (pk.y > 0 && pk.y + 1 < map.height)
        pk.sub_y += parabolic_offset(map.row(pk.y - 1)[pk.x], pk.score, map.row(pk.y + 1)[pk.x]);
    return out;
}

}  // namespace corrtrack
