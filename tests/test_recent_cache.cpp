// RecentCache: the tracker's "last few by key" caches (sampled windows, colour maps).
#include <gtest/gtest.h>

#include <vector>

#include "app/util/recent_cache.h"

namespace corrtrack {
namespace {

TEST(RecentCache, HitsReturnTheValueAsMadeAndTheOldestIsReplaced) {
    RecentCache<int, std::vector<int>, 4> cache;
    int made = 0;
    auto get = [&](int key) {
        return cache.get(key, [&](std::vector<int>& v) {
            ++made;
            v.assign(3, key * 10);
        });
    };
    for (int key = 1; key <= 4; ++key) EXPECT_EQ(get(key), std::vector<int>(3, key * 10));
    EXPECT_EQ(made, 4);
    // All four are held: asked again, none is made again.
    for (int key = 4; key >= 1; --key) EXPECT_EQ(get(key)[0], key * 10);
    EXPECT_EQ(made, 4);
    // A fifth key takes the oldest slot (key 1), whatever was asked since.
    EXPECT_EQ(get(5)[0], 50);
    EXPECT_EQ(made, 5);
    EXPECT_EQ(get(2)[0], 20);
    EXPECT_EQ(made, 5);
    EXPECT_EQ(get(1)[0], 10);  // made again, into key 2's slot
    EXPECT_EQ(made, 6);
    EXPECT_EQ(get(3)[0], 30);
    EXPECT_EQ(made, 6);
    // clear() forgets every key: the same key is made again.
    cache.clear();
    EXPECT_EQ(get(3)[0], 30);
    EXPECT_EQ(made, 7);
}

}  // namespace
}  // namespace corrtrack
