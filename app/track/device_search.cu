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

__global__ void sample_patches_kernel(DeviceLevels levels, Batch<SampleItem> batch, std::uint8_t* out) {
    const SampleItem& it = batch[blockIdx.z];
    const int u = blockIdx.x * blockDim.x + threadIdx.x;
    const int v = blockIdx.y * blockDim.y + threadIdx.y;
    if (u >= it.width || v >= it.height) return;
    const ImageView& lv = levels.level[it.level];
    const std::uint8_t* __restrict__ src = lv.data;
    const std::size_t src_pitch = lv.pitch;
    const int src_w = lv.width, src_h = lv.height;
    std::uint8_t* dst = out + it.dst_offset + static_cast<std::size_t>(v) * it.dst_pitch + u;
    const double s = it.scale;
    const bool integer_origin = it.ox == floor(it.ox) && it.oy == floor(it.oy);
    if (s == 1.0 && integer_origin) {
        const int x = clampi(static_cast<int>(it.ox) + u, 0, src_w - 1);
        const int y = clampi(static_cast<int>(it.oy) + v, 0, src_h - 1);
        *dst = src[static_cast<std::size_t>(y) * src_pitch + x];
        return;
    }
    if (s <= 1.25) {
        const double sy = it.oy + (v + 0.5) * s - 0.5;
        const int y0 = static_cast<int>(floor(sy));
        const float fy = static_cast<float>(sy - y0);
        const std::uint8_t* r0 = src + static_cast<std::size_t>(clampi(y0, 0, src_h - 1)) * src_pitch;
        const std::uint8_t* r1 = src + static_cast<std::size_t>(clampi(y0 + 1, 0, src_h - 1)) * src_pitch;
        const double sx = it.ox + (u + 0.5) * s - 0.5;
        const int x0 = static_cast<int>(floor(sx));
        const float fx = static_cast<float>(sx - x0);
        const int xa = clampi(x0, 0, src_w - 1), xb = clampi(x0 + 1, 0, src_w - 1);
        const float top = r0[xa] + fx * (r0[xb] - r0[xa]);
        const float bottom = r1[xa] + fx * (r1[xb] - r1[xa]);
        *dst = round_to_u8(top + fy * (bottom - top));
        return;
    }
    // Area averaging: the host filters rows horizontally, then columns; the same sums in the
    // same order here, one output pixel per thread.
    const int span = static_cast<int>(ceil(s)) + 2;
    const double ax = it.ox + u * s, bx = ax + s;
    const int cx0 = static_cast<int>(floor(ax));
    const int cx1 = min(static_cast<int>(ceil(bx)), cx0 + span);
    const double ay = it.oy + v * s, by = ay + s;
    const int ry0 = static_cast<int>(floor(ay));
    const int ry1 = min(static_cast<int>(ceil(by)), ry0 + span);
    float acc = 0;
    for (int j = ry0; j < ry1; ++j) {
        const std::uint8_t* row = src + static_cast<std::size_t>(clampi(j, 0, src_h - 1)) * src_pitch;
        float h = 0;
        for (int i = cx0; i < cx1; ++i) h += area_weight(ax, bx, s, i) * row[clampi(i, 0, src_w - 1)];
        acc += area_weight(ay, by, s, j) * h;
    }
    *dst = round_to_u8(acc);
}

constexpr int kPeakThreads = 512;
constexpr int kPeakWarps = kPeakThreads / 32;
constexpr int kPeakUnroll = 4;       // loads in flight per thread: the loop is latency-bound
constexpr int kPenaltyTerms = 1024;  // maps up to this wide and tall keep their terms in shared memory

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

// The penalty's per-column and per-row terms, once per block in shared memory where the map
// fits (the division is the costly part), else computed per element: the same bits either way.
struct PenaltyTerms {
    const double* dx2;  // nullptr: compute
    const double* dy2;
    Penalty p;
    __device__ float apply(float raw, int x, int y) const {
        if (!p.active()) return raw;
        const double a = dx2 ? dx2[x] : p.dx2(x), b = dy2 ? dy2[y] : p.dy2(y);
        return raw - static_cast<float>(p.weight * (a + b));
    }
};

// A thread's walk over the map in row-major order, kPeakThreads elements a step, with no
// division per element: (x, y) advance by the step's whole rows and remainder.
struct MapWalk {
    int x, y, step_x, step_y, w;
    __device__ MapWalk(int first, int width) : w(width) {
        y = first / width;
        x = first - y * width;
        step_y = kPeakThreads / width;
        step_x = kPeakThreads - step_y * width;
    }
    __device__ void next() {
        x += step_x;
        y += step_y;
        if (x >= w) {
            x -= w;
            ++y;
        }
    }
};

__device__ __forceinline__ bool better(float v, long long i, float bv, long long bi) {
    return v > bv || (v == bv && i < bi);
}

// One block per map. Pass 1: first maximum of the penalised map in row-major order. Pass 2:
// sidelobe statistics outside the exclusion zone, as find_peak (the sums reduce in tree order,
// so the PSR may differ from the host's in the last bits; the tracker only compares it with
// thresholds). Each thread keeps kPeakUnroll loads in flight per round.
__global__ void __launch_bounds__(kPeakThreads)
    ranked_peaks_kernel(const float* __restrict__ maps, Batch<PeakItem> batch, RankedPeak* out) {
    const PeakItem& it = batch[blockIdx.x];
    const float* map = maps + it.offset;
    const int w = it.width, h = it.height;
    const std::size_t pitch = static_cast<std::size_t>(it.pitch);
    __shared__ double dx2_s[kPenaltyTerms], dy2_s[kPenaltyTerms];
    __shared__ float best_v[kPeakWarps];
    __shared__ long long best_i[kPeakWarps];
    __shared__ double sum_s[kPeakWarps], sq_s[kPeakWarps];
    __shared__ float max_s[kPeakWarps];
    __shared__ int peak_x, peak_y;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long n = static_cast<long long>(w) * h;

    PenaltyTerms pen{nullptr, nullptr, Penalty(it.penalty, w, h)};
    if (pen.p.active() && w <= kPenaltyTerms && h <= kPenaltyTerms) {
        for (int i = threadIdx.x; i < w; i += kPeakThreads) dx2_s[i] = pen.p.dx2(i);
        for (int i = threadIdx.x; i < h; i += kPeakThreads) dy2_s[i] = pen.p.dy2(i);
        pen.dx2 = dx2_s;
        pen.dy2 = dy2_s;
        __syncthreads();
    }

    float bv = -2.0f;
    int bx = 0, by = -1;
    if (n > 0) {
        for (MapWalk m(threadIdx.x, w); m.y < h;) {
            float v[kPeakUnroll];
            int xs[kPeakUnroll], ys[kPeakUnroll];
#pragma unroll
            for (int k = 0; k < kPeakUnroll; ++k, m.next()) {
                xs[k] = m.x;
                ys[k] = m.y;
                v[k] = m.y < h ? map[m.y * pitch + m.x] : 0.0f;
            }
#pragma unroll
            for (int k = 0; k < kPeakUnroll; ++k) {
                if (ys[k] >= h) break;
                const float pv = pen.apply(v[k], xs[k], ys[k]);
                if (pv > bv) {  // a thread's positions only grow: `>` keeps its first maximum
                    bv = pv;
                    bx = xs[k];
                    by = ys[k];
                }
            }
        }
    }
    long long bi = by < 0 ? LLONG_MAX : static_cast<long long>(by) * w + bx;
    for (int off = 16; off > 0; off >>= 1) {
        const float ov = __shfl_down_sync(0xffffffffu, bv, off);
        const long long oi = __shfl_down_sync(0xffffffffu, bi, off);
        if (better(ov, oi, bv, bi)) {
            bv = ov;
            bi = oi;
        }
    }
    if (lane == 0) {
        best_v[warp] = bv;
        best_i[warp] = bi;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int k = 1; k < kPeakWarps; ++k)
            if (better(best_v[k], best_i[k], bv, bi)) {
                bv = best_v[k];
                bi = best_i[k];
            }
        const bool found = bi != LLONG_MAX;
        peak_y = found ? static_cast<int>(bi / w) : 0;
        peak_x = found ? static_cast<int>(bi - static_cast<long long>(peak_y) * w) : 0;
        best_v[0] = found ? bv : -2.0f;
    }
    __syncthreads();
    const int px = peak_x, py = peak_y;
    const float ranked = best_v[0];
    const int radius = max(2, min(w, h) / 8);
    double sum = 0, sq = 0;
    float second = -1.0f;
    if (n > 0) {
        for (MapWalk m(threadIdx.x, w); m.y < h;) {
            float v[kPeakUnroll];
            int xs[kPeakUnroll], ys[kPeakUnroll];
#pragma unroll
            for (int k = 0; k < kPeakUnroll; ++k, m.next()) {
                xs[k] = m.x;
                ys[k] = m.y;
                v[k] = m.y < h ? map[m.y * pitch + m.x] : 0.0f;
            }
#pragma unroll
            for (int k = 0; k < kPeakUnroll; ++k) {
                if (ys[k] >= h) break;
                if (abs(ys[k] - py) <= radius && abs(xs[k] - px) <= radius) continue;
                const float pv = pen.apply(v[k], xs[k], ys[k]);
                sum += pv;
                sq += static_cast<double>(pv) * pv;
                second = second < pv ? pv : second;
            }
        }
    }
    for (int off = 16; off > 0; off >>= 1) {
        sum += __shfl_down_sync(0xffffffffu, sum, off);
        sq += __shfl_down_sync(0xffffffffu, sq, off);
        const float o = __shfl_down_sync(0xffffffffu, second, off);
        second = second < o ? o : second;
    }
    if (lane == 0) {
        sum_s[warp] = sum;
        sq_s[warp] = sq;
        max_s[warp] = second;
    }
    __syncthreads();
    if (threadIdx.x != 0) return;
    for (int k = 1; k < kPeakWarps; ++k) {
        sum += sum_s[k];
        sq += sq_s[k];
        second = second < max_s[k] ? max_s[k] : second;
    }
    const long long zone_w = min(w - 1, px + radius) - max(0, px - radius) + 1;
    const long long zone_h = min(h - 1, py + radius) - max(0, py - radius) + 1;
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
    const float* row = map + static_cast<std::size_t>(py) * pitch;
    const float score = n > 0 ? row[px] : -2.0f;
    r.peak.score = score;
    r.peak.sub_x = static_cast<float>(px);
    r.peak.sub_y = static_cast<float>(py);
    if (px > 0 && px + 1 < w) r.peak.sub_x += parabolic_offset(row[px - 1], score, row[px + 1]);
    if (py > 0 && py + 1 < h) r.peak.sub_y += parabolic_offset(row[px - pitch], score, row[px + pitch]);
    out[blockIdx.x] = r;
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
// covering the launch's widest and tallest item; launch(batch, grid, block) per launch that
// has any pixels.
template <typename Item, typename Launch>
void for_each_pixel_batch(const std::vector<Item>& items, const Item* on_device, Launch launch) {
    for_each_batch(items, on_device, [&](const Batch<Item>& batch, int count, std::size_t first) {
        int w = 0, h = 0;
        for (std::size_t k = first; k < first + count; ++k) {
            const Size e = pixel_extent(items[k]);
            w = std::max(w, e.width);
            h = std::max(h, e.height);
        }
        if (w == 0 || h == 0) return;
        const dim3 block(32, 8);
        const dim3 grid((w + 31) / 32, (h + 7) / 8, count);
        launch(batch, grid, block);
    });
}

}  // namespace

void launch_gradient_patches(std::uint8_t* atlas, const std::vector<GradientItem>& items, Stream stream,
                             const GradientItem* on_device) {
    for_each_pixel_batch(items, on_device, [&](const Batch<GradientItem>& batch, dim3 grid, dim3 block) {
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
    for_each_pixel_batch(items, on_device, [&](const Batch<SampleItem>& batch, dim3 grid, dim3 block) {
        sample_patches_kernel<<<grid, block, 0, as_cuda(stream)>>>(levels, batch, dst);
        CORRTRACK_CUDA_LAUNCHED();
    });
}

void launch_ranked_peaks(const float* maps, const std::vector<PeakItem>& items, RankedPeak* out, Stream stream,
                         const PeakItem* on_device) {
    for_each_batch(items, on_device, [&](const Batch<PeakItem>& batch, int count, std::size_t first) {
        ranked_peaks_kernel<<<count, kPeakThreads, 0, as_cuda(stream)>>>(maps, batch, out + first);
        CORRTRACK_CUDA_LAUNCHED();
    });
}

}  // namespace corrtrack
