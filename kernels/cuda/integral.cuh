// GPU integral images of a roi (window sums SI, SII) and the shared "finish" step that turns an
// exact numerator SIT into the NCC map, plus the run-time checks the JPDC and FFT kernels share.
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

// Device view of the two (w+1) x (h+1) tables; entry (x, y) holds the sum over [0,x) x [0,y).
struct IntegralTables {
    const std::uint32_t* sum = nullptr;
    const std::uint64_t* sum_sq = nullptr;
    std::size_t pitch = 0;  // entries per table row: roi width + 1

#if defined(__CUDACC__)
    __device__ __forceinline__ std::uint32_t box_sum(int x, int y, int w, int h) const {
        const std::size_t top = static_cast<std::size_t>(y) * pitch;
        const std::size_t bottom = static_cast<std::size_t>(y + h) * pitch;
        return __ldg(sum + bottom + x + w) - __ldg(sum + top + x + w) - __ldg(sum + bottom + x) +
               __ldg(sum + top + x);
    }
    __device__ __forceinline__ std::uint64_t box_sum_sq(int x, int y, int w, int h) const {
        const std::size_t top = static_cast<std::size_t>(y) * pitch;
        const std::size_t bottom = static_cast<std::size_t>(y + h) * pitch;
        return __ldg(sum_sq + bottom + x + w) - __ldg(sum_sq + top + x + w) -
               __ldg(sum_sq + bottom + x) + __ldg(sum_sq + top + x);
    }
#endif
};

#if defined(__CUDACC__)
// NCC of the window at output (x, y) from its exact numerator: the one formula, ncc_from_sums.
__device__ __forceinline__ float ncc_window(const IntegralTables& t, int x, int y, int tw, int th,
                                            std::uint32_t sit, const DeviceTemplateStats& ts) {
    return ncc_from_sums(ts.n, static_cast<std::int64_t>(t.box_sum(x, y, tw, th)),
                         static_cast<std::int64_t>(t.box_sum_sq(x, y, tw, th)),
                         static_cast<std::int64_t>(sit), ts.sum, ts.sum_sq);
}
#endif

// Integral images of a device roi; storage grows once per shape and is reused after.
class GpuIntegral {
public:
    // Says no (with the reason) to a roi the tables cannot hold exactly.
    static bool supports(Size roi, std::string* why);
    // roi: device view (a sub-view of the frame); enqueues two kernels on the stream.
    void build(ImageView roi, cudaStream_t stream);
    IntegralTables tables() const {
        return {sum_.get(), sum_sq_.get(), static_cast<std::size_t>(size_.width) + 1};
    }
    Size size() const { return size_; }

private:
    Size size_;
    DeviceBuffer<std::uint32_t> sum_;
    DeviceBuffer<std::uint64_t> sum_sq_;
};

// out(x, y) = NCC from sit[y * sit_pitch + x] (exact uint32 numerators), for out_size positions.
void launch_ncc_finish(const std::uint32_t* sit, std::size_t sit_pitch, const IntegralTables& tables,
                       Size templ, const DeviceTemplateStats& stats, MapView out, Size out_size,
                       cudaStream_t stream);
// The same from an unnormalised FFT correlation: sit = round(corr[y * corr_pitch + x] * scale).
void launch_ncc_finish_rounded(const double* corr, std::size_t corr_pitch, double scale,
                               const IntegralTables& tables, Size templ,
                               const DeviceTemplateStats& stats, MapView out, Size out_size,
                               cudaStream_t stream);

// What the JPDC and FFT kernels accept: the shared rules, one template (the batched form is a
// later issue), tables that hold the roi exactly, and output rows that fit the grid.
bool jpdc_supports(const NccProblem& p, std::string* why);
// Throws std::invalid_argument when run() is called against its contract (host memory, wrong
// sizes, no template, an unsupported problem) instead of computing something wrong.
void jpdc_check_run(const Correlator& self, ImageView frame, const NccProblem& p, MapView out,
                    const TemplateUpload& templ);

}  // namespace corrtrack
