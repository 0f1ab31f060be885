// The JPDC paper's warp-shuffle kernels ("Efficient GPU-accelerated Parallel Cross-correlation")
// adapted to valid-mode uint8 NCC: exact SIT in uint32 from warp-wide register buffers, then the
// integral-image denominator (integral.cuh). cuda_shuffle, cuda_shuffle_split,
// cuda_shuffle_grouped and cuda_warp_per_overlap; kernels/cuda/NOTES_jpdc.md says how each maps.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

#include "cuda/common.cuh"
#include "cuda/cuda_kernels.h"
#include "cuda/integral.cuh"

namespace corrtrack {
namespace {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarp = 32;
constexpr int kShuffleWarps = 8;      // warps (output rows) per block: cuda_shuffle, split
constexpr int kGroupedWarps = 4;      // warps per block: cuda_shuffle_grouped
constexpr int kGroupedImageRows = 4;  // image rows a warp holds in registers at once
constexpr int kOverlapWarps = 8;      // warps (output positions) per block: warp-per-overlap
constexpr int kSplitMinRows = 4;      // template rows per split worker, at least
constexpr int kSplitWarpsPerSm = 32;  // split until the grid has about this many warps per SM

// A valid-mode problem as the kernels see it: the roi in the frame, the packed template and
// the output size. Every image read is a column < roi_w of a row < roi_h, so inside the frame.
struct ShuffleArgs {
    const std::uint8_t* img;  // roi origin, device
    std::size_t pitch;        // frame pitch in bytes
    int roi_w, roi_h;
    const std::uint8_t* templ;  // tw x th, packed, device
    int tw, th;
    int ow, oh;
};

// Columns at or beyond the roi read as 0: they only feed lanes whose outputs are not written.
__device__ __forceinline__ std::uint32_t load_pixel(const std::uint8_t* row, int col, int roi_w) {
    return col < roi_w ? static_cast<std::uint32_t>(__ldg(row + col)) : 0u;
}

// One step of the paper's warp_shuffle_impl. Lane l holds image pixels l (bottom) and l + 32
// (top) of a 64-pixel window; template pixel k is broadcast from lane k; then the window moves
// one pixel: bottom shifts down a lane, lane 31 taking lane 0's top, and top shifts down.
__device__ __forceinline__ void shuffle_step(std::uint32_t& sum, std::uint32_t& bottom, std::uint32_t& top,
                                             std::uint32_t t, int k, int lane) {
    sum += bottom * __shfl_sync(kFullMask, t, k);
    const std::uint32_t send = lane == 0 ? top : bottom;
    bottom = __shfl_sync(kFullMask, send, (lane + 1) & (kWarp - 1));
    top = __shfl_down_sync(kFullMask, top, 1);
}

// SIT over template rows [j_begin, j_end) for output (x0 + lane, y); all 32 lanes take part
// whatever their x (their pixels feed their neighbours).
__device__ __forceinline__ std::uint32_t shuffle_rows(const ShuffleArgs& a, int x0, int y, int j_begin, int j_end) {
    const int lane = threadIdx.x;
    std::uint32_t sum = 0;
    for (int j = j_begin; j < j_end; ++j) {
        const std::uint8_t* row = a.img + static_cast<std::size_t>(y + j) * a.pitch;
        const std::uint8_t* trow = a.templ + static_cast<std::size_t>(j) * a.tw;
        std::uint32_t bottom = load_pixel(row, x0 + lane, a.roi_w);
        for (int i0 = 0; i0 < a.tw; i0 += kWarp) {
            std::uint32_t top = load_pixel(row, x0 + i0 + kWarp + lane, a.roi_w);
            const std::uint32_t t = i0 + lane < a.tw ? static_cast<std::uint32_t>(__ldg(trow + i0 + lane)) : 0u;
            if (a.tw - i0 >= kWarp) {
#pragma unroll
                for (int k = 0; k < kWarp; ++k) shuffle_step(sum, bottom, top, t, k, lane);
            } else {
                for (int k = 0; k < a.tw - i0; ++k) shuffle_step(sum, bottom, top, t, k, lane);
            }
            // After 32 steps bottom holds what top held: pixels 32..63 become the next 0..31.
        }
    }
    return sum;
}

// cuda_shuffle: one warp per 32 outputs of a row, one output per thread, denominator fused.
static __global__ void __launch_bounds__(kWarp* kShuffleWarps)
    shuffle_kernel(ShuffleArgs a, IntegralTables tables, DeviceTemplateStats stats, float* __restrict__ out,
                   std::size_t out_pitch) {
    const int y = blockIdx.y * kShuffleWarps + threadIdx.y;
    if (y >= a.oh) return;  // a warp is one threadIdx.y: it leaves whole
    const int x0 = blockIdx.x * kWarp;
    const std::uint32_t sit = shuffle_rows(a, x0, y, 0, a.th);
    const int x = x0 + threadIdx.x;
    if (x < a.ow) out[static_cast<std::size_t>(y) * out_pitch + x] = ncc_window(tables, x, y, a.tw, a.th, sit, stats);
}

// cuda_shuffle_split: worker blockIdx.z takes template rows [z * rows, (z + 1) * rows) of the
// same 32 outputs and adds its partial sum into the zeroed numerator map.
static __global__ void __launch_bounds__(kWarp* kShuffleWarps)
    shuffle_split_kernel(ShuffleArgs a, int rows_per_worker, std::uint32_t* __restrict__ sit) {
    const int y = blockIdx.y * kShuffleWarps + threadIdx.y;
    if (y >= a.oh) return;
    const int x0 = blockIdx.x * kWarp;
    const int j_begin = blockIdx.z * rows_per_worker;  // < th: the launcher sizes grid.z so
    const int j_end = min(a.th, j_begin + rows_per_worker);
    const std::uint32_t part = shuffle_rows(a, x0, y, j_begin, j_end);
    const int x = x0 + threadIdx.x;
    if (x < a.ow && part != 0) atomicAdd(sit + static_cast<std::size_t>(y) * a.ow + x, part);
}

// One step of the grouped kernel at template column i0 + k. Image row l's pixel i0 + lane + k
// comes from lane (lane + k) mod 32, which sends its bottom (pixel i0 + src) when src >= k and
// its top (pixel i0 + 32 + src) otherwise: one shuffle per row per step, buffers untouched.
// Template value m (template row r0 + m - (kRows - 1)) is broadcast once and meets image row l
// in output g = l + kRows - 1 - m, the pairs with 0 <= g < kRows, all resolved at compile time.
template <int kRows, int kImageRows>
__device__ __forceinline__ void grouped_step(std::uint32_t (&sum)[kRows], const std::uint32_t (&bottom)[kImageRows],
                                             const std::uint32_t (&top)[kImageRows],
                                             const std::uint32_t (&t)[kRows + kImageRows - 1], int k, int lane) {
    std::uint32_t v[kImageRows];
#pragma unroll
    for (int l = 0; l < kImageRows; ++l)
        v[l] = __shfl_sync(kFullMask, lane >= k ? bottom[l] : top[l], (lane + k) & (kWarp - 1));
#pragma unroll
    for (int m = 0; m < kRows + kImageRows - 1; ++m) {
        const std::uint32_t tb = __shfl_sync(kFullMask, t[m], k);
#pragma unroll
        for (int l = 0; l < kImageRows; ++l) {
            const int g = l + kRows - 1 - m;
            if (g >= 0 && g < kRows) sum[g] += v[l] * tb;
        }
    }
}

// cuda_shuffle_grouped (the paper's multirow_both): a thread computes kRows vertically adjacent
// outputs y0 .. y0 + kRows - 1. Image rows r = y0 + r0 .. (kImageRows at a time) are loaded
// once and used against every template row r - g that one of the outputs needs.
template <int kRows, int kImageRows>
static __global__ void __launch_bounds__(kWarp* kGroupedWarps)
    shuffle_grouped_kernel(ShuffleArgs a, IntegralTables tables, DeviceTemplateStats stats, float* __restrict__ out,
                           std::size_t out_pitch) {
    constexpr int kTemplRows = kRows + kImageRows - 1;
    const int lane = threadIdx.x;
    const int y0 = (blockIdx.y * kGroupedWarps + threadIdx.y) * kRows;
    if (y0 >= a.oh) return;  // whole warp
    const int x0 = blockIdx.x * kWarp;
    // Image rows (relative to y0) that meet some template row: 0 .. th + kRows - 2. Rows past
    // the roi only meet outputs past oh; they read as 0.
    const int rows = a.th + kRows - 1;
    const int rows_in_roi = min(rows, a.roi_h - y0);

    std::uint32_t sum[kRows];
#pragma unroll
    for (int g = 0; g < kRows; ++g) sum[g] = 0;

    for (int r0 = 0; r0 < rows; r0 += kImageRows) {
        const std::uint8_t* irow[kImageRows];
        bool in_roi[kImageRows];
        std::uint32_t bottom[kImageRows];
#pragma unroll
        for (int l = 0; l < kImageRows; ++l) {
            in_roi[l] = r0 + l < rows_in_roi;
            irow[l] = a.img + static_cast<std::size_t>(in_roi[l] ? y0 + r0 + l : 0) * a.pitch;
            bottom[l] = in_roi[l] ? load_pixel(irow[l], x0 + lane, a.roi_w) : 0u;
        }
        for (int i0 = 0; i0 < a.tw; i0 += kWarp) {
            std::uint32_t top[kImageRows];
#pragma unroll
            for (int l = 0; l < kImageRows; ++l)
                top[l] = in_roi[l] ? load_pixel(irow[l], x0 + i0 + kWarp + lane, a.roi_w) : 0u;
            // Template rows outside [0, th) and columns past tw are 0, so the combinations the
            // current outputs do not need add nothing.
            std::uint32_t t[kTemplRows];
            const bool col_ok = i0 + lane < a.tw;
#pragma unroll
            for (int m = 0; m < kTemplRows; ++m) {
                const int j = r0 + m - (kRows - 1);
                t[m] = col_ok && j >= 0 && j < a.th
                           ? static_cast<std::uint32_t>(__ldg(a.templ + static_cast<std::size_t>(j) * a.tw + i0 + lane))
                           : 0u;
            }
            if (a.tw - i0 >= kWarp) {
#pragma unroll
                for (int k = 0; k < kWarp; ++k) grouped_step<kRows, kImageRows>(sum, bottom, top, t, k, lane);
            } else {
                for (int k = 0; k < a.tw - i0; ++k) grouped_step<kRows, kImageRows>(sum, bottom, top, t, k, lane);
            }
#pragma unroll
            for (int l = 0; l < kImageRows; ++l) bottom[l] = top[l];
        }
    }

    const int x = x0 + lane;
    if (x >= a.ow) return;  // no shuffles below
#pragma unroll
    for (int g = 0; g < kRows; ++g) {
        const int y = y0 + g;
        if (y < a.oh)
            out[static_cast<std::size_t>(y) * out_pitch + x] = ncc_window(tables, x, y, a.tw, a.th, sum[g], stats);
    }
}

__device__ __forceinline__ std::uint32_t warp_sum(std::uint32_t v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    return __reduce_add_sync(kFullMask, v);
#else
    for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset);
    return __shfl_sync(kFullMask, v, 0);
#endif
}

// cuda_warp_per_overlap: one warp per output; lanes stride over the template pixels in row-major
// order (p = j * tw + i, tracked incrementally), then a warp reduction.
static __global__ void __launch_bounds__(kWarp* kOverlapWarps)
    warp_per_overlap_kernel(ShuffleArgs a, IntegralTables tables, DeviceTemplateStats stats, float* __restrict__ out,
                            std::size_t out_pitch) {
    const int x = blockIdx.x * kOverlapWarps + threadIdx.y;
    const int y = blockIdx.y;
    if (x >= a.ow) return;  // whole warp
    const int lane = threadIdx.x;
    const int n = a.tw * a.th;
    const int di = kWarp % a.tw, dj = kWarp / a.tw;
    int i = lane % a.tw, j = lane / a.tw;
    const std::uint8_t* window = a.img + static_cast<std::size_t>(y) * a.pitch + x;
    std::uint32_t sum = 0;
#pragma unroll 4
    for (int p = lane; p < n; p += kWarp) {
        sum += static_cast<std::uint32_t>(__ldg(window + static_cast<std::size_t>(j) * a.pitch + i)) *
               static_cast<std::uint32_t>(__ldg(a.templ + p));
        i += di;
        j += dj;
        if (i >= a.tw) {
            i -= a.tw;
            ++j;
        }
    }
    sum = warp_sum(sum);
    if (lane == 0) out[static_cast<std::size_t>(y) * out_pitch + x] = ncc_window(tables, x, y, a.tw, a.th, sum, stats);
}

int div_up(int a, int b) { return (a + b - 1) / b; }

static void launch_shuffle(const ShuffleArgs& a, const IntegralTables& tables, const DeviceTemplateStats& stats,
                           MapView out, cudaStream_t stream) {
    const dim3 grid(div_up(a.ow, kWarp), div_up(a.oh, kShuffleWarps));
    shuffle_kernel<<<grid, dim3(kWarp, kShuffleWarps), 0, stream>>>(a, tables, stats, out.data, out.pitch);
    CORRTRACK_CUDA_LAUNCHED();
}

// Workers per output: enough to give the GPU about kSplitWarpsPerSm warps per SM, no more than
// one per kSplitMinRows template rows (each worker costs an atomic per output).
static void launch_shuffle_split(const ShuffleArgs& a, int sm_count, std::uint32_t* sit, cudaStream_t stream) {
    const long long base_warps = static_cast<long long>(div_up(a.ow, kWarp)) * a.oh;
    const long long wanted = (static_cast<long long>(sm_count) * kSplitWarpsPerSm + base_warps - 1) / base_warps;
    const int max_workers = std::max(1, a.th / kSplitMinRows);
    const int workers = static_cast<int>(std::clamp<long long>(wanted, 1, max_workers));
    const int rows_per_worker = div_up(a.th, workers);
    const int grid_z = div_up(a.th, rows_per_worker);  // every worker has at least one row
    CORRTRACK_CUDA(cudaMemsetAsync(sit, 0, sizeof(std::uint32_t) * a.ow * a.oh, stream));
    const dim3 grid(div_up(a.ow, kWarp), div_up(a.oh, kShuffleWarps), grid_z);
    shuffle_split_kernel<<<grid, dim3(kWarp, kShuffleWarps), 0, stream>>>(a, rows_per_worker, sit);
    CORRTRACK_CUDA_LAUNCHED();
}

template <int kRows>
static void launch_grouped_rows(const ShuffleArgs& a, const IntegralTables& tables, const DeviceTemplateStats& stats,
                                MapView out, cudaStream_t stream) {
    const dim3 grid(div_up(a.ow, kWarp), div_up(a.oh, kGroupedWarps * kRows));
    shuffle_grouped_kernel<kRows, kGroupedImageRows>
        <<<grid, dim3(kWarp, kGroupedWarps), 0, stream>>>(a, tables, stats, out.data, out.pitch);
    CORRTRACK_CUDA_LAUNCHED();
}

static void launch_grouped(int rows, const ShuffleArgs& a, const IntegralTables& tables,
                           const DeviceTemplateStats& stats, MapView out, cudaStream_t stream) {
    switch (rows) {
    case 2: launch_grouped_rows<2>(a, tables, stats, out, stream); break;
    case 4: launch_grouped_rows<4>(a, tables, stats, out, stream); break;
    case 8: launch_grouped_rows<8>(a, tables, stats, out, stream); break;
    default: throw std::invalid_argument("cuda_shuffle_grouped: rows must be 2, 4 or 8");
    }
}

static void launch_warp_per_overlap(const ShuffleArgs& a, const IntegralTables& tables,
                                    const DeviceTemplateStats& stats, MapView out, cudaStream_t stream) {
    const dim3 grid(div_up(a.ow, kOverlapWarps), a.oh);
    warp_per_overlap_kernel<<<grid, dim3(kWarp, kOverlapWarps), 0, stream>>>(a, tables, stats, out.data, out.pitch);
    CORRTRACK_CUDA_LAUNCHED();
}

// The plumbing all four share: template upload, integral images, checks; subclasses launch.
class ShuffleFamily : public Correlator {
public:
    explicit ShuffleFamily(KernelInfo info) : info_(std::move(info)) {}
    const KernelInfo& info() const override { return info_; }
    bool supports(const NccProblem& p, std::string* why) const override { return jpdc_supports(p, why); }
    void set_template(ImageView templ, Stream stream) override { templ_.set(templ, templ.height, stream); }
    void run(ImageView frame, const NccProblem& p, MapView out, Stream stream) override {
        jpdc_check_run(*this, frame, p, out, templ_);
        const cudaStream_t s = as_cuda(stream);
        const ImageView roi = frame.sub(p.roi);
        integral_.build(roi, s);
        const Size o = p.out_size();
        const ShuffleArgs a{roi.data,      roi.pitch,      roi.width, roi.height, templ_.device(),
                            p.templ.width, p.templ.height, o.width,   o.height};
        launch(a, out, s);
    }

protected:
    virtual void launch(const ShuffleArgs& a, MapView out, cudaStream_t stream) = 0;
    IntegralTables tables() const { return integral_.tables(); }
    const DeviceTemplateStats& stats() const { return templ_.stats(); }

private:
    KernelInfo info_;
    TemplateUpload templ_;
    GpuIntegral integral_;
};

class CudaShuffle final : public ShuffleFamily {
public:
    CudaShuffle() : ShuffleFamily(registry_info("cuda_shuffle")) {}

private:
    void launch(const ShuffleArgs& a, MapView out, cudaStream_t s) override {
        launch_shuffle(a, tables(), stats(), out, s);
    }
};

class CudaShuffleSplit final : public ShuffleFamily {
public:
    CudaShuffleSplit() : ShuffleFamily(registry_info("cuda_shuffle_split")) {}

private:
    void launch(const ShuffleArgs& a, MapView out, cudaStream_t s) override {
        if (sm_count_ == 0) {
            int dev = 0;
            CORRTRACK_CUDA(cudaGetDevice(&dev));
            CORRTRACK_CUDA(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, dev));
        }
        std::uint32_t* sit = sit_.ensure(static_cast<std::size_t>(a.ow) * a.oh);
        launch_shuffle_split(a, sm_count_, sit, s);
        launch_ncc_finish(sit, a.ow, tables(), {a.tw, a.th}, stats(), out, {a.ow, a.oh}, s);
    }
    int sm_count_ = 0;
    DeviceBuffer<std::uint32_t> sit_;
};

class CudaShuffleGrouped final : public ShuffleFamily {
public:
    CudaShuffleGrouped(int rows, std::string name) : ShuffleFamily(registry_info(name)), rows_(rows) {}

private:
    void launch(const ShuffleArgs& a, MapView out, cudaStream_t s) override {
        launch_grouped(rows_, a, tables(), stats(), out, s);
    }
    int rows_;
};

class CudaWarpPerOverlap final : public ShuffleFamily {
public:
    CudaWarpPerOverlap() : ShuffleFamily(registry_info("cuda_warp_per_overlap")) {}

private:
    void launch(const ShuffleArgs& a, MapView out, cudaStream_t s) override {
        launch_warp_per_overlap(a, tables(), stats(), out, s);
    }
};

}  // namespace

std::unique_ptr<Correlator> make_cuda_shuffle() { return std::make_unique<CudaShuffle>(); }
std::unique_ptr<Correlator> make_cuda_shuffle_split() { return std::make_unique<CudaShuffleSplit>(); }
std::unique_ptr<Correlator> make_cuda_shuffle_grouped() {
    return std::make_unique<CudaShuffleGrouped>(kShuffleGroupedRows, "cuda_shuffle_grouped");
}
std::unique_ptr<Correlator> make_cuda_shuffle_grouped_rows(int rows) {
    if (rows != 2 && rows != 4 && rows != 8) return nullptr;
    return std::make_unique<CudaShuffleGrouped>(rows, "cuda_shuffle_grouped_r" + std::to_string(rows));
}
std::unique_ptr<Correlator> make_cuda_warp_per_overlap() { return std::make_unique<CudaWarpPerOverlap>(); }

}  // namespace corrtrack
