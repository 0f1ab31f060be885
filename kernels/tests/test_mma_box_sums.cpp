// cuda_mma_fused's block without a GPU, one template (the batched form:
// test_mma_fused_batch.cpp): the block's own code, from staging through the in-kernel window
// sums and the mma loop to the epilogue, runs on the host thread by thread and phase by phase as
// the kernel's barriers order it, the warp's mma.sync computed from PTX's fragment tables
// (fused_block_emu.h says what each operation checks). Each output's SI, SII and SIT must equal
// direct sums over the frame, every output must be stored exactly once, and its NCC must equal
// the formula on direct sums. Only the hardware, the barriers themselves and the launch are
// left to the GPU sweep.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/tests/fused_block_emu.h"

namespace corrtrack {
namespace {

using namespace fused_emu;  // NOLINT

std::vector<Case> cases() {
    std::vector<Case> v;
    // Every template side of note from 1 to 256 (K-block edges tw + 7 = 32k, 32k + 1; the
    // 128-output tile edge; the largest), square and not, on frames a little larger.
    const int sides[] = {1,  2,  3,  7,  8,  15, 16, 17,  25,  26,  31,  32,
                         33, 57, 58, 63, 64, 65, 89, 127, 128, 129, 255, 256};
    for (int tw : sides) {
        const int th = tw == 256 ? 129 : (tw * 7) % 61 + 1;  // a shuffled height for each width
        v.push_back({tw + 150, th + 40, 3, 1, {1, 2, tw + 140, th + 35}, tw, th, -1});
        v.push_back({tw + 9, th + 9, 0, 0, {0, 0, tw + 9, th + 9}, tw, th, -1});  // roi = frame
    }
    for (int th : sides) v.push_back({140, th + 50, 1, 2, {3, 1, 133, th + 49}, 5, th, -1});  // tall templates
    // Width 1: one-pixel templates and one-column outputs.
    v.push_back({37, 29, 0, 0, {0, 0, 37, 29}, 1, 1, -1});
    v.push_back({33, 70, 1, 3, {32, 0, 1, 70}, 1, 40, -1});   // roi of width 1 at the right edge
    v.push_back({90, 41, 2, 1, {17, 3, 64, 38}, 64, 1, -1});  // output width 1
    // Rois at every edge of the frame, odd offsets and pitches, multi-block grids.
    v.push_back({700, 150, 5, 3, {0, 0, 700, 150}, 64, 64, -1});
    v.push_back({700, 150, 0, 1, {3, 5, 697, 145}, 64, 64, -1});
    v.push_back({333, 171, 3, 2, {333 - 300, 171 - 120, 300, 120}, 45, 27, -1});  // bottom right
    v.push_back({1003, 71, 1, 0, {0, 1, 1001, 70}, 100, 60, -1});
    v.push_back({517, 60, 0, 3, {2, 0, 515, 60}, 130, 11, -1});
    v.push_back({260, 300, 7, 1, {1, 1, 259, 299}, 129, 256, -1});
    v.push_back({300, 200, 0, 0, {0, 0, 300, 200}, 256, 129, -1});
    // The bounds: all-255 frames at the largest supported areas and at 256x256 (SII of a window
    // 4.26e9, SI 16.7e6: both below 2^32, differences exact; 256x256 is past the kernel's s32
    // numerator limit, its SIT below 2^32 compares as the wrapped uint32), flat windows
    // (SII * n = SI^2).
    v.push_back({300, 140, 0, 0, {0, 0, 300, 140}, 256, 129, 255});
    v.push_back({150, 270, 0, 2, {1, 1, 149, 269}, 129, 256, 255});
    v.push_back({260, 260, 0, 0, {0, 0, 260, 260}, 256, 256, 255});
    v.push_back({200, 90, 0, 1, {0, 0, 200, 90}, 16, 16, 141});
    return v;
}

// cuda_mma_fused's shape (32 rows), cuda_mma_fused_w4's (16 rows), 8 rows per warp (4 scan
// segments a row instead of 8), so the scan holds for any shape the mma code supports, and
// cuda_mma_fused_h2's (32 rows, the table in two parts of 16 built one after the other).
TEST(MmaBoxSums, EveryOutputExact) {
    std::uint32_t seed = 11;
    int checked = 0;
    for (const Case& c : cases()) {
        SCOPED_TRACE(describe(c));
        ASSERT_GT(c.roi.width - c.tw, -1);
        ASSERT_GT(c.roi.height - c.th, -1);
        ASSERT_LE(c.roi.x + c.roi.width, c.frame_w);
        ASSERT_LE(c.roi.y + c.roi.height, c.frame_h);
        const Prepared pr = prepare(c, seed++);
        check_shape<Shape<4, 8>>(c, pr);
        check_shape<Shape<4, 4>>(c, pr);
        check_shape<Shape<8, 4>>(c, pr);
        check_shape<Shape<4, 8, 2>>(c, pr);
        checked += 4;
    }
    EXPECT_EQ(checked, 4 * static_cast<int>(cases().size()));
}

// The scan's layout promise (box_scan_thread): in every phase-2/4 step the 16 lanes of each
// half-warp touch 16 distinct bank pairs (8-byte entries mod 16), for every template width.
template <class Cfg>
int scan_conflicts() {
    int conflicts = 0;
    for (int tw = 1; tw <= 256; ++tw) {
        const BoxLayout box = box_layout(tw, 1, 0, Cfg::kThreads / Cfg::kTableRows);
        for (int half = 0; half < Cfg::kThreads / 16; ++half) {
            unsigned used = 0;
            for (int lane = 0; lane < 16; ++lane) {
                int r = 0, k = 0;
                box_scan_thread<Cfg::kThreads, Cfg::kTableRows>(16 * half + lane, r, k);
                if (k * box.seg_len >= box.entries) continue;  // an idle (empty) segment
                const unsigned bank_pair = 1u << ((r * box.pitch + k * box.seg_len) % 16);
                if (used & bank_pair) ++conflicts;
                used |= bank_pair;
            }
        }
    }
    return conflicts;
}

TEST(MmaBoxSums, ScanLanesHitDistinctBankPairs) {
    EXPECT_EQ((scan_conflicts<Shape<4, 8>>()), 0);
    EXPECT_EQ((scan_conflicts<Shape<4, 4>>()), 0);
    EXPECT_EQ((scan_conflicts<Shape<8, 4>>()), 0);
    EXPECT_EQ((scan_conflicts<Shape<4, 8, 2>>()), 0);
}

// The emulator's PTX fragment tables: every element of A (16 x 32), B (32 x 8) and C (16 x 8)
// is held by exactly one (lane, element) pair.
TEST(MmaBoxSums, FragmentTablesCoverEachElementOnce) {
    std::vector<int> a(16 * 32, 0), b(32 * 8, 0), c(16 * 8, 0);
    for (int lane = 0; lane < kWarp; ++lane) {
        for (int e = 0; e < 16; ++e) ++a[a_pos(lane, e).row * 32 + a_pos(lane, e).col];
        for (int e = 0; e < 8; ++e) ++b[b_pos(lane, e).row * 8 + b_pos(lane, e).col];
        for (int r = 0; r < 4; ++r) ++c[c_pos(lane, r).row * 8 + c_pos(lane, r).col];
    }
    for (int n : a) ASSERT_EQ(n, 1);
    for (int n : b) ASSERT_EQ(n, 1);
    for (int n : c) ASSERT_EQ(n, 1);
}

// Every thread of the block gets a distinct (row, segment) of the scan.
template <class Cfg>
void expect_scan_threads_cover_once() {
    std::vector<int> seen(Cfg::kThreads, 0);
    for (int tid = 0; tid < Cfg::kThreads; ++tid) {
        int r = 0, k = 0;
        box_scan_thread<Cfg::kThreads, Cfg::kTableRows>(tid, r, k);
        ASSERT_LT(r, Cfg::kTableRows);
        ASSERT_LT(k, Cfg::kThreads / Cfg::kTableRows);
        ++seen[k * Cfg::kTableRows + r];
    }
    for (int n : seen) EXPECT_EQ(n, 1);
}

TEST(MmaBoxSums, ScanThreadsCoverRowsAndSegmentsOnce) {
    expect_scan_threads_cover_once<Shape<4, 8>>();
    expect_scan_threads_cover_once<Shape<4, 8, 2>>();
}

}  // namespace
}  // namespace corrtrack
