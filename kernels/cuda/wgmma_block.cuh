// The Hopper pieces of cuda_wgmma (corr_wgmma.cu, NOTES_wgmma.md): B's shared-memory layout for
// wgmma.mma_async m64n8k32 u8, its bulk-copy stream into two shared buffers, and one K-block of
// a warp's numerators. The A fragments and the output fragment are mma.sync m16n8k32's (one
// warp's 16 rows of the m64 tile each; the PTX ISA's and CUTLASS's layouts agree), so the tile,
// load_a and the epilogue are mma_block.cuh's and mma_box_sums.cuh's.
// Host-callable: the layout (wgmma_b_word: the pack kernel's element, and what a host test
// checks). Device: sm_90a only (CORRTRACK_HAVE_WGMMA); elsewhere the bodies compile away.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda/mma_block.cuh"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define CORRTRACK_HAVE_WGMMA 1
#endif

namespace corrtrack {
namespace mma {

// One template row's B of one K-block: 8 n x 32 k bytes, K-major, as two 8 x 16-byte core
// matrices (k 0-15, then k 16-31; no swizzle): byte n * 16 + (k % 16) + (k / 16) * 128.
constexpr int kWgmmaBRowBytes = 256;
constexpr int kWgmmaCoreBytes = 128;  // the descriptor's leading (K) byte offset

// Word w (0..63) of that row block: mma.sync's B fragment of lane 4n + t (b_fragment), whose .x
// holds k = 4t..4t+3 and .y k = 16+4t..16+4t+3 (the same K permutation as A), so .x is the word
// at n * 16 + 4t and .y the word 128 bytes further. idx = ((b * rows) + j) * 64 + w.
CORRTRACK_HD std::uint32_t wgmma_b_word(const std::uint8_t* templ, int tw, int rows, long long idx) {
    const int w = static_cast<int>(idx % 64);
    const long long row_block = idx / 64;
    const int j = static_cast<int>(row_block % rows);
    const int b = static_cast<int>(row_block / rows);
    const int hi = w >> 5, n = (w >> 2) & 7, t = w & 3;
    const uint2 f = b_fragment(templ + static_cast<std::size_t>(j) * tw, tw, b, 4 * n + t);
    return hi ? f.y : f.x;
}

// Shared bytes for B: one K-block of the template's rows, twice when there are two K-blocks or
// more (one being read while the next arrives).
CORRTRACK_HD std::size_t wgmma_b_buffer_bytes_dev(int kblocks, int th) {
    return static_cast<std::size_t>(kblocks > 1 ? 2 : 1) * th * kWgmmaBRowBytes;
}
inline std::size_t wgmma_b_buffer_bytes(int tw, int th) { return wgmma_b_buffer_bytes_dev(k_blocks(tw), th); }

// Packs template rows (tw x th; th may be a stack's rows) into kblocks * th row blocks of
// kWgmmaBRowBytes (wgmma_b_word), one kernel on the stream (corr_wgmma.cu).
void launch_wgmma_pack_b(const std::uint8_t* templ, int tw, int th, int kblocks, std::uint8_t* out,
                         cudaStream_t stream);

#if defined(CORRTRACK_HAVE_WGMMA)
__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
    return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// K-block b of template bz's B, brought by thread 0 into buffer b % 2 with one bulk copy that
// completes on that buffer's mbarrier (the phase flips once per fill).
struct WgmmaBStream {
    const std::uint8_t* global;  // the stack's packed B, [kblocks][kblock_rows][256 bytes]
    int bz, th, kblock_rows, kblocks;
    std::uint8_t* smem;      // the buffers
    std::uint64_t* bars;     // one mbarrier per buffer

    __device__ std::uint32_t bytes() const { return static_cast<std::uint32_t>(th) * kWgmmaBRowBytes; }
    __device__ std::uint8_t* buffer(int b) const { return smem + (b & 1) * bytes(); }
    __device__ void init() const {
        for (int s = 0; s < 2; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem_addr(bars + s)));
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __device__ void issue(int b) const {
        const std::uint8_t* src =
            global + (static_cast<std::size_t>(b) * kblock_rows + static_cast<std::size_t>(bz) * th) * kWgmmaBRowBytes;
        const std::uint32_t bar = smem_addr(bars + (b & 1));
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes()) : "memory");
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                smem_addr(buffer(b))),
            "l"(src), "r"(bytes()), "r"(bar)
            : "memory");
    }
    __device__ void start() const {
        issue(0);
        if (kblocks > 1) issue(1);
    }
    // Every thread: until K-block b is in its buffer (fill number b / 2 of buffer b % 2).
    __device__ void wait(int b) const {
        const std::uint32_t bar = smem_addr(bars + (b & 1)), parity = (b >> 1) & 1;
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

// Shared-memory descriptor of one template row's B (no swizzle, K-major): start address,
// leading (K) byte offset 128 between the two core matrices, stride (N) byte offset 256 (one
// group of 8 n here), each in 16-byte units.
__device__ __forceinline__ std::uint64_t wgmma_b_desc(std::uint32_t addr) {
    return static_cast<std::uint64_t>((addr & 0x3FFFF) >> 4) |
           (static_cast<std::uint64_t>(kWgmmaCoreBytes >> 4) << 16) |
           (static_cast<std::uint64_t>(kWgmmaBRowBytes >> 4) << 32);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// d += A * B: A = this warp's 16 rows (mma.sync's A fragment), B = 32 x 8 at `desc`.
__device__ __forceinline__ void wgmma_u8(int (&d)[4], const std::uint32_t (&a)[4], std::uint64_t desc) {
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n8k32.s32.u8.u8 {%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, 1;\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc));
}

struct WgmmaTileOps {
    __device__ __forceinline__ std::uint32_t smem_u32(const std::uint8_t* p) const {
        std::uint32_t v;
        asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(smem_addr(p)));
        return v;
    }
};

// Template row j of the K-block: tile row wR + j + R - 1 enters slot (u + R - 1) % S, then one
// wgmma group of R: acc[i] += A(row wR + j + i) * B_j. A ring of S = R + D slots: the slot
// loaded at step j last served step j - 1 - D, which wait_group D has retired, so D groups
// stay in flight while the load runs.
template <int R, int D, int S>
__device__ __forceinline__ void wgmma_step(int (&acc)[R][4], std::uint32_t (&frag)[S][4], int u,
                                           const std::uint8_t* abase, int pitch, std::uint64_t desc0, int j) {
    wgmma_wait<D>();
    load_a<true>(WgmmaTileOps{}, abase + (j + R - 1) * pitch, frag[(u + R - 1) % S]);
    wgmma_fence();
    const std::uint64_t desc = desc0 + static_cast<std::uint64_t>(j * (kWgmmaBRowBytes >> 4));
#pragma unroll
    for (int i = 0; i < R; ++i) wgmma_u8(acc[i], frag[(u + i) % S], desc);
    wgmma_commit();
}

// Warp `warp`'s numerators for K-block b (mma_accumulate's loop with wgmma): acc[i] += the sums
// over template rows j of A(tile row warp * R + i + j, K-block b) * B_j(b), B_j at bsmem + 256 j.
// Called by every thread of the warpgroup; returns with its wgmmas complete.
template <int R, int D>
__device__ __forceinline__ void wgmma_kblock(const MmaArgs& a, const std::uint8_t* tile, const std::uint8_t* bsmem,
                                             int b, int warp, int lane, int (&acc)[R][4]) {
    constexpr int S = R + D;
    const int g = lane >> 2, t = lane & 3;
    const std::uint8_t* abase = tile + warp * R * a.tile_pitch + 8 * (g + t) + kKBlock * b;
    const std::uint64_t desc0 = wgmma_b_desc(smem_addr(bsmem));
    std::uint32_t frag[S][4];
#pragma unroll
    for (int r = 0; r < R - 1; ++r) load_a<true>(WgmmaTileOps{}, abase + r * a.tile_pitch, frag[r]);
    int j0 = 0;
    for (; j0 + S <= a.th; j0 += S) {
#pragma unroll
        for (int u = 0; u < S; ++u) wgmma_step<R, D, S>(acc, frag, u, abase, a.tile_pitch, desc0, j0 + u);
    }
#pragma unroll
    for (int u = 0; u < S - 1; ++u)
        if (j0 + u < a.th) wgmma_step<R, D, S>(acc, frag, u, abase, a.tile_pitch, desc0, j0 + u);
    wgmma_wait<0>();
}
#endif  // CORRTRACK_HAVE_WGMMA

}  // namespace mma
}  // namespace corrtrack
