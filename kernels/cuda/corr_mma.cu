// cuda_mma: the numerator SIT on int8 tensor cores (mma.sync m16n8k32, u8 x u8 -> s32, sm_80+).
// Each template row j becomes a Toeplitz matrix B_j (built once per template), 16 chunks of 8
// outputs of one row are the rows of A (read from a shared-memory frame tile), and the
// integral-image denominator is fused into the epilogue (ncc_window). Fragment layouts, the K
// permutation, the bank analysis and the roofline: kernels/cuda/NOTES_mma.md.
//
// The block body is a template over its few warp- and block-wide operations (Ops): the kernel
// instantiates it with DeviceOps; an emulator can instantiate it with host operations that run
// the 128 threads of a block lane by lane, which is how the index arithmetic was checked before
// the first GPU run (NOTES_mma.md).
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "cuda/common.cuh"
#include "cuda/cuda_kernels.h"
#include "cuda/integral.cuh"
#include "cuda/mma_block.cuh"

namespace corrtrack {
namespace {

using namespace mma;  // NOLINT: the shared block pieces (mma_block.cuh)

// A kernel variant's compile-time shape (NOTES_mma.md, "Variants"):
//   R         output rows per warp (accumulators; each A fragment serves R mmas)
//   W         warps per block, stacked vertically (block = 128 outputs x W * R rows)
//   A32       A fragments as four 4-byte shared loads straight into the mma's register quad
//             (the 8-byte loads land lo.x, lo.y in one register pair while the mma wants
//             lo.x, hi.x, lo.y, hi.y: ptxas copied the quad with 4 moves before every mma)
//   Batch     epilogue loads the integral-table corners of Batch (2 or 4) of a lane's 4 outputs
//             of a row before their double-precision combines (8 * Batch loads in flight instead
//             of 8; 0: one output at a time through ncc_window)
//   Split     the kernel writes SIT to memory; the integral build runs concurrently on a
//             second stream and the shared finish kernel combines (no fused epilogue)
template <int R_, int W_, bool A32_, int Batch_, bool Split_>
struct MmaCfg {
    // Enumerators rather than static members: below sm_80 the kernel body compiles away and
    // unreferenced static members would warn.
    enum : int { R = R_, W = W_, kThreads = kWarp * W_, A32 = A32_, Batch = Batch_, Split = Split_ };
};
using CfgBase = MmaCfg<8, 4, false, 0, false>;  // cuda_mma
using CfgR4 = MmaCfg<4, 4, false, 0, false>;    // cuda_mma_r4

// One block: outputs x0 .. x0 + 127 of rows y0 .. y0 + W * R - 1; warp w owns rows
// y0 + wR .. y0 + wR + R - 1 (accumulator i = row i), accumulated by mma_accumulate; the
// epilogue combines each numerator with its window sums from the integral tables.
template <class Cfg, class Ops>
CORRTRACK_HD void mma_block(const Ops& ops, const MmaArgs& a, std::uint8_t* tile, int tid, int bx, int by) {
    constexpr int R = Cfg::R;
    const int x0 = bx * kTileOutputs;
    const int y0 = by * Cfg::W * R;
    stage_tile<Cfg::kThreads>(ops, a, tile, tid, x0, y0);
    ops.sync();

    const int warp = tid / kWarp, lane = tid % kWarp;
    const int wy = y0 + warp * R;
    if (wy >= a.out_h) return;  // no barrier follows

    int acc[R][4];
    mma_accumulate<Cfg>(ops, a, tile, warp, lane, acc);

#pragma unroll
    for (int i = 0; i < R; ++i) {
        const int y = wy + i;
        if (y >= a.out_h) continue;
        if constexpr (Cfg::Batch > 0) {
            int xs[4];
            std::uint32_t sit[4];
            unsigned mask = 0;
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                xs[c] = x0 + c_fragment_column(lane, c);
                sit[c] = static_cast<std::uint32_t>(acc[i][c]);
                if (xs[c] < a.out_w) mask |= 1u << c;
            }
            if (mask) ops.template store4<Cfg::Batch>(xs, y, sit, mask);
        } else {
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                const int x = x0 + c_fragment_column(lane, c);
                if (x < a.out_w) ops.store(x, y, static_cast<std::uint32_t>(acc[i][c]));
            }
        }
    }
}

// The operations of mma_block on the GPU plus what the fused NCC epilogue needs (below sm_80
// they compile away with the kernel body; supports() and cuda_mma_available() say no there).
struct DeviceOps : MmaDeviceOps {
    IntegralTables tables;
    DeviceTemplateStats stats;
    float* out;
    std::size_t out_pitch;  // floats
    int tw, th;

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    __device__ __forceinline__ void store(int x, int y, std::uint32_t sit) const {
        out[static_cast<std::size_t>(y) * out_pitch + x] = ncc_window(tables, x, y, tw, th, sit, stats);
    }
    // The 4 outputs (xs[c], y), c in mask, in groups of B: every table corner of a group loaded
    // first, then its combines (the same sums and formula as ncc_window).
    template <int B>
    __device__ __forceinline__ void store4(const int (&xs)[4], int y, const std::uint32_t (&sit)[4],
                                           unsigned mask) const {
        const std::size_t top = static_cast<std::size_t>(y) * tables.pitch;
        const std::size_t bottom = static_cast<std::size_t>(y + th) * tables.pitch;
        float* row = out + static_cast<std::size_t>(y) * out_pitch;
#pragma unroll
        for (int c0 = 0; c0 < 4; c0 += B) {
            std::uint32_t s[B][4];
            std::uint64_t q[B][4];
#pragma unroll
            for (int k = 0; k < B; ++k) {
                const int c = c0 + k;
                const int x = (mask >> c) & 1u ? xs[c] : xs[0];  // xs[0] is valid whenever any is
                s[k][0] = __ldg(tables.sum + bottom + x + tw);
                s[k][1] = __ldg(tables.sum + top + x + tw);
                s[k][2] = __ldg(tables.sum + bottom + x);
                s[k][3] = __ldg(tables.sum + top + x);
                q[k][0] = __ldg(tables.sum_sq + bottom + x + tw);
                q[k][1] = __ldg(tables.sum_sq + top + x + tw);
                q[k][2] = __ldg(tables.sum_sq + bottom + x);
                q[k][3] = __ldg(tables.sum_sq + top + x);
            }
#pragma unroll
            for (int k = 0; k < B; ++k) {
                const int c = c0 + k;
                if (!((mask >> c) & 1u)) continue;
                const std::uint32_t si = s[k][0] - s[k][1] - s[k][2] + s[k][3];
                const std::uint64_t sii = q[k][0] - q[k][1] - q[k][2] + q[k][3];
                row[xs[c]] = ncc_from_sums(stats.n, static_cast<std::int64_t>(si), static_cast<std::int64_t>(sii),
                                           static_cast<std::int64_t>(sit[c]), stats.sum, stats.sum_sq);
            }
        }
    }
#endif
};

// Split: the numerator only, to a uint32 map the finish kernel reads.
struct DeviceOpsSit : DeviceOps {
    std::uint32_t* sit_out;
    std::size_t sit_pitch;
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    __device__ __forceinline__ void store(int x, int y, std::uint32_t sit) const {
        sit_out[static_cast<std::size_t>(y) * sit_pitch + x] = sit;
    }
#endif
};

// rows: the template's, or a whole stack's (a batch packs as one tall template).
static __global__ void pack_b_kernel(const std::uint8_t* __restrict__ templ, int tw, int rows, int n,
                                     uint2* __restrict__ bfrag) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) bfrag[idx] = b_fragment_at(templ, tw, rows, idx);
}

template <class Cfg, class DOps>
static __global__ void __launch_bounds__(Cfg::kThreads) corr_mma_kernel(MmaArgs a, DOps ops) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    extern __shared__ __align__(16) std::uint8_t mma_tile[];
    mma_block<Cfg>(ops, a, mma_tile, static_cast<int>(threadIdx.x), static_cast<int>(blockIdx.x),
                   static_cast<int>(blockIdx.y));
#endif
}

// The shape a CudaMma instance runs, at run time (the kernel it launches is picked from it).
struct MmaShape {
    int rows = 8, warps = 4;
};

class CudaMmaBase : public Correlator {
public:
    CudaMmaBase(KernelInfo info, MmaShape shape)
        : info_(std::move(info)), shape_(shape), device_(MmaDevice::current()) {}
    const KernelInfo& info() const override { return info_; }
    bool supports(const NccProblem& p, std::string* why) const override {
        if (!cuda_supports_common(p, why)) return false;
        const std::size_t smem = tile_bytes(shape_.rows, p.templ.width, p.templ.height, shape_.warps);
        std::string err = mma_limits_error(device_, p, shape_.warps * shape_.rows, smem);
        if (err.empty()) GpuIntegral::supports({p.roi.width, p.roi.height}, &err);
        if (why) *why = err;
        return err.empty();
    }
    void set_template(ImageView templ, Stream stream) override {
        kblocks_ = set_mma_template(templ, stream, upload_, bfrag_);
    }

protected:
    MmaArgs args(ImageView frame, const NccProblem& p) const {
        return mma_args(frame, p, kblocks_, bfrag_.get(), shape_.rows, shape_.warps);
    }
    DeviceOps ops(const NccProblem& p, MapView out) const {
        return DeviceOps{{}, integral_.tables(), upload_.stats(), out.data, out.pitch, p.templ.width, p.templ.height};
    }
    // Raised to the device's limit once per kernel: every instance asks for the same value, so
    // none can lower it under another.
    template <class Cfg, class DOps>
    void launch(const MmaArgs& a, const DOps& o, std::size_t smem, cudaStream_t s) {
        if (smem > kDefaultSmem && !smem_raised_) {
            CORRTRACK_CUDA(cudaFuncSetAttribute(corr_mma_kernel<Cfg, DOps>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                device_.smem_optin));
            smem_raised_ = true;
        }
        const dim3 grid(div_up(a.out_w, kTileOutputs), div_up(a.out_h, Cfg::W * Cfg::R));
        corr_mma_kernel<Cfg, DOps><<<grid, Cfg::kThreads, smem, s>>>(a, o);
        CORRTRACK_CUDA_LAUNCHED();
    }

    KernelInfo info_;
    MmaShape shape_;
    MmaDevice device_;
    bool smem_raised_ = false;
    int kblocks_ = 0;
    TemplateUpload upload_;
    DeviceBuffer<uint2> bfrag_;
    GpuIntegral integral_;
};

// Integral build, then one kernel: the mma numerator with the NCC combine fused in its epilogue.
template <class Cfg>
class CudaMma final : public CudaMmaBase {
public:
    explicit CudaMma(KernelInfo info) : CudaMmaBase(std::move(info), MmaShape{Cfg::R, Cfg::W}) {}
    bool capturable(const NccProblem& p, Stream) override { return ran_.same(p); }
    void run(ImageView frame, const NccProblem& p, MapView out, Stream stream) override {
        jpdc_check_run(*this, frame, p, out, upload_);
        const cudaStream_t s = as_cuda(stream);
        integral_.build(frame.sub(p.roi), s);
        launch<Cfg>(args(frame, p), ops(p, out), tile_bytes(Cfg::R, p.templ.width, p.templ.height, Cfg::W), s);
        ran_.note(p);
    }

private:
    RanProblem ran_;
};

// The numerator to a uint32 map on the caller's stream while the integral build runs on a
// second stream (forked and joined with events, so run() still never synchronizes), then the
// shared finish kernel.
template <class Cfg>
class CudaMmaSplit final : public CudaMmaBase {
public:
    explicit CudaMmaSplit(KernelInfo info) : CudaMmaBase(std::move(info), MmaShape{Cfg::R, Cfg::W}) {}
    ~CudaMmaSplit() override {
        if (fork_) cudaEventDestroy(fork_);
        if (join_) cudaEventDestroy(join_);
        if (side_) cudaStreamDestroy(side_);
    }
    void run(ImageView frame, const NccProblem& p, MapView out, Stream stream) override {
        jpdc_check_run(*this, frame, p, out, upload_);
        const cudaStream_t s = as_cuda(stream);
        if (!side_) {
            CORRTRACK_CUDA(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
            CORRTRACK_CUDA(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
            CORRTRACK_CUDA(cudaEventCreateWithFlags(&join_, cudaEventDisableTiming));
        }
        const Size o = p.out_size();
        std::uint32_t* sit = sit_.ensure(static_cast<std::size_t>(o.width) * o.height);
        // The side stream starts after everything before this run on s (the previous finish
        // still reads the tables this build overwrites).
        CORRTRACK_CUDA(cudaEventRecord(fork_, s));
        CORRTRACK_CUDA(cudaStreamWaitEvent(side_, fork_, 0));
        integral_.build(frame.sub(p.roi), side_);
        CORRTRACK_CUDA(cudaEventRecord(join_, side_));
        DeviceOpsSit d{ops(p, out), sit, static_cast<std::size_t>(o.width)};
        launch<Cfg>(args(frame, p), d, tile_bytes(Cfg::R, p.templ.width, p.templ.height, Cfg::W), s);
        CORRTRACK_CUDA(cudaStreamWaitEvent(s, join_, 0));
        launch_ncc_finish(sit, static_cast<std::size_t>(o.width), integral_.tables(), p.templ, upload_.stats(), out, o,
                          s);
    }

private:
    cudaStream_t side_ = nullptr;
    cudaEvent_t fork_ = nullptr, join_ = nullptr;
    DeviceBuffer<std::uint32_t> sit_;
};

// The bench's variants (NOTES_mma.md, "Variants"): tag -> shape.
using CfgA32 = MmaCfg<8, 4, true, 0, false>;
using CfgA32e = MmaCfg<8, 4, true, 4, false>;
using CfgA32e2 = MmaCfg<8, 4, true, 2, false>;
using CfgR4A32 = MmaCfg<4, 4, true, 0, false>;
using CfgR4W8A32 = MmaCfg<4, 8, true, 0, false>;
using CfgA32Split = MmaCfg<8, 4, true, 0, true>;

template <class Cfg>
std::unique_ptr<Correlator> make_mma(const std::string& name) {
    KernelInfo info = registry_info(name);
    if constexpr (Cfg::Split)
        return std::make_unique<CudaMmaSplit<Cfg>>(std::move(info));
    else
        return std::make_unique<CudaMma<Cfg>>(std::move(info));
}

}  // namespace

namespace mma {

MmaDevice MmaDevice::current() {
    MmaDevice d;
    int dev = 0;
    CORRTRACK_CUDA(cudaGetDevice(&dev));
    CORRTRACK_CUDA(cudaDeviceGetAttribute(&d.cc_major, cudaDevAttrComputeCapabilityMajor, dev));
    CORRTRACK_CUDA(cudaDeviceGetAttribute(&d.cc_minor, cudaDevAttrComputeCapabilityMinor, dev));
    CORRTRACK_CUDA(cudaDeviceGetAttribute(&d.smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    return d;
}

std::string mma_limits_error(const MmaDevice& dev, const NccProblem& p, int block_rows, std::size_t smem_bytes,
                             bool batches) {
    const long long area = p.templ.area();
    const Size o = p.out_size();
    if (dev.cc_major < 8)
        return "int8 mma.sync needs compute capability 8.0 or newer (this GPU is " + std::to_string(dev.cc_major) +
               "." + std::to_string(dev.cc_minor) + ")";
    if (p.templates != 1 && !batches)
        return std::to_string(p.templates) + " templates in one pass: this kernel runs one at a time";
    if (p.templates > kMaxBatchTemplates)
        return std::to_string(p.templates) + " templates in one pass: at most " + std::to_string(kMaxBatchTemplates) +
               " (one grid layer each)";
    if (area > kMaxTemplateArea)
        return "template " + std::to_string(p.templ.width) + "x" + std::to_string(p.templ.height) + " has " +
               std::to_string(area) + " pixels; the s32 tensor-core accumulator holds at most " +
               std::to_string(kMaxTemplateArea) + " (pixels * 255^2 < 2^31)";
    if (div_up(o.height, block_rows) > 65535)
        return "output of " + std::to_string(o.height) + " rows exceeds the grid's 65535 blocks of " +
               std::to_string(block_rows) + " rows";
    if (smem_bytes > static_cast<std::size_t>(dev.smem_optin))
        return "frame tile of " + std::to_string(smem_bytes) + " bytes exceeds the " + std::to_string(dev.smem_optin) +
               " bytes of shared memory a block may use";
    return "";
}

void launch_mma_pack_b(const std::uint8_t* templ, int tw, int th, int kblocks, uint2* bfrag, cudaStream_t stream) {
    // int indices (64-bit division more than doubled the kernel); no run could use more.
    const long long n = static_cast<long long>(kblocks) * th * kWarp;
    if (n > kMaxBFragments)
        throw std::invalid_argument("template stack of " + std::to_string(tw) + "x" + std::to_string(th) + " needs " +
                                    std::to_string(n) + " B fragments, more than the " +
                                    std::to_string(kMaxBFragments) + " the mma kernels index");
    pack_b_kernel<<<div_up(static_cast<int>(n), 256), 256, 0, stream>>>(templ, tw, th, static_cast<int>(n), bfrag);
    CORRTRACK_CUDA_LAUNCHED();
}

}  // namespace mma

bool cuda_mma_available() {
    static const bool available = [] {
        if (!cuda_available()) return false;
        int dev = 0, major = 0;
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        return major >= 8;
    }();
    return available;
}

std::unique_ptr<Correlator> make_cuda_mma() { return make_mma<CfgR4W8A32>("cuda_mma"); }

std::unique_ptr<Correlator> make_cuda_mma_rows(int rows_per_warp) {
    if (rows_per_warp != 4 && rows_per_warp != 8) return nullptr;
    const std::string name = "cuda_mma_r" + std::to_string(rows_per_warp);
    if (rows_per_warp == 4) return make_mma<CfgR4>(name);
    return make_mma<CfgBase>(name);
}

std::unique_ptr<Correlator> make_cuda_mma_variant(std::string_view tag) {
    const std::string name = "cuda_mma_" + std::string(tag);
    if (tag == "a32") return make_mma<CfgA32>(name);
    if (tag == "a32e") return make_mma<CfgA32e>(name);
    if (tag == "a32e2") return make_mma<CfgA32e2>(name);
    if (tag == "r4a32") return make_mma<CfgR4A32>(name);
    if (tag == "a32_split") return make_mma<CfgA32Split>(name);
    return nullptr;
}

}  // namespace corrtrack