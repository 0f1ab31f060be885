// auto's record of hopeless candidates (cuda/auto_hopeless.h), without a GPU: which kernels a
// template size's background rounds stop timing, and which they never stop.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "cuda/auto_hopeless.h"

namespace corrtrack {
namespace {

using Times = std::vector<std::pair<float, std::string>>;

const std::vector<std::string> kNames{"cuda_mma_fused", "cuda_wgmma", "cuda_dp4a_ilp", "cuda_dp4a"};

// The rounds of 1024 targets of 32x32 on an H100 (bench/results/h100_2026-12-06c): the two
// dp4a kernels at 4.6x and 7.7x the winner, the wgmma kernel at 1.4x.
Times round(float fused) {
    return {{fused, "cuda_mma_fused"},
            {1.36f * fused, "cuda_wgmma"},
            {4.6f * fused, "cuda_dp4a_ilp"},
            {7.7f * fused, "cuda_dp4a"}};
}

TEST(HopelessRecord, TwoHopelessRoundsDropAKernelForItsTemplateSize) {
    HopelessRecord record;
    const AutoCacheEntry tracking = auto_cache_bucket(32, 32, 49.0 * 49.0 * 3072, 1024, false);
    const AutoCacheEntry redetect = auto_cache_bucket(32, 32, 1505.0 * 833.0 * 8, 8, false);
    const AutoCacheEntry other_size = auto_cache_bucket(64, 64, 49.0 * 49.0 * 3072, 1024, false);
    EXPECT_EQ(record.timed(tracking, kNames), kNames);
    record.note(tracking, round(0.203f));
    EXPECT_EQ(record.timed(tracking, kNames), kNames);  // one round is not enough
    record.note(redetect, round(4.8f));
    // Any bucket of the template size: the re-detection's shapes keep changing, its kernels' ranks do not.
    const std::vector<std::string> kept{"cuda_mma_fused", "cuda_wgmma"};
    EXPECT_EQ(record.timed(tracking, kNames), kept);
    EXPECT_EQ(record.timed(redetect, kNames), kept);
    EXPECT_TRUE(record.skip(redetect, "cuda_dp4a"));
    EXPECT_FALSE(record.skip(redetect, "cuda_wgmma"));
    EXPECT_EQ(record.timed(other_size, kNames), kNames);  // another template size times them all
}

TEST(HopelessRecord, AKernelOnceCloseIsNeverDropped) {
    HopelessRecord record;
    const AutoCacheEntry b = auto_cache_bucket(16, 16, 1e6, 1, false);
    record.note(b, {{0.10f, "cuda_mma_fused"}, {0.35f, "cuda_dp4a_ilp"}});  // 3.5x: within the factor
    for (int i = 0; i < 5; ++i) record.note(b, {{0.10f, "cuda_mma_fused"}, {0.90f, "cuda_dp4a_ilp"}});
    EXPECT_FALSE(record.skip(b, "cuda_dp4a_ilp"));
    // A round of one kernel says nothing about the others.
    HopelessRecord lone;
    lone.note(b, {{0.10f, "cuda_dp4a"}});
    lone.note(b, {{0.10f, "cuda_dp4a"}});
    EXPECT_FALSE(lone.skip(b, "cuda_dp4a"));
}

TEST(HopelessRecord, TheFirstNameStaysWhenAllWouldGo) {
    HopelessRecord record;
    const AutoCacheEntry b = auto_cache_bucket(8, 8, 1e5, 1, false);
    for (int i = 0; i < 2; ++i) record.note(b, {{0.1f, "cuda_mma_fused"}, {1.0f, "cuda_tex"}, {1.0f, "cuda_shared"}});
    EXPECT_EQ(record.timed(b, {"cuda_tex", "cuda_shared"}), std::vector<std::string>{"cuda_tex"});
    EXPECT_TRUE(record.timed(b, {}).empty());
}

}  // namespace
}  // namespace corrtrack
