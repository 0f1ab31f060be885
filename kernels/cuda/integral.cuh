// GPU integral images of a roi (window sums SI, SII) and the shared "finish" step that turns an
// exact numerator SIT into the NCC map, the per-template statistics of a template stack, plus
// the run-time checks the JPDC and FFT kernels share.
// Thread rules: a GpuIntegral belongs to one Correlator; build() and the launchers enqueue on the
// caller's stream and never synchronize. Host-compilable: device helpers need nvcc.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "corrtrack/correlator.h"
#include "corrtrack/ncc_math.h"
#include "cuda/common.cuh"

namespace corrtrack {

// The sum table is uint32: a table entry is at most 255 * roi pixels, below 2^32 up to
// 16,843,009 pixels (4096 x 4096 fits; 4K UHD, 3840 x 2160 = 8.3 Mpx, uses half the range).
// Box sums would stay exact beyond that (unsigned wrap-around cancels in a difference of four
// entries because a window sum is below 2^32), but the tables themselves are kept exact so
// tests can compare them entry by entry.
constexpr long long kMaxIntegralPixels = 0xffffffffLL / 255;
// The row scan carries (sum, sum of squares) of a row prefix as the two 32-bit halves of one
// uint64; a prefix of 65536 pixels keeps the square half at most 65536 * 255^2 < 2^32.
constexpr int kMaxIntegralWidth = 65536;
// The JPDC and FFT kernels put output rows on gridDim.y (<= 65535) in blocks of rows; one row
// per block in the worst case (warp-per-overlap).
constexpr int kMaxOutputRows = 65535;
// Batched launches put the template index on gridDim.z.
constexpr int kMaxBatchTemplates = 65535;

// Exact sums over template rows [0, r) of a vertical template stack: entry r of a (rows + 1)
// entry table. Template k of a stack of h-row templates has sum = e[(k + 1) h] - e[k h], so
// the statistics of any split come from one table built on the device when the template is
// set (set_template does not know the split; run() does). Equal to TemplateUpload::stats(k)
// of that split, bit for bit: both are exact integer sums of the same bytes.
struct TemplatePrefix {
    std::uint64_t sum, sum_sq;
};

// Device view of the two (w+1) x (h+1) tables; entry (x, y) holds the sum over [0,x) x [0,y).
struct IntegralTables {
    const std::uint32_t* sum = nullptr;
    const std::uint64_t* sum_sq = nullptr;
    std::size_t pitch = 0;  // entries per table row: roi width + 1

#if defined(__CUDACC__)
    __device__ __forceinline__ std::uint32_t box_sum(int x, int y, int w, int h) const {
        const std::size_t top = static_cast<std::size_t>(y) * pitch;
        const std::size_t bottom = static_cast<std::size_t>(y + h) * pitch;
        return __ldg(sum + bottom + x + w) - __ldg(sum + top + x + w) - __ldg(sum + bottom + x) + __ldg(sum + top + x);
    }
    __device__ __forceinline__ std::uint64_t box_sum_sq(int x, int y, int w, int h) const {
        const std::size_t top = static_cast<std::size_t>(y) * pitch;
        const std::size_t bottom = static_cast<std::size_t>(y + h) * pitch;
        return __ldg(sum_sq + bottom + x + w) - __ldg(sum_sq + top + x + w) - __ldg(sum_sq + bottom + x) +
               __ldg(sum_sq + top + x);
    }
#endif
};

#if defined(__CUDACC__)
// Statistics of template k (tw x th) of a stack, from its prefix table.
__device__ __forceinline__ DeviceTemplateStats stacked_template_stats(const TemplatePrefix* prefix, int k, int tw,
                                                                      int th) {
    const std::size_t lo = static_cast<std::size_t>(k) * th;
    const std::uint64_t sum = __ldg(&prefix[lo + th].sum) - __ldg(&prefix[lo].sum);
    const std::uint64_t sum_sq = __ldg(&prefix[lo + th].sum_sq) - __ldg(&prefix[lo].sum_sq);
    return {static_cast<std::int64_t>(tw) * th, static_cast<std::int64_t>(sum), static_cast<std::int64_t>(sum_sq)};
}

// NCC of the window at output (x, y) from its exact numerator: the one formula, ncc_from_sums.
__device__ __forceinline__ float ncc_window(const IntegralTables& t, int x, int y, int tw, int th, std::uint32_t sit,
                                            const DeviceTemplateStats& ts) {
    return ncc_from_sums(ts.n, static_cast<std::int64_t>(t.box_sum(x, y, tw, th)),
                         static_cast<std::int64_t>(t.box_sum_sq(x, y, tw, th)), static_cast<std::int64_t>(sit), ts.sum,
                         ts.sum_sq);
}
#endif

// Integral images of a device roi; storage grows once per shape and is reused after.
class GpuIntegral {
public:
    // Says no (with the reason) to a roi the tables cannot hold exactly.
    static bool supports(Size roi, std::string* why);
    // roi: device view (a sub-view of the frame); enqueues two kernels on the stream.
    void build(ImageView roi, cudaStream_t stream);
    IntegralTables tables() const { return {sum_.get(), sum_sq_.get(), static_cast<std::size_t>(size_.width) + 1}; }
    Size size() const { return size_; }

private:
    Size size_;
    DeviceBuffer<std::uint32_t> sum_;
    DeviceBuffer<std::uint64_t> sum_sq_;
};

// Builds the (rows + 1)-entry prefix table of a packed (pitch == width) device template stack
// of `rows` rows, and, when `words` is not null, packs it for the DP4A kernels on the way:
// word (r, i) holds bytes 4i .. 4i + 3 of row r, byte b in bits 8b .. 8b + 7, zero past the
// width ((width + 3) / 4 words a row). Two kernel launches on the stream (a stack of more
// than 4096 rows: three, CUB's device scan, its workspace grown in `workspace` when needed);
// never synchronizes.
void launch_template_prefix(const std::uint8_t* templ, int width, int rows, TemplatePrefix* prefix,
                            std::uint32_t* words, DeviceBuffer<std::uint8_t>& workspace, cudaStream_t stream);

// out(x, y) = NCC from sit[y * sit_pitch + x] (exact uint32 numerators), for out_size positions.
void launch_ncc_finish(const std::uint32_t* sit, std::size_t sit_pitch, const IntegralTables& tables, Size templ,
                       const DeviceTemplateStats& stats, MapView out, Size out_size, cudaStream_t stream);
// The same from an unnormalised FFT correlation: sit = round(corr[y * corr_pitch + x] * scale).
void launch_ncc_finish_rounded(const double* corr, std::size_t corr_pitch, double scale, const IntegralTables& tables,
                               Size templ, const DeviceTemplateStats& stats, MapView out, Size out_size,
                               cudaStream_t stream);

// A batch of `templates` maps in one launch (gridDim.z = template): map k's numerator is
// corr[k * map_stride + y * corr_pitch + x] (rounded as above), its windows are the table's
// boxes k * step rows below map 0's (tables over every row the templates search), its
// template statistics come from `prefix` (a stack of templ-sized templates), and it is
// written to out rows [k * out_size.height, (k + 1) * out_size.height).
void launch_ncc_finish_rounded_batch(const double* corr, std::size_t corr_pitch, std::size_t map_stride, double scale,
                                     const IntegralTables& tables, Size templ, const TemplatePrefix* prefix,
                                     int templates, int step, MapView out, Size out_size, cudaStream_t stream);

// What the JPDC and FFT kernels accept: the shared rules, tables that hold every searched row
// exactly, output rows that fit the grid, and one template unless the kernel runs batches
// (`batches`: templates > 1 up to kMaxBatchTemplates, any template_roi_step).
bool jpdc_supports(const NccProblem& p, std::string* why, bool batches = false);
// Throws std::invalid_argument when run() is called against its contract (host memory, wrong
// sizes, no template, an unsupported problem) instead of computing something wrong. The
// template must have been set as one image of p.templates stacked templates, and out must
// hold p.templates maps stacked.
void jpdc_check_run(const Correlator& self, ImageView frame, const NccProblem& p, MapView out,
                    const TemplateUpload& templ);

}  // namespace corrtrack
