// cuda_wgmma's operand layouts without a GPU (wgmma_block.cuh): the packed B row blocks hold the
// Toeplitz template rows in wgmma's no-swizzle K-major core matrices with the K permutation of
// the A fragments, and a model of wgmma.mma_async m64n32k32 (A element (m, k) of a warp's
// registers as the PTX ISA / CUTLASS ALayout_64x32 place it, B element (n, k) where the
// descriptor's layout puts it, D as CLayout_64x32) over a staged tile gives every output of a
// block once, with its exact numerator. What is left to the GPU sweep: that the hardware is
// this model.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "cuda/wgmma_block.cuh"

namespace corrtrack {
namespace {

using namespace mma;  // NOLINT

std::vector<std::uint8_t> packed_b(const std::vector<std::uint8_t>& templ, int tw, int th) {
    std::vector<std::uint8_t> out(static_cast<std::size_t>(wg_k_blocks(tw)) * th * kWgBRowBytes);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = wgmma_b_byte(templ.data(), tw, th, static_cast<long long>(i));
    return out;
}

// B (n, k) where the descriptor's no-swizzle K-major layout puts it: core matrices of 8 n x 16
// bytes, the two K halves kWgCoreBytes (LBO) apart, groups of 8 n kWgGroupBytes (SBO) apart.
std::uint8_t b_element(const std::uint8_t* rowblock, int n, int k) {
    return rowblock[(n % 8) * 16 + (n / 8) * kWgGroupBytes + (k % 16) + (k / 16) * kWgCoreBytes];
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
        ASSERT_GE(kKBlock * wg_k_blocks(tw), tw + kWgN - 1) << tw;  // every (n, i) pair has a K slot
        for (int kb = 0; kb < wg_k_blocks(tw); ++kb)
            for (int j = 0; j < th; ++j) {
                const std::uint8_t* rb = b.data() + (static_cast<std::size_t>(kb) * th + j) * kWgBRowBytes;
                for (int n = 0; n < kWgN; ++n)
                    for (int k = 0; k < 32; ++k) {
                        const int i = kKBlock * kb + wg_permuted_k(k) - n;
                        const int want = i >= 0 && i < tw ? t[static_cast<std::size_t>(j) * tw + i] : 0;
                        ASSERT_EQ(b_element(rb, n, k), want)
                            << tw << " kb " << kb << " j " << j << " n " << n << " k " << k;
                    }
            }
    }
}

std::uint32_t word_at(const std::vector<std::uint8_t>& tile, int off) {
    return tile[off] | (tile[off + 1] << 8) | (tile[off + 2] << 16) | (static_cast<std::uint32_t>(tile[off + 3]) << 24);
}

// A block of 8 warps, wgmma_chunk's loads (wgmma_a_offset; rows g + 8 two tile rows further)
// and each wgmma computed from the ISA's layouts: A (m, k) in register (m / 8) + 2 (k / 16) of
// lane 4 (m % 8) + (k % 16) / 4, byte k % 4 (ALayout_64x32); B (n, k) by the descriptor; D (m, n)
// in register 4 (n / 8) + 2 (m / 8) + n % 2 of lane 4 (m % 8) + (n % 8) / 2 (CLayout_64x32).
// Every output of the 128 x 32 block must appear once (wgmma_d_position), with its exact sum.
TEST(WgmmaLayout, ModelledWarpgroupMmaGivesExactNumerators) {
    std::uint32_t seed = 9;
    struct Case {
        int tw, th;
    };
    const int warps = 8, rows = kWgRowsPerWarp * warps;
    for (const Case cs :
         {Case{1, 1}, Case{16, 16}, Case{25, 7}, Case{33, 5}, Case{64, 9}, Case{129, 3}, Case{256, 2}}) {
        const int tw = cs.tw, th = cs.th, kb = wg_k_blocks(tw);
        const int pitch = wg_tile_pitch(kb), tile_rows = rows + th - 1;
        ASSERT_EQ((pitch / 4) % 2, 1) << "a warp's two A tile rows must fall on distinct banks";
        const std::vector<std::uint8_t> tile = random_bytes(static_cast<std::size_t>(pitch) * tile_rows, seed);
        const std::vector<std::uint8_t> t = random_bytes(static_cast<std::size_t>(tw) * th, seed);
        const std::vector<std::uint8_t> b = packed_b(t, tw, th);
        std::vector<long long> got(static_cast<std::size_t>(kTileOutputs) * rows, 0);
        std::vector<int> hits(got.size(), 0);
        for (int w = 0; w < warps; ++w) {
            std::vector<long long> d(32 * 16, 0);  // lane x register
            for (int blk = 0; blk < kb; ++blk)
                for (int j = 0; j < th; ++j) {
                    std::uint32_t a[32][4];
                    for (int lane = 0; lane < 32; ++lane) {
                        const int off = wgmma_a_offset(pitch, w, lane, j, blk);
                        ASSERT_LE(off + 2 * pitch + 8, pitch * tile_rows);
                        // The sums slot (each tile row's last 8 bytes) is never an A byte.
                        ASSERT_LE(off % pitch + 8, pitch - 8) << tw << " lane " << lane;
                        a[lane][0] = word_at(tile, off);
                        a[lane][1] = word_at(tile, off + 2 * pitch);
                        a[lane][2] = word_at(tile, off + 4);
                        a[lane][3] = word_at(tile, off + 2 * pitch + 4);
                    }
                    const std::uint8_t* rb = b.data() + (static_cast<std::size_t>(blk) * th + j) * kWgBRowBytes;
                    for (int m = 0; m < 16; ++m)
                        for (int n = 0; n < kWgN; ++n) {
                            long long sum = 0;
                            for (int k = 0; k < 32; ++k) {
                                const std::uint32_t reg = a[4 * (m % 8) + (k % 16) / 4][(m / 8) + 2 * (k / 16)];
                                sum += static_cast<long long>((reg >> (8 * (k % 4))) & 0xff) * b_element(rb, n, k);
                            }
                            d[(4 * (m % 8) + (n % 8) / 2) * 16 + 4 * (n / 8) + 2 * (m / 8) + n % 2] += sum;
                        }
                }
            for (int lane = 0; lane < 32; ++lane)
                for (int r = 0; r < 16; ++r) {
                    int row = 0, col = 0;
                    wgmma_d_position(w, lane, r, row, col);
                    ASSERT_TRUE(row >= 0 && row < rows && col >= 0 && col < kTileOutputs) << row << "," << col;
                    got[static_cast<std::size_t>(row) * kTileOutputs + col] = d[lane * 16 + r];
                    ++hits[static_cast<std::size_t>(row) * kTileOutputs + col];
                }
        }
        for (int row = 0; row < rows; ++row)
            for (int x = 0; x < kTileOutputs; ++x) {
                ASSERT_EQ(hits[static_cast<std::size_t>(row) * kTileOutputs + x], 1) << row << "," << x;
                ASSERT_LE(x + tw, pitch - 8);  // the window is staged and clear of the sums slot
                long long want = 0;
                for (int jj = 0; jj < th; ++jj)
                    for (int ii = 0; ii < tw; ++ii)
                        want += static_cast<long long>(t[static_cast<std::size_t>(jj) * tw + ii]) *
                                tile[static_cast<std::size_t>(row + jj) * pitch + x + ii];
                ASSERT_EQ(got[static_cast<std::size_t>(row) * kTileOutputs + x], want)
                    << tw << "x" << th << " row " << row << " x " << x;
            }
    }
}

}  // namespace
}  // namespace corrtrack
