// cuda_mma_fused: cuda_mma's int8 tensor-core numerator (mma.sync m16n8k32 Toeplitz GEMM, the
// same block pieces: mma_block.cuh) with the window sums SI, SII computed inside the same
// kernel from the frame tile the block stages anyway (mma_box_sums.cuh), so a run is one
// kernel launch and no integral-image pass over the roi; a batch of templates (stacked, each
// with its roi) is the same launch with one grid layer per template. Design, bounds and what to
// measure: kernels/cuda/NOTES_mma_fused.md.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "cuda/common.cuh"
#include "cuda/cuda_kernels.h"
#include "cuda/integral.cuh"
#include "cuda/mma_block.cuh"
#include "cuda/mma_box_sums.cuh"
#include "cuda/mma_fused_ops.cuh"

namespace corrtrack {
namespace {

using namespace mma;  // NOLINT: the shared block pieces (mma_block.cuh, mma_box_sums.cuh)

// Compile-time shape: R output rows per warp, W warps per block (block = 128 outputs x W * R
// rows), A fragments as 4-byte loads (cuda_mma's measured best: R = 4, W = 8). H: the sum table
// holds the block's rows in H parts, one after the other (1, or 2: half the table's shared
// memory, so a 64x64 block fits four to an SM instead of three; the second half's sums are
// built after the first half's epilogue, its warps keeping their accumulators meanwhile).
template <int R_, int W_, int H_ = 1>
struct FusedCfg {
    // Enumerators rather than static members: below sm_80 the kernel body compiles away and
    // unreferenced static members would warn.
    enum : int { R = R_, W = W_, H = H_, kThreads = kWarp * W_, kRows = R_ * W_, kTableRows = R_ * W_ / H_, A32 = 1 };
};
using CfgFused = FusedCfg<4, 8>;       // cuda_mma_fused
using CfgFusedW4 = FusedCfg<4, 4>;     // cuda_mma_fused_w4: 16-row blocks, less shared memory each
using CfgFusedH2 = FusedCfg<4, 8, 2>;  // cuda_mma_fused_h2: the sum table in two halves

// Bytes of the block's tile plus its sum table (the table starts right after the tile, whose
// size is a multiple of 16).
template <class Cfg>
std::size_t fused_smem_bytes(int tw, int th) {
    return tile_bytes(Cfg::R, tw, th, Cfg::W) + box_table_bytes(Cfg::kTableRows, tw);
}

// One block of template bz's map: stage the tile, the box-sum phases (each followed by a
// barrier), then warp w's R rows of numerators and their NCC. Rows past the map still take part
// in the barriers. batch: the run's arguments (template 0's); prefix: the stack's statistics.
// With the table in H parts, part h's phases run after part h - 1's epilogue (one more barrier
// between), and a warp's epilogue waits for the part that holds its rows.
template <class Cfg, class Ops>
CORRTRACK_HD void fused_block(const Ops& ops, const MmaArgs& batch, const BoxLayout& box, const TemplatePrefix* prefix,
                              std::uint8_t* smem, int tid, int bx, int by, int bz) {
    const MmaArgs a = template_view(batch, bz);
    const int x0 = bx * kTileOutputs;
    const int y0 = by * Cfg::kRows;
    std::uint8_t* tile = smem;
    uint2* sums = reinterpret_cast<uint2*>(smem + a.tile_pitch * a.tile_rows);
    // Template bz's sums (two prefix entries) are loaded by thread 0 while the tile is staged and
    // kept in the tile's unread tail (sums_slot) until the epilogue: computed after the mma loop
    // instead, its index arithmetic stayed live through the loop (sm_90: 70 registers instead
    // of 62, one block less per SM). The slot is written after the barrier: staging writes it too.
    TemplateSums tsums{0u, 0u};
    if (tid == 0) tsums = template_sums(ops, prefix, bz, a.th);
    stage_tile<Cfg::kThreads>(ops, a, tile, tid, x0, y0);
    ops.sync();
    TemplateSums* slot = sums_slot(tile, a.tile_pitch);
    if (tid == 0) *slot = tsums;
    uint2 carry = make_uint2(0u, 0u);
#pragma unroll
    for (int phase = 0; phase < kBoxPhases; ++phase) {
        box_phase<Cfg::kThreads, Cfg::kTableRows>(ops, phase, box, tile, sums, tid, carry);
        ops.sync();
    }

    const int warp = tid / kWarp, lane = tid % kWarp;
    if constexpr (Cfg::H == 1) {
        if (y0 + warp * Cfg::R >= a.out_h) return;  // no barrier follows
        int acc[Cfg::R][4];
        mma_accumulate<Cfg, true>(ops, a, tile, warp, lane, acc);
        const FusedMap map = fused_map(*slot, bz, box.tw, a.th, a.out_h);
        fused_epilogue<Cfg>(ops, box, sums, warp, lane, x0, y0, a.out_w, a.out_h, map, acc);
    } else {
        const bool in_map = y0 + warp * Cfg::R < a.out_h;
        const int part = warp * Cfg::R / Cfg::kTableRows;
        int acc[Cfg::R][4];
        if (in_map) mma_accumulate<Cfg, true>(ops, a, tile, warp, lane, acc);
#pragma unroll
        for (int h = 0; h < Cfg::H; ++h) {
            if (h > 0) {
                ops.sync();  // part h - 1's epilogue has read the table
#pragma unroll
                for (int phase = 0; phase < kBoxPhases; ++phase) {
                    box_phase<Cfg::kThreads, Cfg::kTableRows>(
                        ops, phase, box, tile + h * Cfg::kTableRows * a.tile_pitch, sums, tid, carry);
                    ops.sync();
                }
            }
            if (in_map && part == h) {
                const FusedMap map = fused_map(*slot, bz, box.tw, a.th, a.out_h);
                fused_epilogue<Cfg>(ops, box, sums, warp, lane, x0, y0, a.out_w, a.out_h, map, acc,
                                    h * Cfg::kTableRows);
            }
        }
    }
}

// A kernel's body: this thread's part of block (x, y, z) of the grid. gridDim.z = the templates
// of a batch (1 for one template).
template <class Cfg>
static __device__ __forceinline__ void fused_kernel_body(const MmaArgs& a, const BoxLayout& box,
                                                         const TemplatePrefix* prefix, const FusedOps& ops) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    extern __shared__ __align__(16) std::uint8_t fused_smem[];
    fused_block<Cfg>(ops, a, box, prefix, fused_smem, static_cast<int>(threadIdx.x), static_cast<int>(blockIdx.x),
                     static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.z));
#endif
}

template <class Cfg>
static __global__ void __launch_bounds__(Cfg::kThreads)
    corr_mma_fused_kernel(MmaArgs a, BoxLayout box, const TemplatePrefix* __restrict__ prefix, FusedOps ops) {
    fused_kernel_body<Cfg>(a, box, prefix, ops);
}

// The same with the registers capped for four blocks of 256 threads an SM (64 a thread): what
// the halved table's shared memory allows. A separate kernel: a second __launch_bounds__
// argument, even 1, costs the one-part shapes registers (sm_90: 58 -> 71 for _w4).
template <class Cfg>
static __global__ void __launch_bounds__(Cfg::kThreads, 4)
    corr_mma_fused_four_kernel(MmaArgs a, BoxLayout box, const TemplatePrefix* __restrict__ prefix, FusedOps ops) {
    fused_kernel_body<Cfg>(a, box, prefix, ops);
}

template <class Cfg>
constexpr auto fused_kernel() {
    if constexpr (Cfg::H == 1)
        return corr_mma_fused_kernel<Cfg>;
    else
        return corr_mma_fused_four_kernel<Cfg>;
}

// B fragments of the whole stack as one template of th * templates rows.
long long bfrag_entries(const NccProblem& p) {
    return static_cast<long long>(k_blocks(p.templ.width)) * p.templ.height * p.templates * kWarp;
}

// One kernel per run, for one template or a batch (grid z): no integral tables, so no roi-size
// limit of their own. set_template packs the stack's B fragments and its prefix table (one
// kernel each); run() only launches.
template <class Cfg>
class CudaMmaFused final : public Correlator {
public:
    explicit CudaMmaFused(KernelInfo info) : info_(std::move(info)), device_(MmaDevice::current()) {}
    const KernelInfo& info() const override { return info_; }
    bool supports(const NccProblem& p, std::string* why) const override {
        if (!cuda_supports_common(p, why)) return false;
        std::string err = mma_limits_error(device_, p, Cfg::kRows, fused_smem_bytes<Cfg>(p.templ.width, p.templ.height),
                                           /*batches=*/true);
        if (err.empty() && bfrag_entries(p) > kMaxBFragments)
            err = std::to_string(p.templates) + " templates of " + std::to_string(p.templ.width) + "x" +
                  std::to_string(p.templ.height) + " need " + std::to_string(bfrag_entries(p)) +
                  " B fragments, more than the " + std::to_string(kMaxBFragments) + " one stack may hold";
        if (why) *why = err;
        return err.empty();
    }
    // A batch's templates come stacked (set_template cannot know th): the fragments and the
    // prefix table cover the whole stack, and run() picks template k's rows of both.
    void set_template(ImageView templ, Stream stream) override {
        kblocks_ = set_mma_template(templ, stream, upload_, bfrag_);
        prefix_.grow(static_cast<std::size_t>(templ.height) + 1);  // stacks grow by a template
        launch_template_prefix(upload_.device(), templ.width, templ.height, prefix_.get(), nullptr, prefix_scan_,
                               as_cuda(stream));
    }
    bool capturable(const NccProblem& p, Stream) override { return ran_.same(p); }
    void run(ImageView frame, const NccProblem& p, MapView out, Stream stream) override {
        jpdc_check_run(*this, frame, p, out, upload_);
        const Size o = p.out_size();
        const int tw = p.templ.width, th = p.templ.height;
        MmaArgs a = mma_args(frame, p, kblocks_, bfrag_.get(), Cfg::R, Cfg::W);
        a.kblock_rows = upload_.height();  // th * p.templates (jpdc_check_run)
        const BoxLayout box = box_layout(tw, th, a.tile_pitch, Cfg::kThreads / Cfg::kTableRows);
        const FusedOps ops{{}, out.data, out.pitch};
        const std::size_t smem = fused_smem_bytes<Cfg>(tw, th);
        // Raised to the device's limit once: every instance asks for the same value, so none
        // can lower it under another.
        if (smem > kDefaultSmem && !smem_raised_) {
            CORRTRACK_CUDA(cudaFuncSetAttribute(fused_kernel<Cfg>(), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                device_.smem_optin));
            smem_raised_ = true;
        }
        const dim3 grid(div_up(o.width, kTileOutputs), div_up(o.height, Cfg::kRows), p.templates);
        fused_kernel<Cfg>()<<<grid, Cfg::kThreads, smem, as_cuda(stream)>>>(a, box, prefix_.get(), ops);
        CORRTRACK_CUDA_LAUNCHED();
        ran_.note(p);
    }

private:
    KernelInfo info_;
    MmaDevice device_;
    bool smem_raised_ = false;
    int kblocks_ = 0;
    TemplateUpload upload_;
    DeviceBuffer<uint2> bfrag_;
    DeviceBuffer<TemplatePrefix> prefix_;     // the stack's (rows + 1)-entry prefix table
    DeviceBuffer<std::uint8_t> prefix_scan_;  // its scan's workspace (large stacks)
    RanProblem ran_;
};

}  // namespace

std::unique_ptr<Correlator> make_cuda_mma_fused() {
    return std::make_unique<CudaMmaFused<CfgFused>>(registry_info("cuda_mma_fused"));
}

std::unique_ptr<Correlator> make_cuda_mma_fused_w4() {
    return std::make_unique<CudaMmaFused<CfgFusedW4>>(registry_info("cuda_mma_fused_w4"));
}

std::unique_ptr<Correlator> make_cuda_mma_fused_h2() {
    return std::make_unique<CudaMmaFused<CfgFusedH2>>(registry_info("cuda_mma_fused_h2"));
}

}  // namespace corrtrack
