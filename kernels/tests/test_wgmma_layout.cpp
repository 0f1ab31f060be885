// cuda_wgmma's operand layouts without a GPU (wgmma_block.cuh): the packed B row blocks hold the
// Toeplitz template rows in wgmma's no-swizzle K-major core matrices, with the K permutation
// that load_a's A fragments use, and a model of wgmma.mma_async m64n8k32 (A element (m, k) of
// a warp's registers as the PTX ISA / CUTLASS ALayout_64x32 place it, B element (n, k) where the
// descriptor's layout puts it, D as CLayout_64x8) over a staged tile gives every output's exact
// numerator. What is left to the GPU sweep: that the hardware is this model.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "cuda/wgmma_block.cuh"

namespace corrtrack {
namespace {

using namespace mma;  // NOLINT

// The physical tile byte (offset inside 32 bytes of a K-block) that logical k of an A register
// holds: a0 = bytes 8t..8t+3 for k = 4t.., a2 = bytes 8t+4.. for k = 16 + 4t.. (load_a).
int permuted(int k) { return k < 16 ? 8 * (k / 4) + k % 4 : 8 * ((k - 16) / 4) + 4 + (k - 16) % 4; }

std::vector<std::uint8_t> packed_b(const std::vector<std::uint8_t>& templ, int tw, int th) {
    const int kb = k_blocks(tw);
    std::vector<std::uint8_t> out(static_cast<std::size_t>(kb) * th * kWgmmaBRowBytes);
    for (long long w = 0; w < static_cast<long long>(out.size() / 4); ++w) {
        const std::uint32_t v = wgmma_b_word(templ.data(), tw, th, w);
        for (int q = 0; q < 4; ++q) out[4 * w + q] = static_cast<std::uint8_t>(v >> (8 * q));
    }
    return out;
}

std::uint8_t b_element(const std::uint8_t* rowblock, int n, int k) {
    return rowblock[n * 16 + (k % 16) + (k / 16) * kWgmmaCoreBytes];  // descriptor: LBO 128, one N group
}

std::vector<std::uint8_t> random_bytes(std::size_t n, std::uint32_t& seed) {
    std::vector<std::uint8_t> v(n);
    for (auto& x : v) {
        seed = seed * 1664525u + 1013904223u;
        x = static_cast<std::uint8_t>(seed >> 24);
    }
    return v;
}

TEST(WgmmaLayout, BRowBlocksAreTheToeplitzRowsInCoreMatrices) {
    std::uint32_t seed = 5;
    for (int tw : {1, 2, 7, 16, 24, 25, 33, 57, 64, 100, 121, 129, 200, 249, 256}) {
        const int th = 3;
        const std::vector<std::uint8_t> t = random_bytes(static_cast<std::size_t>(tw) * th, seed);
        const std::vector<std::uint8_t> b = packed_b(t, tw, th);
        for (int kb = 0; kb < k_blocks(tw); ++kb)
            for (int j = 0; j < th; ++j) {
                const std::uint8_t* rb = b.data() + (static_cast<std::size_t>(kb) * th + j) * kWgmmaBRowBytes;
                for (int n = 0; n < 8; ++n)
                    for (int k = 0; k < 32; ++k) {
                        const int i = kKBlock * kb + permuted(k) - n;
                        const int want = i >= 0 && i < tw ? t[static_cast<std::size_t>(j) * tw + i] : 0;
                        ASSERT_EQ(b_element(rb, n, k), want) << tw << " kb " << kb << " j " << j << " n " << n << " k " << k;
                    }
            }
    }
}

struct HostTileOps {
    std::uint32_t smem_u32(const std::uint8_t* p) const {
        return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
    }
};

// One warp's numerators for a tile at (x0 = 0, its row 0), the loop of wgmma_kblock with each
// wgmma computed from the model: acc[i][c] for rows i < R, D's element c of each lane.
TEST(WgmmaLayout, ModelledWarpgroupMmaGivesExactNumerators) {
    std::uint32_t seed = 9;
    struct Case { int tw, th; };
    for (const Case cs : {Case{1, 1}, Case{16, 16}, Case{25, 7}, Case{33, 5}, Case{64, 9}, Case{129, 3}, Case{256, 2}}) {
        const int tw = cs.tw, th = cs.th, kb = k_blocks(tw), R = 4;
        const int pitch = tile_pitch(kb), rows = R + th - 1;
        const std::vector<std::uint8_t> tile = random_bytes(static_cast<std::size_t>(pitch) * rows, seed);
        const std::vector<std::uint8_t> t = random_bytes(static_cast<std::size_t>(tw) * th, seed);
        const std::vector<std::uint8_t> b = packed_b(t, tw, th);
        std::vector<long long> acc(static_cast<std::size_t>(R) * 32 * 4, 0);
        for (int blk = 0; blk < kb; ++blk)
            for (int j = 0; j < th; ++j)
                for (int i = 0; i < R; ++i) {
                    // Each lane's A fragment of tile row i + j (load_a, as wgmma_step loads it).
                    std::uint32_t a[32][4];
                    for (int lane = 0; lane < 32; ++lane) {
                        const int g = lane >> 2, tt = lane & 3;
                        load_a<true>(HostTileOps{}, tile.data() + (i + j) * pitch + 8 * (g + tt) + kKBlock * blk, a[lane]);
                    }
                    const std::uint8_t* rb = b.data() + (static_cast<std::size_t>(blk) * th + j) * kWgmmaBRowBytes;
                    for (int lane = 0; lane < 32; ++lane)
                        for (int c = 0; c < 4; ++c) {
                            // D (m, n) of this lane's element c (CLayout_64x8, one warp's rows).
                            const int m = (lane >> 2) + 8 * (c >> 1), n = 2 * (lane & 3) + (c & 1);
                            long long d = 0;
                            for (int k = 0; k < 32; ++k) {
                                // A (m, k): lane 4 (m % 8) + (k % 16) / 4, register (m / 8) + 2 (k / 16).
                                const std::uint32_t reg = a[4 * (m % 8) + (k % 16) / 4][(m / 8) + 2 * (k / 16)];
                                d += static_cast<long long>((reg >> (8 * (k % 4))) & 0xff) * b_element(rb, n, k);
                            }
                            acc[(static_cast<std::size_t>(i) * 32 + lane) * 4 + c] += d;
                        }
                }
        for (int i = 0; i < R; ++i)
            for (int lane = 0; lane < 32; ++lane)
                for (int c = 0; c < 4; ++c) {
                    const int x = c_fragment_column(lane, c);
                    ASSERT_LE(x + tw, pitch);  // every window of the block's 128 outputs is staged
                    long long want = 0;
                    for (int jj = 0; jj < th; ++jj)
                        for (int ii = 0; ii < tw; ++ii)
                            want += static_cast<long long>(t[static_cast<std::size_t>(jj) * tw + ii]) *
                                    tile[static_cast<std::size_t>(i + jj) * pitch + x + ii];
                    ASSERT_EQ(acc[(static_cast<std::size_t>(i) * 32 + lane) * 4 + c], want)
                        << tw << "x" << th << " row " << i << " x " << x;
                }
    }
}

}  // namespace
}  // namespace corrtrack
