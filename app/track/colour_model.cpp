#include "app/track/colour_model.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>

namespace corrtrack {
namespace {

constexpr int kSamples = 6000;      // pixels sampled per region and frame (a stride keeps it)
constexpr double kRingShare = 0.5;  // the background ring: this share of the box's mean side
constexpr float kPrior = 1e-3f;     // keeps empty bins near 0.5 instead of 0/0

struct Region {
    int x0, y0, x1, y1;  // [x0, x1) x [y0, y1), clamped to the frame
};

Region clamp_region(const BoxF& b, double margin, Size f) {
    auto cl = [](double v, int hi) { return std::clamp(static_cast<int>(std::lround(v)), 0, hi); };
    return {cl(b.x - margin, f.width), cl(b.y - margin, f.height), cl(b.x + b.width + margin, f.width),
            cl(b.y + b.height + margin, f.height)};
}

std::uint8_t at(const ImageView& v, int x, int y) { return v.row(y)[x]; }

// The bin of frame pixel (x, y): its luma and the 4:2:0 chroma sample it lies in.
int bin_at(const FrameView& f, int x, int y) {
    return colour_bin(at(f.luma, x, y), at(f.u, x >> 1, y >> 1), at(f.v, x >> 1, y >> 1));
}

}  // namespace

void ColourModel::learn(const FrameView& frame, const BoxF& box, float rate) {
    const Size fs = frame.size();
    if (rate >= 1.0f || !ready_) {
        // Chroma that does not vary around the target is a grey source (or a grey scene).
        ready_ = false;
        bool chroma = false;
        if (frame.has_chroma()) {
            const Region r = clamp_region(box, kRingShare * (box.width + box.height) / 2, fs);
            int lo = 255, hi = 0;
            for (int y = r.y0; y < r.y1; y += 2)
                for (int x = r.x0; x < r.x1; x += 2) {
                    const std::uint8_t u = at(frame.u, x >> 1, y >> 1), v = at(frame.v, x >> 1, y >> 1);
                    lo = std::min({lo, static_cast<int>(u), static_cast<int>(v)});
                    hi = std::max({hi, static_cast<int>(u), static_cast<int>(v)});
                }
            chroma = hi - lo > 4;
        }
        if (!chroma) return;
        fg_.assign(kColourBins, 0.0f);
        bg_.assign(kColourBins, 0.0f);
        rate = 1.0f;
    }
    if (!frame.has_chroma()) return;
    const Region in = clamp_region(box, 0, fs);
    const Region out = clamp_region(box, kRingShare * (box.width + box.height) / 2, fs);
    const long area = static_cast<long>(out.x1 - out.x0) * (out.y1 - out.y0);
    if (area <= 0 || in.x1 <= in.x0 || in.y1 <= in.y0) return;
    const int step = std::max(1, static_cast<int>(std::sqrt(static_cast<double>(area) / kSamples)));
    // This frame's counts, in buffers kept between frames (learn runs per target per frame).
    // They are counted as integers, a run of pixels of one bin at a time: neighbouring pixels
    // often share a bin, and incrementing memory per pixel makes each wait for the last store.
    counts_.assign(2 * static_cast<std::size_t>(kColourBins), 0);
    std::uint32_t* const in_counts = counts_.data();
    std::uint32_t* const ring_counts = in_counts + kColourBins;
    long n_in = 0, n_ring = 0;
    for (int y = out.y0; y < out.y1; y += step) {
        const std::uint8_t* luma = frame.luma.row(y);
        const std::uint8_t* u = frame.u.row(y >> 1);
        const std::uint8_t* v = frame.v.row(y >> 1);
        const bool row_in = y >= in.y0 && y < in.y1;
        // Where this row's pixels count for the box: [in_begin, in_end).
        const int in_begin = row_in ? in.x0 : out.x1, in_end = row_in ? in.x1 : out.x1;
        std::uint32_t* counts = ring_counts;
        int run_bin = -1;
        std::uint32_t run = 0;
        for (int x = out.x0; x < out.x1; x += step) {
            std::uint32_t* const region = x >= in_begin && x < in_end ? in_counts : ring_counts;
            const int b = colour_bin(luma[x], u[x >> 1], v[x >> 1]);
            if (b == run_bin && region == counts) {
                ++run;
                continue;
            }
            if (run_bin >= 0) counts[run_bin] += run;
            counts = region;
            run_bin = b;
            run = 1;
        }
        if (run_bin >= 0) counts[run_bin] += run;
        // The grid points of this row left of column e (out.x0 <= e).
        const auto before = [&](int e) { return static_cast<long>((e - out.x0 + step - 1) / step); };
        const long row_in_count = before(in_end) - before(in_begin);
        n_in += row_in_count;
        n_ring += before(out.x1) - row_in_count;
    }
    const double nf = static_cast<double>(n_in), nb = static_cast<double>(n_ring);
    if (nf == 0) return;
    // One pass over the bins: the histograms move, the likelihood follows, and the sums say
    // how well the model tells this frame's box from its ring.
    likelihood_.resize(kColourBins);
    double sf = 0, sb = 0;
    for (int b = 0; b < kColourBins; ++b) {
        // A count is exact in float (fewer than 2^24 samples a region).
        const float fg = static_cast<float>(in_counts[b]), bg = static_cast<float>(ring_counts[b]);
        fg_[b] += rate * (static_cast<float>(fg / nf) - fg_[b]);
        if (nb > 0) bg_[b] += rate * (static_cast<float>(bg / nb) - bg_[b]);
        likelihood_[b] = (fg_[b] + kPrior) / (fg_[b] + bg_[b] + 2 * kPrior);
        sf += fg * likelihood_[b];
        sb += bg * likelihood_[b];
    }
    separation_ = nb > 0 ? static_cast<float>(sf / nf - sb / nb) : 0.0f;
    ready_ = true;
    static std::atomic<std::uint64_t> learnings{0};
    version_ = ++learnings;
}

ColourCue ColourModel::cue(float max_weight) const {
    ColourCue c;
    if (!ready_ || max_weight <= 0) return c;
    c.likelihood = likelihood_.data();
    c.version = version_;
    // Full weight from a separation of 0.4 (mean likelihood 0.7 inside, 0.3 around) up.
    c.weight = max_weight * std::clamp(separation_ / 0.4f, 0.0f, 1.0f);
    if (c.weight <= 0) c.likelihood = nullptr;
    return c;
}

double ColourModel::extent_log_scale(const FrameView& frame, const BoxF& box, std::vector<double>& scratch) const {
    constexpr double kReach = 0.3;     // log of the largest factor tried either way
    constexpr int kSteps = 6;          // factors each way: e^(reach x i / steps)
    constexpr double kSamples = 4096;  // grid points over the region searched
    constexpr float kMinSeparation = 0.3f;
    if (!ready_ || separation_ < kMinSeparation || !frame.has_chroma()) return std::nan("");
    const double cx = box.x + box.width / 2, cy = box.y + box.height / 2;
    const double span = std::exp(kReach) * 1.05;
    const Size fs = frame.size();
    const Region r = clamp_region(
        {cx - box.width * span / 2, cy - box.height * span / 2, box.width * span, box.height * span}, 0, fs);
    const double area = static_cast<double>(r.x1 - r.x0) * (r.y1 - r.y0);
    if (area <= 0) return std::nan("");
    const int step = std::max(1, static_cast<int>(std::ceil(std::sqrt(area / kSamples))));
    const int gw = (r.x1 - r.x0 + step - 1) / step, gh = (r.y1 - r.y0 + step - 1) / step;
    // Integral image of likelihood - 0.5 over the grid, (gw + 1) x (gh + 1).
    scratch.assign(static_cast<std::size_t>(gw + 1) * (gh + 1), 0.0);
    double* ii = scratch.data();
    for (int j = 0; j < gh; ++j) {
        const int y = r.y0 + j * step;
        double run = 0;
        for (int i = 0; i < gw; ++i) {
            const int x = r.x0 + i * step;
            run += likelihood_[bin_at(frame, x, y)] - 0.5;
            ii[static_cast<std::size_t>(j + 1) * (gw + 1) + i + 1] =
                ii[static_cast<std::size_t>(j) * (gw + 1) + i + 1] + run;
        }
    }
    // A grid point stands for the pixels from it to the next one; a box edge rounds to the nearest.
    auto cell = [&](double v, int origin, int cells) {
        return std::clamp(static_cast<int>(std::lround((v - origin) / step)), 0, cells);
    };
    auto mass = [&](double f) {
        const double w = box.width * f, h = box.height * f;
        const int i0 = cell(cx - w / 2, r.x0, gw), i1 = cell(cx + w / 2, r.x0, gw);
        const int j0 = cell(cy - h / 2, r.y0, gh), j1 = cell(cy + h / 2, r.y0, gh);
        const auto at_ii = [&](int i, int j) { return ii[static_cast<std::size_t>(j) * (gw + 1) + i]; };
        return at_ii(i1, j1) - at_ii(i0, j1) - at_ii(i1, j0) + at_ii(i0, j0);
    };
    // The nearest factor wins a tie: the box keeps its size unless the colours say otherwise.
    double best = mass(1.0), pick = 0;
    for (int k = 1; k <= kSteps; ++k)
        for (const int sign : {-1, 1}) {
            const double l = sign * kReach * k / kSteps;
            const double m = mass(std::exp(l));
            if (m > best) best = m, pick = l;
        }
    return pick;
}

void colour_score_map(const FrameView& frame, const ColourCue& cue, const std::uint8_t* patch, Size ps, double ox,
                      double oy, double scale, Size templ, ColourMapScratch& scratch, float* out) {
    const int w = ps.width, h = ps.height;
    const int cw = frame.u.width, ch = frame.u.height;
    // Integral image of the per-pixel likelihood, (w + 1) x (h + 1); its first row and column
    // are zero, the rest is written below.
    const std::size_t stride = static_cast<std::size_t>(w) + 1;
    scratch.ii.resize(stride * (h + 1));
    double* ii = scratch.ii.data();
    std::fill(ii, ii + stride, 0.0);
    // A patch column reads the same chroma column on every row, and the rows that share a
    // chroma row (two at scale 1) share the chroma half of their bins.
    scratch.column.resize(w);
    scratch.chroma.resize(w);
    for (int x = 0; x < w; ++x)
        scratch.column[x] = std::clamp(static_cast<int>(ox + (x + 0.5) * scale) >> 1, 0, cw - 1);
    const int* column = scratch.column.data();
    std::uint8_t* uv = scratch.chroma.data();
    int chroma_row = -1;
    for (int y = 0; y < h; ++y) {
        const int cy = std::clamp(static_cast<int>(oy + (y + 0.5) * scale) >> 1, 0, ch - 1);
        if (cy != chroma_row) {
            const std::uint8_t* urow = frame.u.row(cy);
            const std::uint8_t* vrow = frame.v.row(cy);
            for (int x = 0; x < w; ++x)
                uv[x] = static_cast<std::uint8_t>(colour_bin(0, urow[column[x]], vrow[column[x]]));
            chroma_row = cy;
        }
        const std::uint8_t* luma = patch + static_cast<std::size_t>(y) * w;
        const double* above = ii + static_cast<std::size_t>(y) * stride;
        double* row = ii + static_cast<std::size_t>(y + 1) * stride;
        row[0] = 0.0;
        double run = 0;
        for (int x = 0; x < w; ++x) {
            run += cue.likelihood[colour_bin(luma[x], 0, 0) | uv[x]];  // the luma and chroma bits do not overlap
            row[x + 1] = above[x + 1] + run;
        }
    }
    const int ow = w - templ.width + 1, oh = h - templ.height + 1;
    const double inv = 1.0 / (static_cast<double>(templ.width) * templ.height);
    for (int y = 0; y < oh; ++y) {
        const double* top = ii + static_cast<std::size_t>(y) * (w + 1);
        const double* bot = ii + static_cast<std::size_t>(y + templ.height) * (w + 1);
        for (int x = 0; x < ow; ++x)
            out[static_cast<std::size_t>(y) * ow + x] =
                static_cast<float>((bot[x + templ.width] - bot[x] - top[x + templ.width] + top[x]) * inv);
    }
}

}  // namespace corrtrack
