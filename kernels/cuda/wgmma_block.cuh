// The Hopper pieces of cuda_wgmma (corr_wgmma.cu, NOTES_wgmma.md): the operand layouts of
// wgmma.mma_async m64n32k32 u8 for the Toeplitz correlation, B's stream into shared memory by
// bulk copy, one B chunk of a warpgroup's numerators, and the epilogue.
//
// Geometry. A block is cuda_mma_fused's: 128 outputs x 32 rows, a staged frame tile and the
// window-sum table (mma_box_sums.cuh). A wgmma's n = 32 outputs of one chunk: B_j[k][n] =
// T(j, 32 b + k - n), so a template row takes K-blocks of 32 for tw + 31 columns (as many as
// mma.sync's n = 8 needs from 32x32 to 128x128: 2, 3, 5). Its m = 64 rows are 16 per warp:
// row m = 4 rho + c of warp w is chunk c (outputs 32 c ..) of output row 4 w + rho, so one
// wgmma is the warpgroup's 16 output rows x 128 outputs for one template row and K-block,
// 65536 MACs from one instruction (n = 8 gave 16384, what one mma.sync per warp gives).
// A is in registers, mma.sync m16n8k32's fragment (the PTX ISA's and CUTLASS's ALayout_64x32):
// lane (g, t) holds rows g and g + 8, i.e. rho = g / 4 and g / 4 + 2, chunk g % 4.
//
// Host-callable: the layouts (wgmma_b_byte, wgmma_a_offset, wgmma_d_position), which a host test
// checks with a model of the instruction. Device: sm_90a only (CORRTRACK_HAVE_WGMMA).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda/mma_block.cuh"
#include "cuda/mma_box_sums.cuh"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CORRTRACK_HAVE_WGMMA 1
#endif

namespace corrtrack {
namespace mma {

constexpr int kWgN = 32;                 // outputs per chunk: the wgmma's n
constexpr int kWgChunks = 4;             // chunks per block row (4 x 32 = kTileOutputs)
constexpr int kWgRowsPerWarp = 4;        // output rows per warp (16 m rows = 4 rows x 4 chunks)
constexpr int kWgBRowBytes = kWgN * 32;  // one template row's B of one K-block: 32 n x 32 k
constexpr int kWgCoreBytes = 128;        // 8 x 16-byte core matrix: the leading (K) byte offset
constexpr int kWgGroupBytes = 256;       // two core matrices per 8 n: the stride (N) byte offset

inline int wg_k_blocks(int tw) { return div_up(tw + kWgN - 1, kKBlock); }
// Bytes per tile row: chunk 3 reads to 96 + 32 kblocks, the sums slot (the row's last 8 bytes)
// must lie beyond, and pitch / 4 odd puts a warp's two tile rows of A on distinct banks.
inline int wg_tile_pitch(int kblocks) { return (kWgChunks - 1) * kWgN + kKBlock * kblocks + 12; }
// B travels in chunks of C template rows (one bulk copy each) through NB shared buffers.
template <int C>
CORRTRACK_HD int wg_chunk_rows(int th) {
    return th < C ? th : C;
}
template <int C, int NB>
CORRTRACK_HD std::size_t wg_b_buffer_bytes(int th) {
    return static_cast<std::size_t>(NB) * wg_chunk_rows<C>(th) * kWgBRowBytes;
}

// The physical byte (of a K-block's 32) that logical k of A and B holds: mma.sync's permutation
// (b_fragment), so a lane's two A registers of a row are 8 consecutive tile bytes.
CORRTRACK_HD int wg_permuted_k(int k) { return k < 16 ? 8 * (k / 4) + k % 4 : 8 * ((k - 16) / 4) + 4 + (k - 16) % 4; }

// Byte `idx` of the packed B ([kblocks][rows][kWgBRowBytes]) of a template (stack) of `rows`
// rows: no-swizzle K-major core matrices, (n, k) at (n % 8) 16 + (n / 8) 256 + (k % 16) + (k / 16)
// 128, holding T(j, 32 b + permuted(k) - n) inside the row, else 0.
CORRTRACK_HD std::uint8_t wgmma_b_byte(const std::uint8_t* templ, int tw, int rows, long long idx) {
    const int o = static_cast<int>(idx % kWgBRowBytes);
    const long long row_block = idx / kWgBRowBytes;
    const int j = static_cast<int>(row_block % rows), b = static_cast<int>(row_block / rows);
    const int n = 8 * (o / kWgGroupBytes) + (o % kWgCoreBytes) / 16;
    const int k = 16 * ((o % kWgGroupBytes) / kWgCoreBytes) + o % 16;
    const int i = kKBlock * b + wg_permuted_k(k) - n;
    return i >= 0 && i < tw ? templ[static_cast<std::size_t>(j) * tw + i] : std::uint8_t{0};
}

// Tile offset of lane `lane`'s first A bytes for template row j, K-block b (warp `warp` of the
// block): row g -> output row 4 warp + g / 4, chunk g % 4; bytes 8t .. 8t + 7 of the K-block.
// Row g + 8 (rho + 2) is 2 tile rows further.
CORRTRACK_HD int wgmma_a_offset(int pitch, int warp, int lane, int j, int b) {
    const int g = lane >> 2, t = lane & 3;
    return (kWgRowsPerWarp * warp + g / 4 + j) * pitch + kWgN * (g % 4) + kKBlock * b + 8 * t;
}

// Block-relative output of accumulator register r (0..15) of lane `lane` in warp `warp`
// (CLayout_64x32: r = 4 s + 2 h + e is m = g + 8 h, n = 8 s + 2 t + e).
CORRTRACK_HD void wgmma_d_position(int warp, int lane, int r, int& row, int& col) {
    const int g = lane >> 2, t = lane & 3, s = r >> 2, h = (r >> 1) & 1, e = r & 1;
    const int m = g + 8 * h;
    row = kWgRowsPerWarp * warp + m / 4;
    col = kWgN * (m % 4) + 8 * s + 2 * t + e;
}

// Warp `warp`'s outputs of the block at (x0, y0): registers r, r + 1 (r even) are outputs col,
// col + 1 of one row, whose left table entries are one 16-byte load (col even), the right ones
// too when tw is even. store_ncc combines them as every kernel does.
template <class Ops>
CORRTRACK_HD void wgmma_epilogue(const Ops& ops, const BoxLayout& L, const uint2* sums, int warp, int lane, int x0,
                                 int y0, int out_w, int out_h, const FusedMap& map, const int (&acc)[16]) {
#pragma unroll
    for (int r = 0; r < 16; r += 2) {
        int row = 0, col = 0;
        wgmma_d_position(warp, lane, r, row, col);
        if (y0 + row >= out_h || x0 + col >= out_w) continue;
        const uint2* entries = sums + row * L.pitch;
        const uint4 left = ops.sums_load_pair(entries + col);
        uint4 right;
        if ((L.tw & 1) == 0) {
            right = ops.sums_load_pair(entries + col + L.tw);
        } else {
            const uint2 a = ops.sums_load(entries + col + L.tw), b = ops.sums_load(entries + col + L.tw + 1);
            right = make_uint4(a.x, a.y, b.x, b.y);
        }
        ops.store_ncc(map, x0 + col, y0 + row, right.x - left.x, right.y - left.y, static_cast<std::uint32_t>(acc[r]));
        if (x0 + col + 1 < out_w)
            ops.store_ncc(map, x0 + col + 1, y0 + row, right.z - left.z, right.w - left.w,
                          static_cast<std::uint32_t>(acc[r + 1]));
    }
}

// Packs template rows (tw x th; th may be a stack's rows) into wg_k_blocks(tw) * th row blocks
// of kWgBRowBytes (wgmma_b_byte), one kernel on the stream (corr_wgmma.cu).
void launch_wgmma_pack_b(const std::uint8_t* templ, int tw, int th, int kblocks, std::uint8_t* out,
                         cudaStream_t stream);

#if defined(CORRTRACK_HAVE_WGMMA)
__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
    return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// Template bz's B, in chunks q = b * chunks + c (K-block b, template rows c * C' .. with C' =
// wg_chunk_rows<C>(th)), brought by thread 0 into buffer q % NB with one bulk copy that
// completes on that buffer's mbarrier (whose phase flips once per fill).
template <int C, int NB>
struct WgmmaBStream {
    const std::uint8_t* global;  // the stack's packed B
    int bz, th, kblock_rows, chunks;
    std::uint8_t* smem;   // the NB buffers
    std::uint64_t* bars;  // one mbarrier each

    __device__ int rows(int q) const {
        const int j0 = (q % chunks) * wg_chunk_rows<C>(th);
        return th - j0 < wg_chunk_rows<C>(th) ? th - j0 : wg_chunk_rows<C>(th);
    }
    __device__ std::uint8_t* buffer(int q) const {
        return smem + (q % NB) * static_cast<std::size_t>(wg_chunk_rows<C>(th)) * kWgBRowBytes;
    }
    __device__ void init() const {
        for (int s = 0; s < NB; ++s)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem_addr(bars + s)));
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __device__ void issue(int q) const {
        const int b = q / chunks, j0 = (q % chunks) * wg_chunk_rows<C>(th);
        const std::uint8_t* src =
            global +
            (static_cast<std::size_t>(b) * kblock_rows + static_cast<std::size_t>(bz) * th + j0) * kWgBRowBytes;
        const std::uint32_t bytes = static_cast<std::uint32_t>(rows(q)) * kWgBRowBytes;
        const std::uint32_t bar = smem_addr(bars + q % NB);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                         smem_addr(buffer(q))),
                     "l"(src), "r"(bytes), "r"(bar)
                     : "memory");
    }
    // Every thread: until chunk q is in its buffer (fill number q / NB of buffer q % NB).
    __device__ void wait(int q) const {
        const std::uint32_t bar = smem_addr(bars + q % NB), parity = (q / NB) & 1;
        std::uint32_t done = 0;
        do {
            asm volatile(
                "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                : "=r"(done)
                : "r"(bar), "r"(parity)
                : "memory");
        } while (!done);
    }
};

// Shared-memory descriptor of one template row's B: start address, leading (K) byte offset 128
// between a group's two core matrices, stride (N) byte offset 256 between groups of 8 n, each in
// 16-byte units; no swizzle.
__device__ __forceinline__ std::uint64_t wgmma_b_desc(std::uint32_t addr) {
    return static_cast<std::uint64_t>((addr & 0x3FFFF) >> 4) | (static_cast<std::uint64_t>(kWgCoreBytes >> 4) << 16) |
           (static_cast<std::uint64_t>(kWgGroupBytes >> 4) << 32);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// d += A * B: A = this warp's 16 rows in registers, B = 32 k x 32 n at `desc`.
__device__ __forceinline__ void wgmma_u8_n32(int (&d)[16], const std::uint32_t (&a)[4], std::uint64_t desc) {
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n32k32.s32.u8.u8 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20, 1;\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]),
          "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc));
}

__device__ __forceinline__ std::uint32_t lds_u32(const std::uint8_t* p) {
    std::uint32_t v;
    asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(smem_addr(p)));
    return v;
}

// One template row j (u = j - j0 of the chunk): wait until at most D groups are in flight (so
// the slot loaded now, last read D + 1 steps ago, is free), load its A fragment (rows g, g + 8:
// 2 tile rows apart), one wgmma, commit.
template <int D, int S>
__device__ __forceinline__ void wgmma_row(int (&acc)[16], std::uint32_t (&frag)[S][4], int u, const std::uint8_t* a0,
                                          int pitch, std::uint64_t desc) {
    wgmma_wait<D>();
    std::uint32_t(&f)[4] = frag[u % S];
    f[0] = lds_u32(a0);
    f[1] = lds_u32(a0 + 2 * pitch);
    f[2] = lds_u32(a0 + 4);
    f[3] = lds_u32(a0 + 2 * pitch + 4);
    wgmma_fence();
    wgmma_u8_n32(acc, f, desc);
    wgmma_commit();
}

// Warp `warp`'s numerators for template rows j0 .. j0 + rows - 1 of K-block b, whose B row
// blocks are at bsmem: acc += A(row 4 warp + rho + j, K-block b) B_j. Called by every thread of
// the warpgroup; returns with its wgmmas complete (the buffer may then be refilled).
template <int D>
__device__ __forceinline__ void wgmma_chunk(const std::uint8_t* tile, int pitch, const std::uint8_t* bsmem, int b,
                                            int j0, int rows, int warp, int lane, int (&acc)[16]) {
    constexpr int S = D + 1;
    const std::uint8_t* a0 = tile + wgmma_a_offset(pitch, warp, lane, j0, b);
    const std::uint64_t desc0 = wgmma_b_desc(smem_addr(bsmem));
    std::uint32_t frag[S][4];
    int u = 0;
    for (; u + S <= rows; u += S) {
#pragma unroll
        for (int v = 0; v < S; ++v)
            wgmma_row<D, S>(acc, frag, v, a0 + (u + v) * pitch, pitch,
                            desc0 + static_cast<std::uint64_t>((u + v) * (kWgBRowBytes >> 4)));
    }
#pragma unroll
    for (int v = 0; v < S - 1; ++v)
        if (u + v < rows)
            wgmma_row<D, S>(acc, frag, v, a0 + (u + v) * pitch, pitch,
                            desc0 + static_cast<std::uint64_t>((u + v) * (kWgBRowBytes >> 4)));
    wgmma_wait<0>();
}
#endif  // CORRTRACK_HAVE_WGMMA

}  // namespace mma
}  // namespace corrtrack
