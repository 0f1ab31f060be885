// Factories of the CUDA kernels, for the registry. Declared here so that the registry
// needs no CUDA headers.
// Thread rules: see correlator.h.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "corrtrack/correlator.h"

namespace corrtrack {

bool cuda_kernels_available();  // == cuda_available(); the registry's availability check

// Direct NCC kernels after the CUDA Handbook, ch. 15 (kernels/cuda/NOTES_handbook.md).
std::unique_ptr<Correlator> make_cuda_tex();        // corr_tex.cu
std::unique_ptr<Correlator> make_cuda_shared();     // corr_shared.cu, 4-byte tile loads
std::unique_ptr<Correlator> make_cuda_shared_u4();  // corr_shared.cu, 16-byte tile loads
std::unique_ptr<Correlator> make_cuda_dp4a();       // corr_dp4a.cu, one column per thread
// corr_dp4a.cu, kDp4aIlpColumns output columns per thread: the registry's cuda_dp4a_ilp.
std::unique_ptr<Correlator> make_cuda_dp4a_ilp();
constexpr int kDp4aIlpColumns = 4;  // the default until the bench has measured 2, 4 and 8
// The same kernel with 2, 4 or 8 columns per thread, named cuda_dp4a_ilp_c<columns>, for the
// bench to compare; nullptr for any other count.
std::unique_ptr<Correlator> make_cuda_dp4a_ilp_columns(int columns);

// JPDC warp-shuffle family (corr_shuffle.cu) and the cuFFT baseline (corr_fft.cu).
std::unique_ptr<Correlator> make_cuda_shuffle();
std::unique_ptr<Correlator> make_cuda_shuffle_split();
std::unique_ptr<Correlator> make_cuda_shuffle_grouped();  // kShuffleGroupedRows outputs per thread
constexpr int kShuffleGroupedRows = 4;                    // the default until the bench has measured 2, 4 and 8
// The same kernel with 2, 4 or 8 vertical outputs per thread, named cuda_shuffle_grouped_r<rows>,
// for the bench to compare; nullptr for any other count.
std::unique_ptr<Correlator> make_cuda_shuffle_grouped_rows(int rows);
std::unique_ptr<Correlator> make_cuda_warp_per_overlap();
std::unique_ptr<Correlator> make_cuda_fft();

// int8 tensor cores (corr_mma.cu, sm_80+; kernels/cuda/NOTES_mma.md). The registry's cuda_mma
// is the fastest shape the H200 bench found (4 output rows per warp, 8 warps per block, A
// fragments as 4-byte shared loads: 90 us at 1080p/64x64 against 111 us for the first shape).
bool cuda_mma_available();  // a CUDA GPU of compute capability 8.0 or newer
std::unique_ptr<Correlator> make_cuda_mma();
// The first shape, 8 (cuda_mma_r8) or 4 (cuda_mma_r4) rows per warp, 4 warps, 8-byte A loads;
// nullptr for any other count.
std::unique_ptr<Correlator> make_cuda_mma_rows(int rows_per_warp);
// The bench's other tuning variants, named cuda_mma_<tag> (NOTES_mma.md, "Variants"): a32,
// a32e, a32e2, r4a32, a32_split; nullptr for any other tag.
std::unique_ptr<Correlator> make_cuda_mma_variant(std::string_view tag);
// The same numerator with the window sums SI, SII computed in the kernel from its own shared
// frame tile instead of integral images (corr_mma_fused.cu, NOTES_mma_fused.md): one launch.
std::unique_ptr<Correlator> make_cuda_mma_fused();
// cuda_mma_fused with 4 warps (16 output rows) per block instead of 8, for the bench.
std::unique_ptr<Correlator> make_cuda_mma_fused_w4();
std::unique_ptr<Correlator> make_cuda_mma_fused_h2();
// cuda_mma_fused's block with the numerator on Hopper's wgmma (corr_wgmma.cu, NOTES_wgmma.md):
// compute capability 9.0 and a build with sm_90a code (cuda_wgmma_available).
std::unique_ptr<Correlator> make_cuda_wgmma();
std::unique_ptr<Correlator> make_cuda_wgmma_d2();  // two wgmma groups in flight
std::unique_ptr<Correlator> make_cuda_wgmma_w4();  // one warpgroup per block
std::unique_ptr<Correlator> make_cuda_wgmma_c8();  // B in 8-row chunks, 4 buffers
bool cuda_wgmma_available();

// "auto" (auto_select.cu): the first time it sees a bucket of similar problem shapes it times
// every available CUDA kernel that supports it, on a worker thread while the rule-based kernel
// runs (CORRTRACK_AUTO_TIMING=sync: on the caller's stream, the only place a kernel
// synchronizes), and dispatches to the fastest from then on; small problems (under 2^31
// multiply-adds) go to the rule-based kernel untimed. Winners are kept on disk
// (auto_cache.h). CORRTRACK_AUTO_KERNEL=<name> in the environment pins the choice.
class AutoSelect : public Correlator {
public:
    // Pins dispatch to one CUDA kernel; "" returns to timing. False (with why) for a name that
    // is not an available CUDA kernel.
    virtual bool force_kernel(std::string_view name, std::string* why = nullptr) = 0;
    // The kernel picked for this problem's shape, "" before it has been timed (or while it is
    // timed in the background).
    virtual std::string choice(const NccProblem& p) const = 0;
    // The last timing round, fastest first: "cuda_x 0.123 ms, cuda_y 0.456 ms, ...",
    // "untimed: cuda_dp4a_ilp (...)" when the last new shape was small, or "provisional: ..."
    // when it is being timed in the background.
    virtual std::string last_timings() const = 0;
    // Shape buckets whose winner the process remembers now (at most 64; see auto_select.cu).
    virtual std::size_t remembered_shapes() const = 0;
};
std::unique_ptr<Correlator> make_auto();

}  // namespace corrtrack
