// Device sampling and ranked peaks for the tracker. This file is compiled with --fmad=false:
// every float and double expression rounds exactly as resample.cpp and tracker.cpp do on the
// host (no FMA contraction there either), so the GPU path tracks bit-identically.
#include "app/track/device_search.h"
#include "app/track/resample.h"  // round_to_u8

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <stdexcept>

#include "corrtrack/cuda_util.h"

namespace corrtrack {
namespace {

__device__ __forceinline__ int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// One launch's items: up to kMaxItemsPerLaunch by value in the kernel parameter, or, for a
// launch that takes more (many targets), all of them in device memory (`all`).
template <typename Item>
struct Batch {
    Item item[kMaxItemsPerLaunch];
    const Item* all = nullptr;
    __device__ const Item& operator[](unsigned i) const { return all ? all[i] : item[i]; }
};

// Area weight of source cell i for the output cell [a, b) of width s (resample.cpp's
// area_weights, before normalisation-free use).
__device__ __forceinline__ float area_weight(double a, double b, double s, int i) {
    const double hi = b < i + 1.0 ? b : i + 1.0;
    const double lo = a > static_cast<double>(i) ? a : static_cast<double>(i);
    return static_cast<float>((hi - lo) / s);
}

// Pixel (i, j) of level base + D, computed from level base through D halvings with
// pyramid.cpp's halve_image rounding at each step (edges repeated at each level's size).
struct LevelChain {
    const std::uint8_t* base = nullptr;
    std::size_t pitch = 0;
    int width[kMaxLevelsPerBuild + 1] = {}, height[kMaxLevelsPerBuild + 1] = {};  // [d]: level base + d
};
template <int D>
__device__ __forceinline__ int chain_pixel(const LevelChain& c, int i, int j) {
    if constexpr (D == 0) {
        return c.base[static_cast<std::size_t>(j) * c.pitch + i];
    } else {
        const int w = c.width[D - 1], h = c.height[D - 1];
        const int x0 = 2 * i, x1 = 2 * i + 1 < w ? 2 * i + 1 : 2 * i;
        const int y0 = 2 * j, y1 = 2 * j + 1 < h ? 2 * j + 1 : 2 * j;
        return (chain_pixel<D - 1>(c, x0, y0) + chain_pixel<D - 1>(c, x1, y0) + chain_pixel<D - 1>(c, x0, y1) +
                chain_pixel<D - 1>(c, x1, y1) + 2) >>
               2;
    }
}

struct LevelBuilds {
    LevelBuild level[kMaxLevelsPerBuild];
};

// One grid layer (blockIdx.z) per level built, one output pixel per thread.
__global__ void build_levels_kernel(LevelChain chain, LevelBuilds builds) {
    const LevelBuild& b = builds.level[blockIdx.z];
    const int i = b.region.x + blockIdx.x * blockDim.x + threadIdx.x;
    const int j = b.region.y + blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= b.region.x + b.region.width || j >= b.region.y + b.region.height) return;
    int v = 0;
    switch (b.depth) {
    case 1: v = chain_pixel<1>(chain, i, j); break;
    case 2: v = chain_pixel<2>(chain, i, j); break;
    default: v = chain_pixel<3>(chain, i, j); break;
    }
    b.dst[static_cast<std::size_t>(j) * b.pitch + i] = static_cast<std::uint8_t>(v);
}

// A thread samples one column of a patch over up to kSampleRowsPerThread rows: the item, the
// level and the column's source positions once, then row after row. A 256-target frame's
// search patches took 108 us on the H200 one pixel a thread, 56 us so; weighing a column's
// area taps once in registers made it 64, the rows' positions once a block in shared memory
// left it at 55.5 (bench/results/h200_2026-12-04/run4-8).
constexpr int kSampleBlockRows = 8;  // blockDim.y
constexpr int kSampleRowsPerThread = 8;
constexpr int kSampleRowsPerBlock = kSampleBlockRows * kSampleRowsPerThread;
// Source rows a block's output rows read below scale 2: 63 * s + 1 spans, + ceil(s) + 2 taps.
constexpr int kSampleAreaRows = 2 * kSampleRowsPerBlock + 8;

__global__ void sample_patches_kernel(DeviceLevels levels, Batch<SampleItem> batch, std::uint8_t* out) {
    const SampleItem it = batch[blockIdx.z];  // a copy: the byte stores below may alias it
    const int u = blockIdx.x * blockDim.x + threadIdx.x;
    const int v_base = blockIdx.y * kSampleRowsPerBlock;
    const int v_end = min(it.height, v_base + kSampleRowsPerBlock);
    const ImageView lv = levels.level[it.level];
    const std::uint8_t* __restrict__ src = lv.data;
    const std::size_t src_pitch = lv.pitch;
    const int src_w = lv.width, src_h = lv.height;
    std::uint8_t* dst = out + it.dst_offset + u;
    const double s = it.scale;
    const int v_first = v_base + threadIdx.y;
    const bool integer_origin = it.ox == floor(it.ox) && it.oy == floor(it.oy);
    const bool inside = u < it.width;  // columns past the patch only help to filter rows
    if (s == 1.0 && integer_origin) {
        if (!inside) return;
        const int x = clampi(static_cast<int>(it.ox) + u, 0, src_w - 1);
        for (int v = v_first; v < v_end; v += kSampleBlockRows) {
            const int y = clampi(static_cast<int>(it.oy) + v, 0, src_h - 1);
            dst[static_cast<std::size_t>(v) * it.dst_pitch] = src[static_cast<std::size_t>(y) * src_pitch + x];
        }
        return;
    }
    if (s <= 1.25) {
        if (!inside) return;
        const double sx = it.ox + (u + 0.5) * s - 0.5;
        const int x0 = static_cast<int>(floor(sx));
        const float fx = static_cast<float>(sx - x0);
        const int xa = clampi(x0, 0, src_w - 1), xb = clampi(x0 + 1, 0, src_w - 1);
        for (int v = v_first; v < v_end; v += kSampleBlockRows) {
            const double sy = it.oy + (v + 0.5) * s - 0.5;
            const int y0 = static_cast<int>(floor(sy));
            const float fy = static_cast<float>(sy - y0);
            const std::uint8_t* r0 = src + static_cast<std::size_t>(clampi(y0, 0, src_h - 1)) * src_pitch;
            const std::uint8_t* r1 = src + static_cast<std::size_t>(clampi(y0 + 1, 0, src_h - 1)) * src_pitch;
            const float top = r0[xa] + fx * (r0[xb] - r0[xa]);
            const float bottom = r1[xa] + fx * (r1[xb] - r1[xa]);
            dst[static_cast<std::size_t>(v) * it.dst_pitch] = round_to_u8(top + fy * (bottom - top));
        }
        return;
    }
    // Area averaging: the host filters rows horizontally, then columns; the same sums in the
    // same order here. Below scale 2 the block filters each source row its 64 rows read once
    // into shared memory, then each pixel sums its column's share of them (at about 185
    // instructions a warp's pixel the taps were the kernel's cost, run7); above, each pixel
    // filters its own rows.
    const int span = static_cast<int>(ceil(s)) + 2;
    const double ax = it.ox + u * s, bx = ax + s;
    const int cx0 = static_cast<int>(floor(ax));
    const int cx1 = min(static_cast<int>(ceil(bx)), cx0 + span);
    auto filter_row = [&](int j) {  // the horizontal sum of source row j for column u
        const std::uint8_t* row = src + static_cast<std::size_t>(clampi(j, 0, src_h - 1)) * src_pitch;
        float h = 0;
        for (int i = cx0; i < cx1; ++i) h += area_weight(ax, bx, s, i) * row[clampi(i, 0, src_w - 1)];
        return h;
    };
    auto column_sum = [&](int v, auto&& filtered) {  // output row v from its source rows' sums
        const double ay = it.oy + v * s, by = ay + s;
        const int ry0 = static_cast<int>(floor(ay));
        const int ry1 = min(static_cast<int>(ceil(by)), ry0 + span);
        float acc = 0;
        for (int j = ry0; j < ry1; ++j) acc += area_weight(ay, by, s, j) * filtered(j);
        dst[static_cast<std::size_t>(v) * it.dst_pitch] = round_to_u8(acc);
    };
    if (s < 2.0) {  // uniform over the block: the item decides
        __shared__ float rows_s[kSampleAreaRows][32];
        const int first = static_cast<int>(floor(it.oy + v_base * s));
        const double ay_last = it.oy + (v_end - 1) * s;
        const int last = min(static_cast<int>(ceil(ay_last + s)), static_cast<int>(floor(ay_last)) + span);
        for (int j = first + static_cast<int>(threadIdx.y); j < last; j += kSampleBlockRows)
            rows_s[j - first][threadIdx.x] = filter_row(j);
        __syncthreads();
        if (!inside) return;
        for (int v = v_first; v < v_end; v += kSampleBlockRows)
            column_sum(v, [&](int j) { return rows_s[j - first][threadIdx.x]; });
        return;
    }
    if (!inside) return;
    for (int v = v_first; v < v_end; v += kSampleBlockRows) column_sum(v, filter_row);
}

constexpr int kPeakThreads = 256;
constexpr int kPeakWarps = kPeakThreads / 32;
constexpr int kPeakUnroll = 4;               // loads in flight per thread: the walk is latency-bound
constexpr int kPenaltyTerms = 1024;          // bands up to this wide and tall keep their terms in shared memory
constexpr long long kPeakBandFloats = 2048;  // a band's share of the map, give or take a row
constexpr int kPeakBlocksWanted = 1024;      // enough blocks to fill the GPU: more bands only add combining

// The tracker's penalised value (cpu_search.cpp, penalised_peak): raw minus weight times the
// squared normalised distance from the map centre, computed in double and rounded to float. A
// weight of zero or less leaves the map as it is, as on the host.
struct Penalty {
    double weight = 0, cx = 0, cy = 0, rx2 = 1, ry2 = 1;
    __device__ Penalty(double w, int width, int height) : weight(w) {
        cx = (width - 1) / 2.0;
        cy = (height - 1) / 2.0;
        rx2 = cx * cx > 1.0 ? cx * cx : 1.0;
        ry2 = cy * cy > 1.0 ? cy * cy : 1.0;
    }
    __device__ bool active() const { return weight > 0.0; }
    __device__ double dx2(int x) const { return (x - cx) * (x - cx) / rx2; }
    __device__ double dy2(int y) const { return (y - cy) * (y - cy) / ry2; }
};

// One block's band of a map: rows [y0, y1), with the penalty's column and row terms in shared
// memory where they fit (the divisions are the costly part), else computed per element (the
// same bits either way).
struct PeakBlock {
    const float* map;
    std::size_t pitch;
    int w, h, y0, y1;
    Penalty p;
    const double* dx2 = nullptr;  // [x], or nullptr: compute
    const double* dy2 = nullptr;  // [y - y0]

    __device__ PeakBlock(const float* maps, const PeakItem& it, int band, int bands, double* dx2_s, double* dy2_s)
        : map(maps + it.offset),
          pitch(static_cast<std::size_t>(it.pitch)),
          w(it.width),
          h(it.height),
          y0(static_cast<int>(static_cast<long long>(band) * it.height / bands)),
          y1(static_cast<int>(static_cast<long long>(band + 1) * it.height / bands)),
          p(it.penalty, it.width, it.height) {
        if (p.active() && w <= kPenaltyTerms && y1 - y0 <= kPenaltyTerms) {  // uniform over the block
            for (int i = threadIdx.x; i < w; i += kPeakThreads) dx2_s[i] = p.dx2(i);
            for (int i = threadIdx.x; i < y1 - y0; i += kPeakThreads) dy2_s[i] = p.dy2(y0 + i);
            dx2 = dx2_s;
            dy2 = dy2_s;
            __syncthreads();
        }
    }
    __device__ float penalised(float raw, int x, int y) const {
        if (!p.active()) return raw;
        const double a = dx2 ? dx2[x] : p.dx2(x), b = dy2 ? dy2[y - y0] : p.dy2(y);
        return raw - static_cast<float>(p.weight * (a + b));
    }
    // visit(penalised value, x, y) for the thread's elements of the band, in row-major order:
    // the walk advances by the block's step in whole rows and a remainder (no division per
    // element), kPeakUnroll loads at a time.
    template <typename Visit>
    __device__ void walk(Visit visit) const {
        if (w <= 0 || y1 <= y0) return;
        const int step_y = kPeakThreads / w, step_x = kPeakThreads - step_y * w;
        int y = y0 + static_cast<int>(threadIdx.x) / w, x = static_cast<int>(threadIdx.x) % w;
        while (y < y1) {
            float v[kPeakUnroll];
            int xs[kPeakUnroll], ys[kPeakUnroll];
#pragma unroll
            for (int k = 0; k < kPeakUnroll; ++k) {
                xs[k] = x;
                ys[k] = y;
                v[k] = y < y1 ? map[y * pitch + x] : 0.0f;
                x += step_x;
                y += step_y;
                if (x >= w) {
                    x -= w;
                    ++y;
                }
            }
#pragma unroll
            for (int k = 0; k < kPeakUnroll; ++k) {
                if (ys[k] >= y1) break;
                visit(penalised(v[k], xs[k], ys[k]), xs[k], ys[k]);
            }
        }
    }
};

__device__ __forceinline__ bool better(float v, long long i, float bv, long long bi) {
    return v > bv || (v == bv && i < bi);
}

// Block-wide: the first maximum (value, row-major index; LLONG_MAX for none) to every thread.
__device__ void block_best(float& bv, long long& bi) {
    __shared__ float vs[kPeakWarps];
    __shared__ long long is[kPeakWarps];
    for (int off = 16; off > 0; off >>= 1) {
        const float ov = __shfl_down_sync(0xffffffffu, bv, off);
        const long long oi = __shfl_down_sync(0xffffffffu, bi, off);
        if (better(ov, oi, bv, bi)) {
            bv = ov;
            bi = oi;
        }
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
        vs[warp] = bv;
        is[warp] = bi;
    }
    __syncthreads();
    bv = vs[0];
    bi = is[0];
    for (int k = 1; k < kPeakWarps; ++k)
        if (better(vs[k], is[k], bv, bi)) {
            bv = vs[k];
            bi = is[k];
        }
    __syncthreads();
}

// The block's first maximum of the penalised band (value, row-major index in the map) to every
// thread; LLONG_MAX for none.
__device__ void band_best(const PeakBlock& b, float& bv, long long& bi) {
    bv = -2.0f;
    int bx = 0, by = -1;
    b.walk([&](float v, int x, int y) {
        if (v > bv) {  // a thread's positions only grow: `>` keeps its first maximum
            bv = v;
            bx = x;
            by = y;
        }
    });
    bi = by < 0 ? LLONG_MAX : static_cast<long long>(by) * b.w + bx;
    block_best(bv, bi);
}

// Launch 1 (maps of several bands), block (band, item): the band's first maximum.
__global__ void __launch_bounds__(kPeakThreads)
    band_best_kernel(const float* __restrict__ maps, Batch<PeakItem> batch, PeakBand* bands, std::size_t first) {
    __shared__ double dx2_s[kPenaltyTerms], dy2_s[kPenaltyTerms];
    const PeakBlock b(maps, batch[blockIdx.y], blockIdx.x, gridDim.x, dx2_s, dy2_s);
    float bv;
    long long bi;
    band_best(b, bv, bi);
    if (threadIdx.x == 0) {
        PeakBand& out = bands[(first + blockIdx.y) * kMaxPeakBands + blockIdx.x];
        out.best = bv;
        out.best_index = bi;
    }
}

// Launch 2, block (band, item): the map's peak from every band's maximum (in band order, so
// each block finds the same; a map of one band finds its own, and launch 1 is left out), the
// band's sidelobe statistics outside the exclusion zone, and in the map's last band to finish,
// find_peak's result from the bands' sums in band order (so the PSR may differ from the host's
// in the last bits; the tracker only compares it with thresholds).
__global__ void __launch_bounds__(kPeakThreads)
    band_sidelobes_kernel(const float* __restrict__ maps, Batch<PeakItem> batch, PeakBand* bands, unsigned* tickets,
                          RankedPeak* out, std::size_t first) {
    __shared__ double dx2_s[kPenaltyTerms], dy2_s[kPenaltyTerms];
    __shared__ double sum_s[kPeakWarps], sq_s[kPeakWarps];
    __shared__ float max_s[kPeakWarps];
    __shared__ bool last;
    const std::size_t item = first + blockIdx.y;
    PeakBand* mine = bands + item * kMaxPeakBands;
    const int nbands = gridDim.x;
    const PeakBlock b(maps, batch[blockIdx.y], blockIdx.x, nbands, dx2_s, dy2_s);
    float ranked;
    long long bi;
    if (nbands == 1) {
        band_best(b, ranked, bi);
    } else {
        ranked = mine[0].best;
        bi = mine[0].best_index;
        for (int k = 1; k < nbands; ++k)
            if (better(mine[k].best, mine[k].best_index, ranked, bi)) {
                ranked = mine[k].best;
                bi = mine[k].best_index;
            }
    }
    const bool found = bi != LLONG_MAX;
    const int py = found ? static_cast<int>(bi / b.w) : 0;
    const int px = found ? static_cast<int>(bi - static_cast<long long>(py) * b.w) : 0;
    if (!found) ranked = -2.0f;
    const int radius = max(2, min(b.w, b.h) / 8);

    double sum = 0, sq = 0;
    float second = -1.0f;
    b.walk([&](float v, int x, int y) {
        if (abs(y - py) <= radius && abs(x - px) <= radius) return;
        sum += v;
        sq += static_cast<double>(v) * v;
        second = second < v ? v : second;
    });
    for (int off = 16; off > 0; off >>= 1) {
        sum += __shfl_down_sync(0xffffffffu, sum, off);
        sq += __shfl_down_sync(0xffffffffu, sq, off);
        const float o = __shfl_down_sync(0xffffffffu, second, off);
        second = second < o ? o : second;
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
        sum_s[warp] = sum;
        sq_s[warp] = sq;
        max_s[warp] = second;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int k = 1; k < kPeakWarps; ++k) {
            sum += sum_s[k];
            sq += sq_s[k];
            second = second < max_s[k] ? max_s[k] : second;
        }
        mine[blockIdx.x].sum = sum;
        mine[blockIdx.x].sum_sq = sq;
        mine[blockIdx.x].second = second;
        __threadfence();  // the band's sums are visible before its ticket counts
        last = atomicInc(&tickets[item], nbands - 1) == static_cast<unsigned>(nbands - 1);  // wraps to 0
    }
    __syncthreads();
    if (!last || threadIdx.x != 0) return;
    __threadfence();
    sum = 0;
    sq = 0;
    second = -1.0f;
    for (int k = 0; k < nbands; ++k) {
        const volatile PeakBand& band = mine[k];
        sum += band.sum;
        sq += band.sum_sq;
        second = second < band.second ? band.second : second;
    }
    const long long n = static_cast<long long>(b.w) * b.h;
    const long long zone_w = min(b.w - 1, px + radius) - max(0, px - radius) + 1;
    const long long zone_h = min(b.h - 1, py + radius) - max(0, py - radius) + 1;
    const long long count = n - zone_w * zone_h;
    RankedPeak r;
    r.ranked = ranked;
    r.peak.x = px;
    r.peak.y = py;
    r.peak.second = count > 0 ? second : 0.0f;
    r.peak.psr = 0.0f;
    if (count > 1) {
        const double mean = sum / count;
        const double var = sq / count - mean * mean;
        const double sd = sqrt(var > 0.0 ? var : 0.0);
        r.peak.psr = static_cast<float>((static_cast<double>(ranked) - mean) / (sd < 1e-6 ? 1e-6 : sd));
    }
    // Score and sub-pixel offset from the raw map.
    const float* row = b.map + static_cast<std::size_t>(py) * b.pitch;
    const float score = n > 0 ? row[px] : -2.0f;
    r.peak.score = score;
    r.peak.sub_x = static_cast<float>(px);
    r.peak.sub_y = static_cast<float>(py);
    if (px > 0 && px + 1 < b.w) r.peak.sub_x += parabolic_offset(row[px - 1], score, row[px + 1]);
    if (py > 0 && py + 1 < b.h) r.peak.sub_y += parabolic_offset(row[px - b.pitch], score, row[px + b.pitch]);
    out[item] = r;
}

// gradient.cpp's gradient_patch: one output pixel per thread, edge pixels repeated.
__global__ void gradient_kernel(std::uint8_t* atlas, Batch<GradientItem> batch) {
    const GradientItem& it = batch[blockIdx.z];
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= it.fill_width || y >= it.fill_height) return;
    if (x >= it.width || y >= it.height) {  // slot padding: read by map positions nobody uses
        atlas[it.dst_offset + static_cast<std::size_t>(y) * it.pitch + x] = 0;
        return;
    }
    const std::uint8_t* src = atlas + it.src_offset;
    const std::uint8_t* row = src + static_cast<std::size_t>(y) * it.pitch;
    const std::uint8_t* up = src + static_cast<std::size_t>(y > 0 ? y - 1 : 0) * it.pitch;
    const std::uint8_t* down = src + static_cast<std::size_t>(y + 1 < it.height ? y + 1 : y) * it.pitch;
    const int gx = abs(row[x + 1 < it.width ? x + 1 : x] - row[x > 0 ? x - 1 : 0]);
    const int gy = abs(down[x] - up[x]);
    atlas[it.dst_offset + static_cast<std::size_t>(y) * it.pitch + x] = static_cast<std::uint8_t>((gx + gy + 1) >> 1);
}

// gradient.cpp's blend_maps (no FMA: this file is compiled with --fmad=false).
__global__ void blend_kernel(float* maps, Batch<BlendItem> batch) {
    const BlendItem& it = batch[blockIdx.y];
    float* grey = maps + it.grey_offset;
    const float* grad = maps + it.gradient_offset;
    for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < it.count; i += gridDim.x * blockDim.x)
        grey[i] += it.weight * (grad[i] - grey[i]);
}

// Splits `items` into launches: launch(batch, count, first) per launch. With `on_device` (the
// same items in device memory) one launch takes them all; else launches of at most
// kMaxItemsPerLaunch, the items [first, first + count) copied into batch.item[0, count).
template <typename Item, typename Launch>
void for_each_batch(const std::vector<Item>& items, const Item* on_device, Launch launch) {
    if (on_device && items.size() > static_cast<std::size_t>(kMaxItemsPerLaunch)) {
        Batch<Item> batch{};
        batch.all = on_device;
        launch(batch, static_cast<int>(items.size()), std::size_t{0});
        return;
    }
    for (std::size_t first = 0; first < items.size(); first += kMaxItemsPerLaunch) {
        const int count = static_cast<int>(std::min<std::size_t>(kMaxItemsPerLaunch, items.size() - first));
        Batch<Item> batch{};
        for (int k = 0; k < count; ++k) batch.item[k] = items[first + k];
        launch(batch, count, first);
    }
}

// The pixels a per-pixel kernel covers for an item.
Size pixel_extent(const SampleItem& it) { return {it.width, it.height}; }
Size pixel_extent(const GradientItem& it) { return {it.fill_width, it.fill_height}; }

// The per-pixel kernels over patches: one grid layer (blockIdx.z) per item, 32 x 8 blocks
// covering the launch's widest item and, `rows_per_block` rows a block, its tallest;
// launch(batch, grid, block) per launch that has any pixels.
template <typename Item, typename Launch>
void for_each_pixel_batch(const std::vector<Item>& items, const Item* on_device, int rows_per_block, Launch launch) {
    for_each_batch(items, on_device, [&](const Batch<Item>& batch, int count, std::size_t first) {
        int w = 0, h = 0;
        for (std::size_t k = first; k < first + count; ++k) {
            const Size e = pixel_extent(items[k]);
            w = std::max(w, e.width);
            h = std::max(h, e.height);
        }
        if (w == 0 || h == 0) return;
        const dim3 block(32, 8);
        const dim3 grid((w + 31) / 32, (h + rows_per_block - 1) / rows_per_block, count);
        launch(batch, grid, block);
    });
}

}  // namespace

void launch_gradient_patches(std::uint8_t* atlas, const std::vector<GradientItem>& items, Stream stream,
                             const GradientItem* on_device) {
    for_each_pixel_batch(items, on_device, 8, [&](const Batch<GradientItem>& batch, dim3 grid, dim3 block) {
        gradient_kernel<<<grid, block, 0, as_cuda(stream)>>>(atlas, batch);
        CORRTRACK_CUDA_LAUNCHED();
    });
}

void launch_blend_maps(float* maps, const std::vector<BlendItem>& items, Stream stream, const BlendItem* on_device) {
    for_each_batch(items, on_device, [&](const Batch<BlendItem>& batch, int count, std::size_t first) {
        std::size_t longest = 0;
        for (std::size_t k = first; k < first + count; ++k) longest = std::max(longest, items[k].count);
        if (longest == 0) return;
        const int blocks = static_cast<int>(std::min<std::size_t>((longest + 255) / 256, 64));
        blend_kernel<<<dim3(blocks, count), 256, 0, as_cuda(stream)>>>(maps, batch);
        CORRTRACK_CUDA_LAUNCHED();
    });
}

void launch_build_levels(ImageView base, const std::vector<LevelBuild>& levels, Stream stream) {
    if (levels.empty()) return;
    if (levels.size() > static_cast<std::size_t>(kMaxLevelsPerBuild))
        throw std::invalid_argument("launch_build_levels: more levels than one launch builds");
    LevelChain chain;
    chain.base = base.data;
    chain.pitch = base.pitch;
    Size size = base.size();
    for (int d = 0; d <= kMaxLevelsPerBuild; ++d, size = pyramid_level_size(size, 1)) {
        chain.width[d] = size.width;
        chain.height[d] = size.height;
    }
    LevelBuilds builds;
    int w = 0, h = 0, count = 0;
    for (const LevelBuild& b : levels) {
        const Size out{chain.width[b.depth], chain.height[b.depth]};
        if (b.depth < 1 || b.depth > kMaxLevelsPerBuild || b.region.x < 0 || b.region.y < 0 ||
            b.region.x + b.region.width > out.width || b.region.y + b.region.height > out.height)
            throw std::invalid_argument("launch_build_levels: a region outside its level");
        if (b.region.width <= 0 || b.region.height <= 0) continue;
        builds.level[count++] = b;
        w = std::max(w, b.region.width);
        h = std::max(h, b.region.height);
    }
    if (count == 0) return;
    const dim3 block(32, 8);
    const dim3 grid((w + 31) / 32, (h + 7) / 8, count);
    build_levels_kernel<<<grid, block, 0, as_cuda(stream)>>>(chain, builds);
    CORRTRACK_CUDA_LAUNCHED();
}

void launch_sample_patches(const DeviceLevels& levels, const std::vector<SampleItem>& items, std::uint8_t* dst,
                           Stream stream, const SampleItem* on_device) {
    for_each_pixel_batch(items, on_device, kSampleRowsPerBlock,
                         [&](const Batch<SampleItem>& batch, dim3 grid, dim3 block) {
                             sample_patches_kernel<<<grid, block, 0, as_cuda(stream)>>>(levels, batch, dst);
                             CORRTRACK_CUDA_LAUNCHED();
                         });
}

void PeakScratch::ensure(std::size_t count, Stream stream) {
    if (count <= maps) return;
    count = grown_capacity(count, maps);  // headroom: target counts grow one by one
    bands.ensure(count * kMaxPeakBands);
    CORRTRACK_CUDA(cudaMemsetAsync(tickets.ensure(count), 0, count * sizeof(unsigned), as_cuda(stream)));
    maps = count;
}

void launch_ranked_peaks(const float* maps, const std::vector<PeakItem>& items, RankedPeak* out, PeakScratch& scratch,
                         Stream stream, const PeakItem* on_device) {
    if (items.size() > scratch.maps) throw std::logic_error("launch_ranked_peaks: scratch sized for fewer maps");
    for_each_batch(items, on_device, [&](const Batch<PeakItem>& batch, int count, std::size_t first) {
        // Bands of about kPeakBandFloats where a map is large enough to pay for launch 1, no
        // more than fill the GPU with the launch's maps.
        long long largest = 0;
        for (std::size_t k = first; k < first + count; ++k)
            largest = std::max(largest, static_cast<long long>(items[k].width) * items[k].height);
        const long long wanted = largest <= kPeakSplitFloats
                                     ? 1
                                     : std::min<long long>((largest + kPeakBandFloats - 1) / kPeakBandFloats,
                                                           std::max(1, kPeakBlocksWanted / count));
        const dim3 grid(static_cast<unsigned>(std::clamp<long long>(wanted, 1, kMaxPeakBands)), count);
        if (grid.x > 1) {
            band_best_kernel<<<grid, kPeakThreads, 0, as_cuda(stream)>>>(maps, batch, scratch.bands.get(), first);
            CORRTRACK_CUDA_LAUNCHED();
        }
        band_sidelobes_kernel<<<grid, kPeakThreads, 0, as_cuda(stream)>>>(maps, batch, scratch.bands.get(),
                                                                          scratch.tickets.get(), out, first);
        CORRTRACK_CUDA_LAUNCHED();
    });
}

}  // namespace corrtrack
