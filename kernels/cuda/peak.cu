// CudaPeakFinder: find_peak (peak.cpp) on the GPU, in two passes over the map. Pass 1: argmax
// (first maximum in row-major order); its last block reduces the per-block winners and fits the
// sub-pixel parabola. Pass 2: sum, sum of squares and maximum outside the exclusion zone; its
// last block reduces them and writes the PSR. One copy brings the Peak to pinned host memory.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>

#include "corrtrack/cuda_peak.h"
#include "cuda/common.cuh"

namespace corrtrack {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr float kNoScore = -2.0f;  // find_peak's start value: only scores above it can win
constexpr long long kNoIndex = LLONG_MAX;

struct ArgMax {
    float v;
    long long i;  // y * width + x
};

// find_peak keeps the first maximum in row-major order; with the index as tie-break the
// reduction gives the same winner in any order. NaN never wins (both comparisons fail), as in
// find_peak's `>` scan.
__device__ __forceinline__ void take_better(ArgMax& a, float v, long long i) {
    if (v > a.v || (v == a.v && i < a.i)) {
        a.v = v;
        a.i = i;
    }
}

// Block-wide argmax; the result is valid in thread 0. Callers reusing `scratch` sync first.
__device__ ArgMax block_argmax(ArgMax a, ArgMax* scratch) {
    for (int off = 16; off > 0; off >>= 1)
        take_better(a, __shfl_down_sync(kFullMask, a.v, off), __shfl_down_sync(kFullMask, a.i, off));
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    if (lane == 0) scratch[warp] = a;
    __syncthreads();
    if (warp == 0) {
        a = lane < kWarps ? scratch[lane] : ArgMax{kNoScore, kNoIndex};
        for (int off = 16; off > 0; off >>= 1)
            take_better(a, __shfl_down_sync(kFullMask, a.v, off), __shfl_down_sync(kFullMask, a.i, off));
    }
    return a;
}

struct Stats {
    double sum, sq;
    float max;  // find_peak's `second`: starts at -1, NaN never replaces it (std::max order)
};

__device__ __forceinline__ void add_stats(Stats& a, double sum, double sq, float max) {
    a.sum += sum;
    a.sq += sq;
    a.max = a.max < max ? max : a.max;
}

// Block-wide sums in a fixed order (so the result never varies between runs); valid in thread 0.
__device__ Stats block_stats(Stats s, Stats* scratch) {
    for (int off = 16; off > 0; off >>= 1)
        add_stats(s, __shfl_down_sync(kFullMask, s.sum, off), __shfl_down_sync(kFullMask, s.sq, off),
                  __shfl_down_sync(kFullMask, s.max, off));
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    if (lane == 0) scratch[warp] = s;
    __syncthreads();
    if (warp == 0) {
        s = lane < kWarps ? scratch[lane] : Stats{0.0, 0.0, -1.0f};
        for (int off = 16; off > 0; off >>= 1)
            add_stats(s, __shfl_down_sync(kFullMask, s.sum, off), __shfl_down_sync(kFullMask, s.sq, off),
                      __shfl_down_sync(kFullMask, s.max, off));
    }
    return s;
}

// True in every thread of the block that finishes last. Thread 0 has written the block's
// partial; the fence publishes it before the ticket, and atomicInc wraps the ticket back to 0
// for the next launch. The last block fences again before reading the partials (through L2).
__device__ bool last_block(unsigned* ticket) {
    __shared__ bool last;
    if (threadIdx.x == 0) {
        __threadfence();
        last = atomicInc(ticket, gridDim.x - 1) == gridDim.x - 1;
    }
    __syncthreads();
    if (last) __threadfence();
    return last;
}

// Blocks take rows y = blockIdx.x, + gridDim.x, ...; threads take columns.
static __global__ void __launch_bounds__(kThreads)
    peak_argmax_kernel(const float* __restrict__ map, std::size_t pitch, int w, int h, ArgMax* partial,
                       unsigned* ticket, Peak* peak) {
    __shared__ ArgMax scratch[kWarps];
    ArgMax best{kNoScore, kNoIndex};
    for (int y = blockIdx.x; y < h; y += gridDim.x) {
        const float* row = map + static_cast<std::size_t>(y) * pitch;
        for (int x = threadIdx.x; x < w; x += kThreads) {
            const float v = row[x];
            if (v > best.v) {  // a thread's indices only grow: `>` keeps its first maximum
                best.v = v;
                best.i = static_cast<long long>(y) * w + x;
            }
        }
    }
    best = block_argmax(best, scratch);
    if (threadIdx.x == 0) partial[blockIdx.x] = best;
    if (!last_block(ticket)) return;

    best = ArgMax{kNoScore, kNoIndex};
    for (int b = threadIdx.x; b < gridDim.x; b += kThreads)
        take_better(best, __ldcg(&partial[b].v), __ldcg(&partial[b].i));
    __syncthreads();  // scratch is reused
    best = block_argmax(best, scratch);
    if (threadIdx.x != 0) return;

    // As find_peak: nothing above kNoScore leaves the peak at (0, 0) with score kNoScore.
    const bool found = best.i != kNoIndex;
    const int py = found ? static_cast<int>(best.i / w) : 0;
    const int px = found ? static_cast<int>(best.i - static_cast<long long>(py) * w) : 0;
    const float score = found ? best.v : kNoScore;
    const float* row = map + static_cast<std::size_t>(py) * pitch;
    float sub_x = static_cast<float>(px);
    float sub_y = static_cast<float>(py);
    if (px > 0 && px + 1 < w) sub_x = __fadd_rn(sub_x, parabolic_offset(row[px - 1], score, row[px + 1]));
    if (py > 0 && py + 1 < h) sub_y = __fadd_rn(sub_y, parabolic_offset((row - pitch)[px], score, (row + pitch)[px]));
    peak->x = px;
    peak->y = py;
    peak->sub_x = sub_x;
    peak->sub_y = sub_y;
    peak->score = score;
}

static __global__ void __launch_bounds__(kThreads)
    peak_stats_kernel(const float* __restrict__ map, std::size_t pitch, int w, int h, int radius, Stats* partial,
                      unsigned* ticket, Peak* peak) {
    __shared__ Stats scratch[kWarps];
    const int px = peak->x;  // written by peak_argmax_kernel, earlier on the same stream
    const int py = peak->y;
    Stats s{0.0, 0.0, -1.0f};
    for (int y = blockIdx.x; y < h; y += gridDim.x) {
        const float* row = map + static_cast<std::size_t>(y) * pitch;
        const bool near_row = abs(y - py) <= radius;
        for (int x = threadIdx.x; x < w; x += kThreads) {
            if (near_row && abs(x - px) <= radius) continue;
            const float v = row[x];
            add_stats(s, v, static_cast<double>(v) * v, v);  // float * float is exact in double
        }
    }
    s = block_stats(s, scratch);
    if (threadIdx.x == 0) partial[blockIdx.x] = s;
    if (!last_block(ticket)) return;

    s = Stats{0.0, 0.0, -1.0f};
    for (int b = threadIdx.x; b < gridDim.x; b += kThreads)
        add_stats(s, __ldcg(&partial[b].sum), __ldcg(&partial[b].sq), __ldcg(&partial[b].max));
    __syncthreads();  // scratch is reused
    s = block_stats(s, scratch);
    if (threadIdx.x != 0) return;

    // The zone always holds the peak, so its intersection with the map is a non-empty box.
    const long long zone_w = min(w - 1, px + radius) - max(0, px - radius) + 1;
    const long long zone_h = min(h - 1, py + radius) - max(0, py - radius) + 1;
    const long long count = static_cast<long long>(w) * h - zone_w * zone_h;
    peak->second = count > 0 ? s.max : 0.0f;
    float psr = 0.0f;
    if (count > 1) {
        const double n = static_cast<double>(count);
        const double mean = __ddiv_rn(s.sum, n);
        const double var = __dsub_rn(__ddiv_rn(s.sq, n), __dmul_rn(mean, mean));
        const double sd = sqrt(0.0 < var ? var : 0.0);  // std::max(0.0, var), NaN included
        psr = static_cast<float>(__ddiv_rn(static_cast<double>(peak->score) - mean, sd < 1e-6 ? 1e-6 : sd));
    }
    peak->psr = psr;
}

}  // namespace

struct CudaPeakFinder::Impl {
    int max_blocks = 0;
    DeviceBuffer<ArgMax> argmax_partial;
    DeviceBuffer<Stats> stats_partial;
    DeviceBuffer<unsigned> tickets;  // [0] pass 1, [1] pass 2; each launch leaves its at 0
    DeviceBuffer<Peak> peak;
    Peak* host = nullptr;  // pinned
    cudaEvent_t done = nullptr;
    bool pending = false;
    Peak last;

    ~Impl() {
        if (done) {
            cudaEventSynchronize(done);  // a queued copy may still target `host`
            cudaEventDestroy(done);
        }
        if (host) cudaFreeHost(host);
    }
};

CudaPeakFinder::CudaPeakFinder() : impl_(std::make_unique<Impl>()) {
    int dev = 0, sms = 0;
    CORRTRACK_CUDA(cudaGetDevice(&dev));
    CORRTRACK_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    // Two blocks of 256 threads per SM keep every SM reading; the last block then reduces at
    // most a few hundred partials.
    impl_->max_blocks = std::max(1, 2 * sms);
    impl_->argmax_partial.ensure(impl_->max_blocks);
    impl_->stats_partial.ensure(impl_->max_blocks);
    impl_->tickets.ensure(2);
    impl_->peak.ensure(1);
    CORRTRACK_CUDA(cudaMemset(impl_->tickets.get(), 0, 2 * sizeof(unsigned)));
    CORRTRACK_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&impl_->host), sizeof(Peak), cudaHostAllocDefault));
    CORRTRACK_CUDA(cudaEventCreateWithFlags(&impl_->done, cudaEventDisableTiming));
}

CudaPeakFinder::~CudaPeakFinder() = default;

void CudaPeakFinder::find(const MapView& map, Stream stream, PeakOptions opt) {
    Impl& m = *impl_;
    if (map.width <= 0 || map.height <= 0) {  // nothing to read: find_peak's answer, on the host
        m.last = find_peak(map, opt);
        m.pending = false;
        return;
    }
    const cudaStream_t s = as_cuda(stream);
    const int w = map.width, h = map.height;
    int radius = opt.exclusion_radius > 0 ? opt.exclusion_radius : std::max(2, std::min(w, h) / 8);
    radius = std::min(radius, std::max(w, h));  // same zone, no overflow in px + radius
    const int blocks = std::min(h, m.max_blocks);
    peak_argmax_kernel<<<blocks, kThreads, 0, s>>>(map.data, map.pitch, w, h, m.argmax_partial.get(), m.tickets.get(),
                                                   m.peak.get());
    CORRTRACK_CUDA_LAUNCHED();
    peak_stats_kernel<<<blocks, kThreads, 0, s>>>(map.data, map.pitch, w, h, radius, m.stats_partial.get(),
                                                  m.tickets.get() + 1, m.peak.get());
    CORRTRACK_CUDA_LAUNCHED();
    CORRTRACK_CUDA(cudaMemcpyAsync(m.host, m.peak.get(), sizeof(Peak), cudaMemcpyDeviceToHost, s));
    CORRTRACK_CUDA(cudaEventRecord(m.done, s));
    m.pending = true;
}

Peak CudaPeakFinder::get() {
    Impl& m = *impl_;
    if (m.pending) {
        CORRTRACK_CUDA(cudaEventSynchronize(m.done));
        m.last = *m.host;
        m.pending = false;
    }
    return m.last;
}

}  // namespace corrtrack
