// GPU integral images (a CUB block scan per row, then a segmented column pass) and the finish
// kernels that combine them with an exact numerator into the NCC map.
#include <cub/block/block_load.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <stdexcept>

#include "cuda/integral.cuh"

namespace corrtrack {
namespace {

constexpr int kScanThreads = 256;
constexpr int kScanItems = 8;
constexpr int kScanTile = kScanThreads * kScanItems;

// Column pass: 16 columns per block (64- and 128-byte row pieces; the tables sit in L2 right
// after the row pass), kColSegments row segments per column scanned independently and joined
// through shared memory. 16 x 64 gives a 1080p table 117 blocks, nearly one per SM of an H200;
// 32 x 32 gave 61 and left half the SMs idle (ncu: 29 us of the 142 us cuda_mma pipeline).
constexpr int kColWidth = 16;
constexpr int kColSegments = 64;
constexpr int kColBatch = 8;  // loads in flight per thread before the dependent adds

constexpr int kFinishWidth = 32;
constexpr int kFinishRows = 8;

constexpr int kPrefixThreads = 256;  // template rows per block of the prefix kernel

// Seeds each tile of a row scan with the total of the tiles before it.
struct RunningTotal {
    std::uint64_t total;
    __device__ std::uint64_t operator()(std::uint64_t tile_total) {
        const std::uint64_t prefix = total;
        total += tile_total;
        return prefix;
    }
};

// Block r < h: inclusive prefix of roi row r into table row r + 1, columns 1..w, with column 0
// zero. Block h: table row 0, all zero. The pair (v, v^2) travels as one uint64 (low and high
// halves), so one scan gives both prefixes; neither half overflows for w <= kMaxIntegralWidth.
static __global__ void __launch_bounds__(kScanThreads)
    integral_rows_kernel(const std::uint8_t* __restrict__ img, std::size_t pitch, int w, int h,
                         std::uint32_t* __restrict__ sum, std::uint64_t* __restrict__ sum_sq, std::size_t tpitch) {
    using Load = cub::BlockLoad<std::uint8_t, kScanThreads, kScanItems, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
    using Scan = cub::BlockScan<std::uint64_t, kScanThreads>;
    using StoreSum = cub::BlockStore<std::uint32_t, kScanThreads, kScanItems, cub::BLOCK_STORE_WARP_TRANSPOSE>;
    using StoreSq = cub::BlockStore<std::uint64_t, kScanThreads, kScanItems, cub::BLOCK_STORE_WARP_TRANSPOSE>;
    __shared__ union {
        typename Load::TempStorage load;
        typename Scan::TempStorage scan;
        typename StoreSum::TempStorage store_sum;
        typename StoreSq::TempStorage store_sq;
    } tmp;

    const int row = blockIdx.x;
    if (row == h) {  // whole block leaves together: no barrier is skipped
        for (int x = threadIdx.x; x <= w; x += kScanThreads) {
            sum[x] = 0;
            sum_sq[x] = 0;
        }
        return;
    }
    const std::uint8_t* src = img + static_cast<std::size_t>(row) * pitch;
    std::uint32_t* dst_sum = sum + static_cast<std::size_t>(row + 1) * tpitch;
    std::uint64_t* dst_sq = sum_sq + static_cast<std::size_t>(row + 1) * tpitch;
    if (threadIdx.x == 0) {
        dst_sum[0] = 0;
        dst_sq[0] = 0;
    }
    RunningTotal running{0};
    for (int base = 0; base < w; base += kScanTile) {
        const int valid = min(kScanTile, w - base);
        std::uint8_t px[kScanItems];
        Load(tmp.load).Load(src + base, px, valid, std::uint8_t{0});
        __syncthreads();
        std::uint64_t v[kScanItems];
#pragma unroll
        for (int i = 0; i < kScanItems; ++i) {
            const std::uint32_t p = px[i];
            v[i] = static_cast<std::uint64_t>(p) | (static_cast<std::uint64_t>(p * p) << 32);
        }
        Scan(tmp.scan).InclusiveSum(v, v, running);
        __syncthreads();
        std::uint32_t s[kScanItems];
#pragma unroll
        for (int i = 0; i < kScanItems; ++i) s[i] = static_cast<std::uint32_t>(v[i]);
        StoreSum(tmp.store_sum).Store(dst_sum + 1 + base, s, valid);
        __syncthreads();
        std::uint64_t q[kScanItems];
#pragma unroll
        for (int i = 0; i < kScanItems; ++i) q[i] = v[i] >> 32;
        StoreSq(tmp.store_sq).Store(dst_sq + 1 + base, q, valid);
        __syncthreads();
    }
}

// Turns row prefixes into 2D prefixes: each column of table rows 1..rows is cut into
// kColSegments segments; a thread sums its segment, the block forms exclusive segment prefixes
// in shared memory, and each thread walks its segment again adding the running total.
static __global__ void __launch_bounds__(kColWidth* kColSegments)
    integral_cols_kernel(std::uint32_t* __restrict__ sum, std::uint64_t* __restrict__ sum_sq, std::size_t tpitch,
                         int cols, int rows) {
    __shared__ std::uint32_t seg_sum[kColSegments][kColWidth];
    __shared__ std::uint64_t seg_sq[kColSegments][kColWidth];
    const int c = blockIdx.x * kColWidth + threadIdx.x;
    const int s = threadIdx.y;
    const int seg_len = (rows + kColSegments - 1) / kColSegments;
    const int r_begin = 1 + s * seg_len;
    const int r_end = min(rows + 1, r_begin + seg_len);  // may be <= r_begin: empty segment

    std::uint32_t a = 0;
    std::uint64_t q = 0;
    if (c < cols) {
#pragma unroll 8
        for (int r = r_begin; r < r_end; ++r) {
            a += sum[static_cast<std::size_t>(r) * tpitch + c];
            q += sum_sq[static_cast<std::size_t>(r) * tpitch + c];
        }
    }
    seg_sum[s][threadIdx.x] = a;
    seg_sq[s][threadIdx.x] = q;
    __syncthreads();
    std::uint32_t run_a = 0;
    std::uint64_t run_q = 0;
    for (int k = 0; k < s; ++k) {
        run_a += seg_sum[k][threadIdx.x];
        run_q += seg_sq[k][threadIdx.x];
    }
    if (c >= cols) return;
    for (int r = r_begin; r < r_end; r += kColBatch) {
        std::uint32_t va[kColBatch];
        std::uint64_t vq[kColBatch];
#pragma unroll
        for (int b = 0; b < kColBatch; ++b) {
            const std::size_t at = static_cast<std::size_t>(r + b) * tpitch + c;
            va[b] = r + b < r_end ? sum[at] : 0u;
            vq[b] = r + b < r_end ? sum_sq[at] : 0u;
        }
#pragma unroll
        for (int b = 0; b < kColBatch; ++b) {
            if (r + b < r_end) {
                const std::size_t at = static_cast<std::size_t>(r + b) * tpitch + c;
                run_a += va[b];
                run_q += vq[b];
                sum[at] = run_a;
                sum_sq[at] = run_q;
            }
        }
    }
}

// The template prefix in two kernels: the rows in parallel over the whole GPU (a stacked
// batch of 768 templates of 40x40 is 30720 rows; one block doing them all took most of a
// tracker's correlation time), then one block scans the row sums in place.
// Thread r sums template row r into prefix[r + 1] (and packs its words when asked).
static __global__ void __launch_bounds__(kPrefixThreads)
    template_rows_kernel(const std::uint8_t* __restrict__ templ, int width, int rows,
                         TemplatePrefix* __restrict__ prefix, std::uint32_t* __restrict__ words) {
    const int r = blockIdx.x * kPrefixThreads + threadIdx.x;
    if (r == 0) prefix[0] = {0, 0};
    if (r >= rows) return;
    const int nwords = (width + 3) / 4;
    const std::uint8_t* row = templ + static_cast<std::size_t>(r) * width;
    std::uint64_t s = 0, q = 0;
    for (int i = 0; i < nwords; ++i) {
        std::uint32_t w = 0;
        for (int b = 0; b < 4; ++b) {
            if (4 * i + b >= width) break;
            const std::uint32_t v = __ldg(row + 4 * i + b);
            w |= v << (8 * b);
            s += v;
            q += v * v;
        }
        if (words) words[static_cast<std::size_t>(r) * nwords + i] = w;
    }
    prefix[r + 1] = {s, q};
}

constexpr int kPrefixScanThreads = 1024;

struct PrefixSum {
    __host__ __device__ TemplatePrefix operator()(const TemplatePrefix& a, const TemplatePrefix& b) const {
        return {a.sum + b.sum, a.sum_sq + b.sum_sq};
    }
};

// The row sums prefix[1..rows] become prefixes in tiles of kPrefixScanThreads x
// kPrefixScanItems rows: thread t loads rows 4t..4t+3 of the tile together, scans them, the
// block scans the threads' totals, and the tile's total carries into the next (the launcher
// sends it one tile at most: longer stacks go to CUB's device scan). (Each thread
// walking its own contiguous run, 30 rows apart from its neighbours', took 37 us for 768
// templates of 40 rows on the H200: one uncoalesced load after another, against 24 us so;
// 32 rows a thread in 256 threads took 28, bench/results/h200_2026-12-04/run4-6.)
constexpr int kPrefixScanItems = 4;
constexpr int kPrefixScanTile = kPrefixScanThreads * kPrefixScanItems;
static __global__ void __launch_bounds__(kPrefixScanThreads) template_scan_kernel(int rows, TemplatePrefix* prefix) {
    using Scan = cub::BlockScan<TemplatePrefix, kPrefixScanThreads>;
    __shared__ typename Scan::TempStorage tmp;
    TemplatePrefix* row_sums = prefix + 1;
    TemplatePrefix carry{0, 0};
    for (int base = 0; base < rows; base += kPrefixScanTile) {
        const int r0 = base + threadIdx.x * kPrefixScanItems;
        TemplatePrefix v[kPrefixScanItems];
#pragma unroll
        for (int i = 0; i < kPrefixScanItems; ++i) v[i] = r0 + i < rows ? row_sums[r0 + i] : TemplatePrefix{0, 0};
#pragma unroll
        for (int i = 1; i < kPrefixScanItems; ++i) v[i] = PrefixSum{}(v[i - 1], v[i]);
        TemplatePrefix before, tile_total;
        Scan(tmp).ExclusiveScan(v[kPrefixScanItems - 1], before, TemplatePrefix{0, 0}, PrefixSum{}, tile_total);
        before = PrefixSum{}(carry, before);
#pragma unroll
        for (int i = 0; i < kPrefixScanItems; ++i)
            if (r0 + i < rows) row_sums[r0 + i] = PrefixSum{}(before, v[i]);
        carry = PrefixSum{}(carry, tile_total);
        __syncthreads();  // tmp is reused by the next tile's scan
    }
}

// Reads the numerator of output (x, y) of map k: exact integers, or an FFT value to round.
struct ExactNumerator {
    const std::uint32_t* sit;
    std::size_t pitch;
    __device__ std::uint32_t operator()(int x, int y, int) const {
        return __ldg(sit + static_cast<std::size_t>(y) * pitch + x);
    }
};

struct RoundedNumerator {
    const double* corr;
    std::size_t pitch;
    std::size_t map_stride;  // elements between the numerators of successive maps
    double scale;
    // The FFT error is far below 0.5 (see corr_fft.cu), so the nearest integer is exact; the
    // clamps only keep the conversion defined.
    __device__ std::uint32_t operator()(int x, int y, int k) const {
        const double v = rint(__ldg(corr + k * map_stride + static_cast<std::size_t>(y) * pitch + x) * scale);
        return v <= 0.0 ? 0u : static_cast<std::uint32_t>(fmin(v, 4294967295.0));
    }
};

// Map k = blockIdx.z: its stats from `prefix` when given (a batch), else `stats`; its windows
// k * step table rows further down; its rows k * oh further down the output.
template <typename Numerator>
static __global__ void __launch_bounds__(kFinishWidth* kFinishRows)
    ncc_finish_kernel(Numerator num, IntegralTables tables, int tw, int th, DeviceTemplateStats stats,
                      const TemplatePrefix* __restrict__ prefix, int step, float* __restrict__ out,
                      std::size_t out_pitch, int ow, int oh) {
    const int x = blockIdx.x * kFinishWidth + threadIdx.x;
    const int y = blockIdx.y * kFinishRows + threadIdx.y;
    const int k = blockIdx.z;
    if (x >= ow || y >= oh) return;
    const DeviceTemplateStats ts = prefix ? stacked_template_stats(prefix, k, tw, th) : stats;
    out[(static_cast<std::size_t>(k) * oh + y) * out_pitch + x] =
        ncc_window(tables, x, y + k * step, tw, th, num(x, y, k), ts);
}

template <typename Numerator>
static void launch_finish(Numerator num, const IntegralTables& tables, Size templ, const DeviceTemplateStats& stats,
                          const TemplatePrefix* prefix, int templates, int step, MapView out, Size o,
                          cudaStream_t stream) {
    const dim3 block(kFinishWidth, kFinishRows);
    const dim3 grid((o.width + kFinishWidth - 1) / kFinishWidth, (o.height + kFinishRows - 1) / kFinishRows, templates);
    ncc_finish_kernel<<<grid, block, 0, stream>>>(num, tables, templ.width, templ.height, stats, prefix, step, out.data,
                                                  out.pitch, o.width, o.height);
    CORRTRACK_CUDA_LAUNCHED();
}

std::string size_text(Size s) { return std::to_string(s.width) + "x" + std::to_string(s.height); }

}  // namespace

bool GpuIntegral::supports(Size roi, std::string* why) {
    std::string err;
    if (roi.width > kMaxIntegralWidth)
        err = "search region " + size_text(roi) + " is wider than the " + std::to_string(kMaxIntegralWidth) +
              " pixels the integral row scan holds";
    else if (roi.area() > kMaxIntegralPixels)
        err = "search region " + size_text(roi) + " exceeds the " + std::to_string(kMaxIntegralPixels) +
              " pixels a uint32 sum table holds exactly";
    if (why) *why = err;
    return err.empty();
}

void GpuIntegral::build(ImageView roi, cudaStream_t stream) {
    size_ = roi.size();
    const std::size_t tpitch = static_cast<std::size_t>(roi.width) + 1;
    const std::size_t entries = tpitch * (static_cast<std::size_t>(roi.height) + 1);
    sum_.ensure(entries);
    sum_sq_.ensure(entries);
    integral_rows_kernel<<<roi.height + 1, kScanThreads, 0, stream>>>(roi.data, roi.pitch, roi.width, roi.height,
                                                                      sum_.get(), sum_sq_.get(), tpitch);
    CORRTRACK_CUDA_LAUNCHED();
    const int cols = roi.width + 1;
    integral_cols_kernel<<<(cols + kColWidth - 1) / kColWidth, dim3(kColWidth, kColSegments), 0, stream>>>(
        sum_.get(), sum_sq_.get(), tpitch, cols, roi.height);
    CORRTRACK_CUDA_LAUNCHED();
}

void launch_template_prefix(const std::uint8_t* templ, int width, int rows, TemplatePrefix* prefix,
                            std::uint32_t* words, DeviceBuffer<std::uint8_t>& workspace, cudaStream_t stream) {
    template_rows_kernel<<<(rows + kPrefixThreads - 1) / kPrefixThreads, kPrefixThreads, 0, stream>>>(
        templ, width, rows, prefix, words);
    CORRTRACK_CUDA_LAUNCHED();
    if (rows <= kPrefixScanTile) {  // one tile: one block, one launch
        template_scan_kernel<<<1, kPrefixScanThreads, 0, stream>>>(rows, prefix);
        CORRTRACK_CUDA_LAUNCHED();
        return;
    }
    // Many targets' stacks: CUB's device scan over the whole GPU, in place (one block took 24
    // us for 768 templates of 40 rows on the H200, bench/results/h200_2026-12-04/run5).
    std::size_t bytes = 0;
    CORRTRACK_CUDA(cub::DeviceScan::InclusiveScan(nullptr, bytes, prefix + 1, prefix + 1, PrefixSum{}, rows, stream));
    CORRTRACK_CUDA(cub::DeviceScan::InclusiveScan(workspace.ensure(std::max<std::size_t>(bytes, 1)), bytes, prefix + 1,
                                                  prefix + 1, PrefixSum{}, rows, stream));
}

void launch_ncc_finish(const std::uint32_t* sit, std::size_t sit_pitch, const IntegralTables& tables, Size templ,
                       const DeviceTemplateStats& stats, MapView out, Size out_size, cudaStream_t stream) {
    launch_finish(ExactNumerator{sit, sit_pitch}, tables, templ, stats, nullptr, 1, 0, out, out_size, stream);
}

void launch_ncc_finish_rounded(const double* corr, std::size_t corr_pitch, double scale, const IntegralTables& tables,
                               Size templ, const DeviceTemplateStats& stats, MapView out, Size out_size,
                               cudaStream_t stream) {
    launch_finish(RoundedNumerator{corr, corr_pitch, 0, scale}, tables, templ, stats, nullptr, 1, 0, out, out_size,
                  stream);
}

void launch_ncc_finish_rounded_batch(const double* corr, std::size_t corr_pitch, std::size_t map_stride, double scale,
                                     const IntegralTables& tables, Size templ, const TemplatePrefix* prefix,
                                     int templates, int step, MapView out, Size out_size, cudaStream_t stream) {
    launch_finish(RoundedNumerator{corr, corr_pitch, map_stride, scale}, tables, templ, DeviceTemplateStats{}, prefix,
                  templates, step, out, out_size, stream);
}

bool jpdc_supports(const NccProblem& p, std::string* why, bool batches) {
    if (!cuda_supports_common(p, why)) return false;
    std::string err;
    // Window sums of every template come from one pair of tables over the rows they search.
    const Size searched{p.roi.width, p.roi.height + (p.templates - 1) * p.template_roi_step};
    if (p.templates != 1 && !batches)
        err = std::to_string(p.templates) + " templates in one pass: this kernel runs one at a time";
    else if (p.templates > kMaxBatchTemplates)
        err = std::to_string(p.templates) + " templates in one pass: at most " + std::to_string(kMaxBatchTemplates) +
              " (one grid layer each)";
    else if (p.out_size().height > kMaxOutputRows)
        err = "search region " + size_text({p.roi.width, p.roi.height}) + " has more than " +
              std::to_string(kMaxOutputRows) + " output rows";
    else
        GpuIntegral::supports(searched, &err);
    if (why) *why = err;
    return err.empty();
}

void jpdc_check_run(const Correlator& self, ImageView frame, const NccProblem& p, MapView out,
                    const TemplateUpload& templ) {
    const std::string who = self.info().name + ": ";
    std::string why;
    if (!self.supports(p, &why)) throw std::invalid_argument(who + why);
    if (frame.space != MemorySpace::kDevice || out.space != MemorySpace::kDevice)
        throw std::invalid_argument(who + "frame and output must be device memory");
    if (frame.size() != p.frame)
        throw std::invalid_argument(who + "frame " + size_text(frame.size()) + " does not match the problem's " +
                                    size_text(p.frame));
    const Size stack{p.templ.width, p.templ.height * p.templates};
    if (templ.count() != 1 || templ.width() != stack.width || templ.height() != stack.height)
        throw std::invalid_argument(
            who + "no template of size " + size_text(stack) +
            (p.templates > 1 ? " (" + std::to_string(p.templates) + " stacked " + size_text(p.templ) + " templates)"
                             : std::string()) +
            " was set");
    const Size o{p.out_size().width, p.out_size().height * p.templates};
    if (out.size() != o || out.pitch < static_cast<std::size_t>(o.width))
        throw std::invalid_argument(who + "output " + size_text(out.size()) + " is not the " + size_text(o) +
                                    " the problem needs");
}

}  // namespace corrtrack
