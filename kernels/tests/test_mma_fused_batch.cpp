// cuda_mma_fused's batched form without a GPU: several templates stacked in one image, each
// searching its own roi (template_roi_step rows apart: an atlas of patches, one shared roi, rois
// that overlap or leave gaps), one grid layer (blockIdx.z) per template. The block's own code
// runs on the host as in test_mma_box_sums (fused_block_emu.h): template_view moves the roi and
// the B fragments to template k, the K-blocks of the stack's fragments are th * templates rows
// apart, fused_map reads template k's statistics from the stack's prefix table and moves its
// stores to map k. Every output of every map must be stored exactly once, with SI, SII and SIT
// equal to direct sums over its template's roi, its template's statistics equal to direct sums,
// and its NCC the formula on them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/tests/fused_block_emu.h"

namespace corrtrack {
namespace {

using namespace fused_emu;  // NOLINT

// {frame w, h, pitch pad, base offset, roi of template 0, tw, th, fill, templates, step, flat}
std::vector<Case> batch_cases() {
    std::vector<Case> v;
    // The tracker's batch: 40x40 templates in 100x100 patches stacked a patch apart (2 block
    // rows of 32 per map, 4 of 16; 2 K-blocks).
    v.push_back({100, 600, 0, 0, {0, 0, 100, 100}, 40, 40, -1, 6, 100});
    // Patches narrower than the frame at odd offsets, odd pitch and base.
    v.push_back({131, 3 + 5 * 97, 3, 1, {7, 3, 97, 97}, 33, 29, -1, 5, 97});
    // One roi for all (step 0, the one-to-many search).
    v.push_back({120, 90, 0, 2, {5, 7, 60, 40}, 13, 9, -1, 4, 0});
    // Overlapping rois (step 7 < roi height) and rois with gaps (step 61 > 50).
    v.push_back({80, 70, 1, 0, {4, 6, 50, 40}, 9, 11, -1, 3, 7});
    v.push_back({150, 3 + 2 * 61 + 50, 0, 3, {9, 3, 100, 50}, 16, 16, -1, 3, 61});
    // Two blocks across and two down per map; the last roi at the frame's bottom right.
    v.push_back({310, 170, 2, 1, {10, 10, 300, 80}, 64, 20, -1, 2, 80});
    // A flat template in the middle of the stack: its map is 0, its neighbours' are not.
    v.push_back({60, 180, 0, 0, {0, 0, 60, 60}, 25, 25, -1, 3, 60, 1});
    // A wide template (4 K-blocks of the stack), one row per map, many templates.
    v.push_back({140, 12 * 30, 0, 1, {0, 0, 140, 30}, 100, 12, -1, 12, 30});
    v.push_back({40, 4, 0, 0, {0, 0, 40, 1}, 20, 1, -1, 4, 1});          // one-row templates and maps
    v.push_back({24, 20 * 24, 1, 2, {0, 0, 24, 24}, 8, 8, -1, 20, 24});  // 20 grid layers
    v.push_back({41, 420, 0, 0, {1, 0, 40, 210}, 5, 200, -1, 2, 210});   // tall: K-block stride 400 rows
    v.push_back({37, 29, 0, 0, {0, 0, 37, 29}, 1, 1, -1, 3, 0});         // 1x1 templates
    // The s32 bound in a batch: all-255 frames and templates at the largest area (33024).
    v.push_back({129, 512, 0, 0, {0, 0, 129, 256}, 129, 256, 255, 2, 256});
    v.push_back({300, 2 * 140, 0, 0, {0, 0, 300, 140}, 256, 129, 255, 2, 140});
    return v;
}

TEST(MmaFusedBatch, EveryOutputOfEveryMapExact) {
    std::uint32_t seed = 101;
    int checked = 0;
    for (const Case& c : batch_cases()) {
        SCOPED_TRACE(describe(c));
        ASSERT_GT(c.templates, 1);
        const Prepared pr = prepare(c, seed++);
        check_shape<Shape<4, 8>>(c, pr);
        check_shape<Shape<4, 4>>(c, pr);
        check_shape<Shape<8, 4>>(c, pr);
        check_shape<Shape<4, 8, 2>>(c, pr);
        checked += 4;
    }
    EXPECT_EQ(checked, 4 * static_cast<int>(batch_cases().size()));
}

// The flat template's map is exactly 0 and its neighbours' are not all 0: the statistics are
// per template, not the stack's.
TEST(MmaFusedBatch, FlatTemplateOnlyZeroesItsOwnMap) {
    const Case c{60, 180, 0, 0, {0, 0, 60, 60}, 25, 25, -1, 3, 60, 1};
    const Prepared pr = prepare(c, 7);
    ASSERT_EQ(pr.stats[1].n * pr.stats[1].sum_sq, pr.stats[1].sum * pr.stats[1].sum);
    const std::size_t per_map = static_cast<std::size_t>(pr.out_w) * pr.out_h;
    int nonzero[3] = {0, 0, 0};
    for (int k = 0; k < 3; ++k)
        for (std::size_t i = 0; i < per_map; ++i) {
            const Direct& d = pr.direct[k * per_map + i];
            const DeviceTemplateStats& t = pr.stats[k];
            nonzero[k] += ncc_from_sums(t.n, static_cast<std::int64_t>(d.si), static_cast<std::int64_t>(d.sii),
                                        static_cast<std::int64_t>(d.sit), t.sum, t.sum_sq) != 0.0f;
        }
    EXPECT_EQ(nonzero[1], 0);
    EXPECT_GT(nonzero[0], static_cast<int>(per_map) / 2);
    EXPECT_GT(nonzero[2], static_cast<int>(per_map) / 2);
    check_shape<Shape<4, 8>>(c, pr);  // and the block stores exactly those
}

}  // namespace
}  // namespace corrtrack
