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
#include <string>
#include <utility>

#include "cuda/common.cuh"
#include "cuda/cuda_kernels.h"
#include "cuda/integral.cuh"

namespace corrtrack {
namespace {

constexpr int kWarp = 32;
constexpr int kChunk = 8;                  // outputs per row of A: the mma's n
constexpr int kTileOutputs = 16 * kChunk;  // outputs per block row: the 16 rows of A
constexpr int kKBlock = 32;                // the mma's k
// The s32 accumulator must hold th * tw * 255^2: below 2^31 up to 33025 template pixels.
constexpr long long kMaxTemplateArea = 33025;
constexpr std::size_t kDefaultSmem = 48 * 1024;

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

int div_up(int a, int b) { return (a + b - 1) / b; }
// Template row j is the Toeplitz block B_j[k][n] = T(j, k - n), k < tw + 7, padded to K-blocks.
int k_blocks(int tw) { return div_up(tw + kChunk - 1, kKBlock); }
// A tile row holds the columns an m16 tile reads: chunk 15 starts at 120 and reads 32 * kblocks.
int tile_pitch(int kblocks) { return div_up(kTileOutputs - kChunk + kKBlock * kblocks, 16) * 16; }
// rows_per_warp output rows per warp, `warps` warps: the tile rows their windows cover.
int tile_rows(int rows_per_warp, int th, int warps = 4) { return warps * rows_per_warp + th - 1; }
std::size_t tile_bytes(int rows_per_warp, int tw, int th, int warps = 4) {
    return static_cast<std::size_t>(tile_pitch(k_blocks(tw))) * tile_rows(rows_per_warp, th, warps);
}

// What the block body reads. Coordinates are roi-relative except roi_x/roi_y.
struct MmaArgs {
    const std::uint8_t* frame;  // row 0 of the frame (device)
    std::size_t frame_pitch;    // bytes
    int roi_x, roi_y, roi_w, roi_h;
    int th;
    int kblocks;
    int tile_pitch, tile_rows;  // bytes per staged row, staged rows
    const uint2* bfrag;         // B fragments, [kblocks][th][32 lanes]
    int out_w, out_h;
};

// Lane `lane`'s B fragment of K-block b for one template row (tw bytes). With g = lane / 4 and
// t = lane % 4, PTX gives the lane B[K][g] for K = 4t..4t+3 (.x) and 16+4t..16+4t+3 (.y). K is
// permuted inside the block so that the lane's 8 bytes are the contiguous Toeplitz rows
// k = 32b + 8t + q, q = 0..7 (A uses the same permutation, see load_a): byte q is
// B_j[k][g] = T(j, k - g) when 0 <= k - g < tw, else 0.
CORRTRACK_HD uint2 b_fragment(const std::uint8_t* trow, int tw, int b, int lane) {
    const int g = lane >> 2, t = lane & 3;
    std::uint32_t w[2] = {0u, 0u};
    for (int q = 0; q < 8; ++q) {
        const int i = kKBlock * b + 8 * t + q - g;
        if (i >= 0 && i < tw) w[q >> 2] |= static_cast<std::uint32_t>(trow[i]) << (8 * (q & 3));
    }
    return make_uint2(w[0], w[1]);
}

// A fragment of one tile row and K-block: p points at byte 32b + 8(g + t) of the row. Row g of A
// is the chunk of outputs x0 + 8g .. x0 + 8g + 7 and holds A[g][K] = I(x0 + 8g + k(K)); with the
// permutation above the lane's K = 4t.. (a0-a3) and 16+4t.. (a8-a11) are the 8 bytes at
// 8g + 32b + 8t, and row g + 8 (a4-a7, a12-a15) the 8 bytes 64 further: two aligned 8-byte loads.
// A32: the same bytes as four 4-byte loads, each straight into its register of the quad.
template <bool A32, class Ops>
CORRTRACK_HD void load_a(const Ops& ops, const std::uint8_t* p, std::uint32_t (&a)[4]) {
    if constexpr (A32) {
        a[0] = ops.smem_u32(p);
        a[1] = ops.smem_u32(p + 8 * kChunk);
        a[2] = ops.smem_u32(p + 4);
        a[3] = ops.smem_u32(p + 8 * kChunk + 4);
    } else {
        const uint2 lo = ops.smem_pair(p);
        const uint2 hi = ops.smem_pair(p + 8 * kChunk);
        a[0] = lo.x;
        a[1] = hi.x;
        a[2] = lo.y;
        a[3] = hi.y;
    }
}

// Bytes col..col+3 of a frame row, those at or beyond `right` as 0, reading only bytes
// [0, right) of the row: aligned 4-byte loads (two and a funnel shift when col is unaligned),
// byte loads where an aligned word would cross either end.
template <class Ops>
CORRTRACK_HD std::uint32_t frame_word(const Ops& ops, const std::uint8_t* row, int col, int right) {
    const int sh = static_cast<int>(reinterpret_cast<std::uintptr_t>(row + col) & 3u);
    const int lo = col - sh;
    if (sh == 0 && col + 4 <= right) return ops.frame_word(row + col);
    if (sh != 0 && lo >= 0 && lo + 8 <= right) {
        const std::uint32_t w0 = ops.frame_word(row + lo);
        const std::uint32_t w1 = ops.frame_word(row + lo + 4);
        return (w0 >> (8 * sh)) | (w1 << (32 - 8 * sh));
    }
    std::uint32_t v = 0;
    for (int q = 0; q < 4; ++q)
        if (col + q < right) v |= static_cast<std::uint32_t>(ops.frame_byte(row + col + q)) << (8 * q);
    return v;
}

// Tile byte (r, c) = frame(roi_x + x0 + c, roi_y + y0 + r) inside the roi, 0 outside; every byte
// of the tile is written, so every A load reads staged data. Columns past the roi only ever
// meet zero Toeplitz entries of outputs that are written.
template <int kThreads, class Ops>
CORRTRACK_HD void stage_tile(const Ops& ops, const MmaArgs& a, std::uint8_t* tile, int tid, int x0, int y0) {
    const int words = a.tile_pitch / 4;
    const int rows = a.roi_h - y0 < a.tile_rows ? a.roi_h - y0 : a.tile_rows;
    const int right = a.roi_x + a.roi_w;
    for (int idx = tid; idx < a.tile_rows * words; idx += kThreads) {
        const int r = idx / words;
        const int c = 4 * (idx - r * words);
        const int col = a.roi_x + x0 + c;
        std::uint32_t v = 0;
        if (r < rows && col < right)
            v = frame_word(ops, a.frame + static_cast<std::size_t>(a.roi_y + y0 + r) * a.frame_pitch, col, right);
        ops.smem_word(tile + r * a.tile_pitch + c, v);
    }
}

// Template row j = j0 + u (j0 % R == 0) of one K-block: tile row wR + j + R - 1 enters the ring
// in the slot that held row wR + j - 1, then acc[i] += A(row wR + j + i) * B_j for every i.
// Slot indices are compile-time constants once u is (the callers unroll over u).
template <int R, bool A32, class Ops>
__host__ __device__ __forceinline__ void mma_step(const Ops& ops, int (&acc)[R][4], std::uint32_t (&frag)[R][4], int u,
                                                  const std::uint8_t* abase, int pitch, const uint2* bbase, int j) {
    load_a<A32>(ops, abase + (j + R - 1) * pitch, frag[(u + R - 1) % R]);
    const uint2 bf = ops.b_fragment(bbase + j * kWarp);
#pragma unroll
    for (int i = 0; i < R; ++i) ops.mma(acc[i], frag[(u + i) % R], bf);
}

// One block: outputs x0 .. x0 + 127 of rows y0 .. y0 + kWarps * R - 1; warp w owns rows
// y0 + wR .. y0 + wR + R - 1 (accumulator i = row i). For each K-block b and template row j the
// warp issues R mmas: acc[i] += A(tile row wR + i + j, b) * B_j(b). A tile row enters when j
// reaches it and serves R consecutive j (a ring of R fragments, indices fixed at compile time by
// unrolling j by R), so each step loads one A fragment (two 8-byte shared loads) and one B
// fragment (one 8-byte global load, L1-resident) for R mmas.
template <class Cfg, class Ops>
CORRTRACK_HD void mma_block(const Ops& ops, const MmaArgs& a, std::uint8_t* tile, int tid, int bx, int by) {
    constexpr int R = Cfg::R;
    constexpr bool A32 = Cfg::A32 != 0;
    const int x0 = bx * kTileOutputs;
    const int y0 = by * Cfg::W * R;
    stage_tile<Cfg::kThreads>(ops, a, tile, tid, x0, y0);
    ops.sync();

    const int warp = tid / kWarp, lane = tid % kWarp;
    const int wy = y0 + warp * R;
    if (wy >= a.out_h) return;  // no barrier follows
    const int g = lane >> 2, t = lane & 3;

    int acc[R][4];
#pragma unroll
    for (int i = 0; i < R; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0;

    const std::uint8_t* abase = tile + warp * R * a.tile_pitch + 8 * (g + t);
    const uint2* bbase = a.bfrag + lane;
    for (int b = 0; b < a.kblocks; ++b, abase += kKBlock, bbase += a.th * kWarp) {
        std::uint32_t frag[R][4];  // frag[s] holds tile row wR + r with r % R == s
#pragma unroll
        for (int r = 0; r < R - 1; ++r) load_a<A32>(ops, abase + r * a.tile_pitch, frag[r]);
        // Whole groups of R template rows without a guard (loads can move ahead of the mmas),
        // then the th % R rows left.
        int j0 = 0;
        for (; j0 + R <= a.th; j0 += R) {
#pragma unroll
            for (int u = 0; u < R; ++u) mma_step<R, A32>(ops, acc, frag, u, abase, a.tile_pitch, bbase, j0 + u);
        }
#pragma unroll
        for (int u = 0; u < R - 1; ++u)
            if (j0 + u < a.th) mma_step<R, A32>(ops, acc, frag, u, abase, a.tile_pitch, bbase, j0 + u);
    }

    // C fragment: c0, c1 = row g, n = 2t, 2t+1; c2, c3 = row g + 8 (64 outputs further).
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
                xs[c] = x0 + (c >> 1) * 8 * kChunk + kChunk * g + 2 * t + (c & 1);
                sit[c] = static_cast<std::uint32_t>(acc[i][c]);
                if (xs[c] < a.out_w) mask |= 1u << c;
            }
            if (mask) ops.template store4<Cfg::Batch>(xs, y, sit, mask);
        } else {
#pragma unroll
            for (int c = 0; c < 4; ++c) {
                const int x = x0 + (c >> 1) * 8 * kChunk + kChunk * g + 2 * t + (c & 1);
                if (x < a.out_w) ops.store(x, y, static_cast<std::uint32_t>(acc[i][c]));
            }
        }
    }
}

// The operations of mma_block on the GPU; also carries what the fused NCC epilogue needs.
// mma.sync with u8 operands exists from sm_80 on: below that the operations compile away with
// the kernel body (supports() and cuda_mma_available() say no there).
struct DeviceOps {
    IntegralTables tables;
    DeviceTemplateStats stats;
    float* out;
    std::size_t out_pitch;  // floats
    int tw, th;

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    __device__ __forceinline__ void sync() const { __syncthreads(); }
    __device__ __forceinline__ std::uint32_t frame_word(const std::uint8_t* p) const {
        return __ldg(reinterpret_cast<const unsigned*>(p));
    }
    __device__ __forceinline__ std::uint8_t frame_byte(const std::uint8_t* p) const { return __ldg(p); }
    __device__ __forceinline__ void smem_word(std::uint8_t* p, std::uint32_t v) const {
        *reinterpret_cast<std::uint32_t*>(p) = v;
    }
    __device__ __forceinline__ uint2 smem_pair(const std::uint8_t* p) const {
        return *reinterpret_cast<const uint2*>(p);
    }
    // One ld.shared.b32 per register (asm, so the compiler cannot fuse neighbours back into an
    // 8-byte load whose register pair is not the mma's quad order).
    __device__ __forceinline__ std::uint32_t smem_u32(const std::uint8_t* p) const {
        std::uint32_t v;
        asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(static_cast<unsigned>(__cvta_generic_to_shared(p))));
        return v;
    }
    __device__ __forceinline__ uint2 b_fragment(const uint2* p) const { return __ldg(p); }
    __device__ __forceinline__ void mma(int (&d)[4], const std::uint32_t (&a)[4], uint2 b) const {
        asm volatile(
            "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};\n"
            : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b.x), "r"(b.y));
    }
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

static __global__ void pack_b_kernel(const std::uint8_t* __restrict__ templ, int tw, int th, int kblocks,
                                     uint2* __restrict__ bfrag) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= kblocks * th * kWarp) return;
    const int lane = idx % kWarp;
    const int j = (idx / kWarp) % th;
    const int b = idx / (kWarp * th);
    bfrag[idx] = b_fragment(templ + static_cast<std::size_t>(j) * tw, tw, b, lane);
}

template <class Cfg, class DOps>
static __global__ void __launch_bounds__(Cfg::kThreads) corr_mma_kernel(MmaArgs a, DOps ops) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    extern __shared__ __align__(16) std::uint8_t mma_tile[];
    mma_block<Cfg>(ops, a, mma_tile, static_cast<int>(threadIdx.x), static_cast<int>(blockIdx.x),
                   static_cast<int>(blockIdx.y));
#endif
}

static void launch_pack_b(const std::uint8_t* templ, int tw, int th, int kblocks, uint2* bfrag, cudaStream_t stream) {
    const int n = kblocks * th * kWarp;
    pack_b_kernel<<<div_up(n, 256), 256, 0, stream>>>(templ, tw, th, kblocks, bfrag);
    CORRTRACK_CUDA_LAUNCHED();
}

std::string size_text(Size s) { return std::to_string(s.width) + "x" + std::to_string(s.height); }

// The shape a CudaMma instance runs, at run time (the kernel it launches is picked from it).
struct MmaShape {
    int rows = 8, warps = 4;
};

class CudaMmaBase : public Correlator {
public:
    CudaMmaBase(KernelInfo info, MmaShape shape) : info_(std::move(info)), shape_(shape) {
        int dev = 0;
        CORRTRACK_CUDA(cudaGetDevice(&dev));
        CORRTRACK_CUDA(cudaDeviceGetAttribute(&cc_major_, cudaDevAttrComputeCapabilityMajor, dev));
        CORRTRACK_CUDA(cudaDeviceGetAttribute(&cc_minor_, cudaDevAttrComputeCapabilityMinor, dev));
        CORRTRACK_CUDA(cudaDeviceGetAttribute(&smem_optin_, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    }
    const KernelInfo& info() const override { return info_; }
    bool supports(const NccProblem& p, std::string* why) const override {
        if (!cuda_supports_common(p, why)) return false;
        std::string err;
        const long long area = p.templ.area();
        const Size o = p.out_size();
        const int block_rows = shape_.warps * shape_.rows;
        const std::size_t smem = tile_bytes(shape_.rows, p.templ.width, p.templ.height, shape_.warps);
        if (cc_major_ < 8)
            err = "int8 mma.sync needs compute capability 8.0 or newer (this GPU is " + std::to_string(cc_major_) +
                  "." + std::to_string(cc_minor_) + ")";
        else if (p.templates != 1)
            err = std::to_string(p.templates) + " templates in one pass: only one is supported";
        else if (area > kMaxTemplateArea)
            err = "template " + size_text(p.templ) + " has " + std::to_string(area) +
                  " pixels; the s32 tensor-core accumulator holds at most " + std::to_string(kMaxTemplateArea) +
                  " (pixels * 255^2 < 2^31)";
        else if (div_up(o.height, block_rows) > 65535)
            err = "output of " + std::to_string(o.height) + " rows exceeds the grid's 65535 blocks of " +
                  std::to_string(block_rows) + " rows";
        else if (smem > static_cast<std::size_t>(smem_optin_))
            err = "frame tile of " + std::to_string(smem) + " bytes exceeds the " + std::to_string(smem_optin_) +
                  " bytes of shared memory a block may use";
        else
            GpuIntegral::supports({p.roi.width, p.roi.height}, &err);
        if (why) *why = err;
        return err.empty();
    }
    void set_template(ImageView templ, Stream stream) override {
        upload_.set(templ, templ.height, stream);
        kblocks_ = k_blocks(templ.width);
        uint2* bfrag = bfrag_.ensure(static_cast<std::size_t>(kblocks_) * templ.height * kWarp);
        launch_pack_b(upload_.device(), templ.width, templ.height, kblocks_, bfrag, as_cuda(stream));
    }

protected:
    MmaArgs args(ImageView frame, const NccProblem& p) const {
        const Size o = p.out_size();
        const int th = p.templ.height;
        return MmaArgs{frame.data,
                       frame.pitch,
                       p.roi.x,
                       p.roi.y,
                       p.roi.width,
                       p.roi.height,
                       th,
                       kblocks_,
                       tile_pitch(kblocks_),
                       tile_rows(shape_.rows, th, shape_.warps),
                       bfrag_.get(),
                       o.width,
                       o.height};
    }
    DeviceOps ops(const NccProblem& p, MapView out) const {
        return DeviceOps{integral_.tables(), upload_.stats(), out.data, out.pitch, p.templ.width, p.templ.height};
    }
    // Raised to the device's limit once per kernel: every instance asks for the same value, so
    // none can lower it under another.
    template <class Cfg, class DOps>
    void launch(const MmaArgs& a, const DOps& o, std::size_t smem, cudaStream_t s) {
        if (smem > kDefaultSmem && !smem_raised_) {
            CORRTRACK_CUDA(cudaFuncSetAttribute(corr_mma_kernel<Cfg, DOps>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                smem_optin_));
            smem_raised_ = true;
        }
        const dim3 grid(div_up(a.out_w, kTileOutputs), div_up(a.out_h, Cfg::W * Cfg::R));
        corr_mma_kernel<Cfg, DOps><<<grid, Cfg::kThreads, smem, s>>>(a, o);
        CORRTRACK_CUDA_LAUNCHED();
    }

    KernelInfo info_;
    MmaShape shape_;
    int cc_major_ = 0, cc_minor_ = 0, smem_optin_ = 0;
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
    void run(ImageView frame, const NccProblem& p, MapView out, Stream stream) override {
        jpdc_check_run(*this, frame, p, out, upload_);
        const cudaStream_t s = as_cuda(stream);
        integral_.build(frame.sub(p.roi), s);
        launch<Cfg>(args(frame, p), ops(p, out), tile_bytes(Cfg::R, p.templ.width, p.templ.height, Cfg::W), s);
    }
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
std::unique_ptr<Correlator> make_mma(const std::string& name, const std::string& what) {
    KernelInfo info{name, Device::kCuda, what};
    if constexpr (Cfg::Split)
        return std::make_unique<CudaMmaSplit<Cfg>>(std::move(info));
    else
        return std::make_unique<CudaMma<Cfg>>(std::move(info));
}

}  // namespace

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

std::unique_ptr<Correlator> make_cuda_mma() {
    return make_mma<CfgR4W8A32>("cuda_mma",
                                "int8 tensor cores (mma.sync m16n8k32 u8): Toeplitz template GEMM, "
                                "4 rows x 8 warps per block, 4-byte A loads, fused NCC");
}

std::unique_ptr<Correlator> make_cuda_mma_rows(int rows_per_warp) {
    if (rows_per_warp != 4 && rows_per_warp != 8) return nullptr;
    const std::string name = "cuda_mma_r" + std::to_string(rows_per_warp);
    const std::string what = "int8 tensor cores (mma.sync m16n8k32 u8): Toeplitz template GEMM, " +
                             std::to_string(rows_per_warp) + " rows per warp, fused NCC (first shape)";
    if (rows_per_warp == 4) return make_mma<CfgR4>(name, what);
    return make_mma<CfgBase>(name, what);
}

std::unique_ptr<Correlator> make_cuda_mma_variant(std::string_view tag) {
    const std::string name = "cuda_mma_" + std::string(tag);
    const std::string base = "int8 tensor cores (mma.sync m16n8k32 u8), ";
    if (tag == "a32") return make_mma<CfgA32>(name, base + "A fragments as 4-byte shared loads");
    if (tag == "a32e") return make_mma<CfgA32e>(name, base + "4-byte A loads, epilogue loads 4 outputs' corners first");
    if (tag == "a32e2")
        return make_mma<CfgA32e2>(name, base + "4-byte A loads, epilogue loads 2 outputs' corners first");
    if (tag == "r4a32") return make_mma<CfgR4A32>(name, base + "4 rows per warp, 4-byte A loads");
    if (tag == "a32_split")
        return make_mma<CfgA32Split>(name, base + "4-byte A loads, SIT map + finish, integral on a second stream");
    return nullptr;
}

}  // namespace corrtrack
