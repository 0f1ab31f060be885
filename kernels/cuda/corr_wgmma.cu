// cuda_wgmma: cuda_mma_fused's block (tile, in-kernel window sums, NCC epilogue) with the
// numerator on Hopper's asynchronous warpgroup MMA (wgmma.mma_async m64n32k32 u8, sm_90a): A
// fragments from the staged frame tile in registers (4 output rows x 4 chunks of 32 outputs per
// warp, wgmma_block.cuh), the Toeplitz B in shared memory in chunks of template rows, brought by
// the bulk-copy engine (cp.async.bulk, the TMA's 1-D form) into two buffers on mbarriers while
// the other chunk's wgmmas run. Design, limits and measurements: kernels/cuda/NOTES_wgmma.md.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "cuda/common.cuh"
#include "cuda/cuda_kernels.h"
#include "cuda/integral.cuh"
#include "cuda/mma_block.cuh"
#include "cuda/mma_box_sums.cuh"
#include "cuda/mma_fused_ops.cuh"
#include "cuda/wgmma_block.cuh"

namespace corrtrack {
namespace {

using namespace mma;  // NOLINT: the shared block pieces

// W warps (W / 4 warpgroups) of 4 output rows each; block = 128 outputs x 4 W rows, so the sum
// table is cuda_mma_fused's (W = 8) or _w4's (W = 4). D wgmma groups in flight per warpgroup
// while the next A fragment loads; B in chunks of C template rows through NB buffers.
template <int W_, int D_, int C_ = 16, int NB_ = 2>
struct WgmmaCfg {
    static_assert(W_ % 4 == 0, "whole warpgroups");
    enum : int { W = W_, D = D_, C = C_, NB = NB_, kThreads = kWarp * W_, kRows = kWgRowsPerWarp * W_ };
};
using CfgWg = WgmmaCfg<8, 1>;          // cuda_wgmma: two warpgroups, one group in flight
using CfgWgD2 = WgmmaCfg<8, 2>;        // cuda_wgmma_d2: two groups in flight
using CfgWgW4 = WgmmaCfg<4, 1>;        // cuda_wgmma_w4: one warpgroup, 16-row blocks
using CfgWgC8 = WgmmaCfg<8, 1, 8, 4>;  // cuda_wgmma_c8: 8-row B chunks, 4 buffers (3 copies ahead)

// The table starts 16-aligned after the tile (its pitch is 4 mod 8).
inline std::size_t wg_tile_bytes(int tw, int th, int rows) {
    return static_cast<std::size_t>(div_up(wg_tile_pitch(wg_k_blocks(tw)) * (rows + th - 1), 16)) * 16;
}
template <class Cfg>
std::size_t wgmma_smem_bytes(int tw, int th) {
    return wg_b_buffer_bytes<Cfg::C, Cfg::NB>(th) + wg_tile_bytes(tw, th, Cfg::kRows) + box_table_bytes(Cfg::kRows, tw);
}

template <class Cfg>
static __global__ void __launch_bounds__(Cfg::kThreads)
    corr_wgmma_kernel(MmaArgs batch, BoxLayout box, const TemplatePrefix* __restrict__ prefix, FusedOps ops,
                      const std::uint8_t* __restrict__ bpack, int tile_bytes) {
#if defined(CORRTRACK_HAVE_WGMMA)
    extern __shared__ __align__(128) std::uint8_t wg_smem[];
    __shared__ __align__(8) std::uint64_t bars[Cfg::NB];
    const int tid = static_cast<int>(threadIdx.x), bz = static_cast<int>(blockIdx.z);
    const MmaArgs a = template_view(batch, bz);
    const int x0 = static_cast<int>(blockIdx.x) * kTileOutputs;
    const int y0 = static_cast<int>(blockIdx.y) * Cfg::kRows;
    const int crows = wg_chunk_rows<Cfg::C>(a.th);
    const int chunks = (a.th + crows - 1) / crows, steps = a.kblocks * chunks;
    const WgmmaBStream<Cfg::C, Cfg::NB> bs{bpack, bz, a.th, a.kblock_rows, chunks, wg_smem, bars};
    std::uint8_t* tile = wg_smem + wg_b_buffer_bytes<Cfg::C, Cfg::NB>(a.th);
    uint2* sums = reinterpret_cast<uint2*>(tile + tile_bytes);

    if (tid == 0) bs.init();
    __syncthreads();
    if (tid == 0)  // the first NB B chunks fly while the tile and its sums are built
        for (int q = 0; q < Cfg::NB && q < steps; ++q) bs.issue(q);
    TemplateSums tsums{0u, 0u};
    if (tid == 0) tsums = template_sums(ops, prefix, bz, a.th);
    stage_tile<Cfg::kThreads>(ops, a, tile, tid, x0, y0);
    __syncthreads();
    TemplateSums* slot = sums_slot(tile, a.tile_pitch);
    if (tid == 0) *slot = tsums;
    uint2 carry = make_uint2(0u, 0u);
#pragma unroll
    for (int phase = 0; phase < kBoxPhases; ++phase) {
        box_phase<Cfg::kThreads, Cfg::kRows>(ops, phase, box, tile, sums, tid, carry);
        __syncthreads();
    }

    // Every warp runs the loop (a wgmma needs its whole warpgroup); rows past the map compute
    // on the tile's zero rows and are not stored.
    const int warp = tid / kWarp, lane = tid % kWarp;
    int acc[16];
#pragma unroll
    for (int r = 0; r < 16; ++r) acc[r] = 0;
    for (int q = 0; q < steps; ++q) {
        bs.wait(q);
        wgmma_chunk<Cfg::D>(tile, a.tile_pitch, bs.buffer(q), q / chunks, (q % chunks) * crows, bs.rows(q), warp, lane,
                            acc);
        if (q + Cfg::NB < steps) {
            __syncthreads();  // every warpgroup is done with buffer q % NB
            if (tid == 0) bs.issue(q + Cfg::NB);
        }
    }
    const FusedMap map = fused_map(*slot, bz, box.tw, a.th, a.out_h);
    wgmma_epilogue(ops, box, sums, warp, lane, x0, y0, a.out_w, a.out_h, map, acc);
#endif
}

static __global__ void wgmma_pack_b_kernel(const std::uint8_t* __restrict__ templ, int tw, int rows, long long words,
                                           std::uint32_t* __restrict__ out) {
    const long long idx = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (idx >= words) return;
    std::uint32_t v = 0;
    for (int q = 0; q < 4; ++q) v |= static_cast<std::uint32_t>(wgmma_b_byte(templ, tw, rows, 4 * idx + q)) << (8 * q);
    out[idx] = v;
}

// 1 when this build's image for the current device has the wgmma bodies (sm_90a code), else 0:
// an sm_90 device may be running an sm_90 or PTX image without them.
static __global__ void wgmma_probe_kernel(int* out) {
#if defined(CORRTRACK_HAVE_WGMMA)
    *out = 1;
#else
    *out = 0;
#endif
}

long long wgmma_b_bytes(const NccProblem& p) {
    return static_cast<long long>(wg_k_blocks(p.templ.width)) * p.templ.height * p.templates * kWgBRowBytes;
}

template <class Cfg>
class CudaWgmma final : public Correlator {
public:
    explicit CudaWgmma(KernelInfo info) : info_(std::move(info)), device_(MmaDevice::current()) {
        // The kernel's static shared memory (its mbarriers, as ptxas lays them out) comes off the
        // opt-in limit that the dynamic part may raise to.
        cudaFuncAttributes fa{};
        if (cuda_wgmma_available() && cudaFuncGetAttributes(&fa, corr_wgmma_kernel<Cfg>) == cudaSuccess)
            static_smem_ = fa.sharedSizeBytes;
        cudaGetLastError();
    }
    const KernelInfo& info() const override { return info_; }
    bool supports(const NccProblem& p, std::string* why) const override {
        if (!cuda_supports_common(p, why)) return false;
        std::string err;
        if (device_.cc_major != 9 || device_.cc_minor != 0)
            err = "wgmma (sm_90a) runs on compute capability 9.0 only (this GPU is " +
                  std::to_string(device_.cc_major) + "." + std::to_string(device_.cc_minor) + ")";
        else if (!cuda_wgmma_available())
            err = "this build has no sm_90a code (CORRTRACK_CUDA_ARCHS without 90)";
        if (err.empty())
            err = mma_limits_error(device_, p, Cfg::kRows,
                                   wgmma_smem_bytes<Cfg>(p.templ.width, p.templ.height) + static_smem_,
                                   /*batches=*/true);
        if (err.empty() && wgmma_b_bytes(p) / 8 > kMaxBFragments)
            err = std::to_string(p.templates) + " templates of " + std::to_string(p.templ.width) + "x" +
                  std::to_string(p.templ.height) + " need " + std::to_string(wgmma_b_bytes(p)) +
                  " bytes of B, more than one stack may hold";
        if (why) *why = err;
        return err.empty();
    }
    void set_template(ImageView templ, Stream stream) override {
        upload_.set(templ, templ.height, stream);
        kblocks_ = wg_k_blocks(templ.width);
        std::uint8_t* b = bpack_.ensure(static_cast<std::size_t>(kblocks_) * templ.height * kWgBRowBytes);
        launch_wgmma_pack_b(upload_.device(), templ.width, templ.height, kblocks_, b, as_cuda(stream));
        prefix_.ensure(static_cast<std::size_t>(templ.height) + 1);
        launch_template_prefix(upload_.device(), templ.width, templ.height, prefix_.get(), nullptr, prefix_scan_,
                               as_cuda(stream));
    }
    bool capturable(const NccProblem& p, Stream) override { return ran_.same(p); }
    void run(ImageView frame, const NccProblem& p, MapView out, Stream stream) override {
        jpdc_check_run(*this, frame, p, out, upload_);
        const Size o = p.out_size();
        const int tw = p.templ.width, th = p.templ.height;
        MmaArgs a = mma_args(frame, p, kblocks_, nullptr, kWgRowsPerWarp, Cfg::W);
        a.tile_pitch = wg_tile_pitch(kblocks_);
        a.kblock_rows = upload_.height();  // th * p.templates (jpdc_check_run)
        const BoxLayout box = box_layout(tw, th, a.tile_pitch, Cfg::kThreads / Cfg::kRows);
        const FusedOps ops{{}, out.data, out.pitch};
        const std::size_t smem = wgmma_smem_bytes<Cfg>(tw, th);
        // Raised once to what the opt-in limit leaves beside the kernel's static mbarriers.
        if (smem + static_smem_ > kDefaultSmem && !smem_raised_) {
            CORRTRACK_CUDA(cudaFuncSetAttribute(corr_wgmma_kernel<Cfg>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                device_.smem_optin - static_cast<int>(static_smem_)));
            smem_raised_ = true;
        }
        const dim3 grid(div_up(o.width, kTileOutputs), div_up(o.height, Cfg::kRows), p.templates);
        corr_wgmma_kernel<Cfg><<<grid, Cfg::kThreads, smem, as_cuda(stream)>>>(
            a, box, prefix_.get(), ops, bpack_.get(), static_cast<int>(wg_tile_bytes(tw, th, Cfg::kRows)));
        CORRTRACK_CUDA_LAUNCHED();
        ran_.note(p);
    }

private:
    KernelInfo info_;
    MmaDevice device_;
    bool smem_raised_ = false;
    std::size_t static_smem_ = 0;
    int kblocks_ = 0;
    TemplateUpload upload_;
    DeviceBuffer<std::uint8_t> bpack_;        // B in wgmma's shared layout, [kblocks][rows][256 bytes]
    DeviceBuffer<TemplatePrefix> prefix_;     // the stack's (rows + 1)-entry prefix table
    DeviceBuffer<std::uint8_t> prefix_scan_;  // its scan's workspace (large stacks)
    RanProblem ran_;
};

}  // namespace

void mma::launch_wgmma_pack_b(const std::uint8_t* templ, int tw, int th, int kblocks, std::uint8_t* out,
                              cudaStream_t stream) {
    const long long words = static_cast<long long>(kblocks) * th * (kWgBRowBytes / 4);
    const int threads = 256;
    wgmma_pack_b_kernel<<<static_cast<unsigned>((words + threads - 1) / threads), threads, 0, stream>>>(
        templ, tw, th, words, reinterpret_cast<std::uint32_t*>(out));
    CORRTRACK_CUDA_LAUNCHED();
}

bool cuda_wgmma_available() {
    static const bool available = [] {
        if (!cuda_mma_available()) return false;
        const MmaDevice dev = MmaDevice::current();
        if (dev.cc_major != 9 || dev.cc_minor != 0) return false;
        int* d = nullptr;
        int h = 0;
        if (cudaMalloc(&d, sizeof(int)) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        wgmma_probe_kernel<<<1, 1>>>(d);
        const bool ok = cudaGetLastError() == cudaSuccess &&
                        cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess && h == 1;
        cudaFree(d);
        cudaGetLastError();
        return ok;
    }();
    return available;
}

std::unique_ptr<Correlator> make_cuda_wgmma() {
    return std::make_unique<CudaWgmma<CfgWg>>(registry_info("cuda_wgmma"));
}

std::unique_ptr<Correlator> make_cuda_wgmma_d2() {
    return std::make_unique<CudaWgmma<CfgWgD2>>(registry_info("cuda_wgmma_d2"));
}

std::unique_ptr<Correlator> make_cuda_wgmma_c8() {
    return std::make_unique<CudaWgmma<CfgWgC8>>(registry_info("cuda_wgmma_c8"));
}

std::unique_ptr<Correlator> make_cuda_wgmma_w4() {
    return std::make_unique<CudaWgmma<CfgWgW4>>(registry_info("cuda_wgmma_w4"));
}

}  // namespace corrtrack
