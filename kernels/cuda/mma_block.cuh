// The pieces of the int8 tensor-core block that cuda_mma (corr_mma.cu) and cuda_mma_fused
// (corr_mma_fused.cu) share: tile geometry, the frame-tile staging, the Toeplitz B fragments and
// the R-row mma ring of one warp (kernels/cuda/NOTES_mma.md). Written against a small Ops
// interface (sync, frame/shared/B loads, mma) so that a host emulator can run a block lane by
// lane; MmaDeviceOps is the GPU's. Compiles as plain C++ too (the device ops then vanish).
// Thread rules: block bodies are called by every thread of a block, with the block's barriers
// between their phases; the host helpers hold no state and may be called from any thread.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "corrtrack/correlator.h"
#include "corrtrack/cuda_util.h"
#include "cuda/common.cuh"
#include "corrtrack/ncc_math.h"

namespace corrtrack {
namespace mma {

constexpr int kWarp = 32;
constexpr int kChunk = 8;                  // outputs per row of A: the mma's n
constexpr int kTileOutputs = 16 * kChunk;  // outputs per block row: the 16 rows of A
constexpr int kKBlock = 32;                // the mma's k
// The s32 accumulator must hold th * tw * 255^2: below 2^31 up to 33025 template pixels.
constexpr long long kMaxTemplateArea = 33025;
constexpr std::size_t kDefaultSmem = 48 * 1024;
// B fragments of one template stack: int-indexed (pack_b_kernel, b_fragment_at).
constexpr long long kMaxBFragments = 0x7fffffff;

inline int div_up(int a, int b) { return (a + b - 1) / b; }
// Template row j is the Toeplitz block B_j[k][n] = T(j, k - n), k < tw + 7, padded to K-blocks.
inline int k_blocks(int tw) { return div_up(tw + kChunk - 1, kKBlock); }
// A tile row holds the columns an m16 tile reads: chunk 15 starts at 120 and reads 32 * kblocks.
inline int tile_pitch(int kblocks) { return div_up(kTileOutputs - kChunk + kKBlock * kblocks, 16) * 16; }
// rows_per_warp output rows per warp, `warps` warps: the tile rows their windows cover.
inline int tile_rows(int rows_per_warp, int th, int warps = 4) { return warps * rows_per_warp + th - 1; }
inline std::size_t tile_bytes(int rows_per_warp, int tw, int th, int warps = 4) {
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
    const uint2* bfrag;         // B fragments, [kblocks][kblock_rows][32 lanes]
    int out_w, out_h;
    // A batch (cuda_mma_fused): the stack of templates is packed as one template of
    // kblock_rows = th * templates rows, so a K-block's fragments are kblock_rows rows apart;
    // template k searches the roi k * roi_step rows down (template_view). One template: th, 0.
    int kblock_rows;
    int roi_step;
};

// Template k's view of a batched run: its roi and its first B fragment (row k * th of K-block
// 0; K-block b's rows follow b * kblock_rows rows further on, mma_accumulate<Cfg, true>).
CORRTRACK_HD MmaArgs template_view(MmaArgs a, int k) {
    a.roi_y += k * a.roi_step;
    a.bfrag += static_cast<std::ptrdiff_t>(k) * a.th * kWarp;
    return a;
}

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

// Entry idx of the packed B fragments of a template (stack) of `rows` rows: [kblocks][rows][32
// lanes], lane = idx % 32 (pack_b_kernel's element; a host test packs with it too).
CORRTRACK_HD uint2 b_fragment_at(const std::uint8_t* templ, int tw, int rows, int idx) {
    const int lane = idx % kWarp;
    const int j = (idx / kWarp) % rows;
    const int b = idx / (kWarp * rows);
    return b_fragment(templ + static_cast<std::size_t>(j) * tw, tw, b, lane);
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
// A thread's words go kStageBatch at a time: all their frame loads, then all their stores, so
// that several loads are in flight instead of each store waiting on its own (ncu had the
// stores' long-scoreboard waits at 11% of cuda_wgmma's warp samples).
constexpr int kStageBatch = 4;

template <int kThreads, class Ops>
CORRTRACK_HD void stage_tile(const Ops& ops, const MmaArgs& a, std::uint8_t* tile, int tid, int x0, int y0) {
    const int words = a.tile_pitch / 4;
    const int total = a.tile_rows * words;
    const int rows = a.roi_h - y0 < a.tile_rows ? a.roi_h - y0 : a.tile_rows;
    const int right = a.roi_x + a.roi_w;
    for (int base = tid; base < total; base += kStageBatch * kThreads) {
        std::uint32_t v[kStageBatch];
#pragma unroll
        for (int u = 0; u < kStageBatch; ++u) {
            const int idx = base + u * kThreads;
            const int r = idx / words;
            const int col = a.roi_x + x0 + 4 * (idx - r * words);
            v[u] = 0;
            if (idx < total && r < rows && col < right)
                v[u] =
                    frame_word(ops, a.frame + static_cast<std::size_t>(a.roi_y + y0 + r) * a.frame_pitch, col, right);
        }
#pragma unroll
        for (int u = 0; u < kStageBatch; ++u) {
            const int idx = base + u * kThreads;
            if (idx >= total) break;
            const int r = idx / words;
            ops.smem_word(tile + r * a.tile_pitch + 4 * (idx - r * words), v[u]);
        }
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

// Warp `warp`'s numerators: acc[i][c] = SIT of output (x0 + c_fragment_column(lane, c),
// y0 + warp * R + i) for the block whose tile is staged at `tile`. For each K-block b and
// template row j the warp issues R mmas: acc[i] += A(tile row wR + i + j, b) * B_j(b). A tile
// row enters when j reaches it and serves R consecutive j (a ring of R fragments, indices fixed
// at compile time by unrolling j by R), so each step loads one A fragment (two 8-byte or four
// 4-byte shared loads) and one B fragment (one 8-byte global load, L1-resident) for R mmas.
// kStacked: K-blocks of B are a.kblock_rows rows apart (a batch's stack) instead of a.th (a
// compile-time choice, so cuda_mma's code stays as it was).
template <class Cfg, bool kStacked = false, class Ops>
CORRTRACK_HD void mma_accumulate(const Ops& ops, const MmaArgs& a, const std::uint8_t* tile, int warp, int lane,
                                 int (&acc)[Cfg::R][4]) {
    constexpr int R = Cfg::R;
    constexpr bool A32 = Cfg::A32 != 0;
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < R; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0;

    const std::uint8_t* abase = tile + warp * R * a.tile_pitch + 8 * (g + t);
    const uint2* bbase = a.bfrag + lane;
    const int bstride = (kStacked ? a.kblock_rows : a.th) * kWarp;
    for (int b = 0; b < a.kblocks; ++b, abase += kKBlock, bbase += bstride) {
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
}

// Block-relative output column of accumulator register c (0..3) of lane `lane`: the C fragment
// has c0, c1 in row g (n = 2t, 2t + 1) and c2, c3 in row g + 8, i.e. chunk g + 8, 64 outputs on.
CORRTRACK_HD int c_fragment_column(int lane, int c) {
    return (c >> 1) * 8 * kChunk + kChunk * (lane >> 2) + 2 * (lane & 3) + (c & 1);
}

// The block body's operations on the GPU. mma.sync with u8 operands exists from sm_80 on: below
// that the operations compile away with the kernel bodies (supports() says no there).
struct MmaDeviceOps {
#if defined(__CUDACC__) && (!defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800)
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
#endif
};

// What the device offers the mma kernels: compute capability and the shared memory a block may
// opt in to (queried once per Correlator; the calling thread's current device).
struct MmaDevice {
    int cc_major = 0, cc_minor = 0, smem_optin = 0;
    static MmaDevice current();
};

// The limits both mma kernels share (compute capability, the s32 accumulator, the grid's rows,
// the block's shared memory) and the template count: one unless `batches` (cuda_mma_fused: up
// to 65535, one grid layer each, any template_roi_step): "" when the problem is within them,
// else why not.
std::string mma_limits_error(const MmaDevice& dev, const NccProblem& p, int block_rows, std::size_t smem_bytes,
                             bool batches = false);

// Packs template rows (tw x th, packed pitch; th may be a whole stack's rows) into kblocks * th
// * 32 B fragments (b_fragment_at), one kernel launch on the stream (corr_mma.cu).
void launch_mma_pack_b(const std::uint8_t* templ, int tw, int th, int kblocks, uint2* bfrag, cudaStream_t stream);

// One run's arguments for a block shape of `warps` warps of `rows_per_warp` output rows, for a
// B stack of one template (kblock_rows = th; a batched run sets the stack's rows).
inline MmaArgs mma_args(ImageView frame, const NccProblem& p, int kblocks, const uint2* bfrag, int rows_per_warp,
                        int warps) {
    const Size o = p.out_size();
    return MmaArgs{frame.data,
                   frame.pitch,
                   p.roi.x,
                   p.roi.y,
                   p.roi.width,
                   p.roi.height,
                   p.templ.height,
                   kblocks,
                   tile_pitch(kblocks),
                   tile_rows(rows_per_warp, p.templ.height, warps),
                   bfrag,
                   o.width,
                   o.height,
                   p.templ.height,
                   p.template_roi_step};
}

// A new template for either tensor-core kernel: uploaded (device copy and statistics) and
// packed into B fragments on the stream; returns its K-blocks.
inline int set_mma_template(ImageView templ, Stream stream, TemplateUpload& upload, DeviceBuffer<uint2>& bfrag) {
    upload.set(templ, templ.height, stream);
    const int kblocks = k_blocks(templ.width);
    uint2* b = bfrag.grow(static_cast<std::size_t>(kblocks) * templ.height * kWarp);  // stacks grow by a template
    launch_mma_pack_b(upload.device(), templ.width, templ.height, kblocks, b, as_cuda(stream));
    return kblocks;
}

}  // namespace mma
}  // namespace corrtrack
