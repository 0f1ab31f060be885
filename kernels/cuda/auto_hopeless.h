// Which candidates auto's background rounds still time (auto_select.cu): a kernel that lost
// kRoundsToDrop rounds of one template-size bucket by kHopelessFactor or more, and never came
// closer there, is not timed again for that bucket in this process. Its warm-up and timed runs
// are GPU time taken from the tracking that runs beside the round: with 1024 targets of 32x32
// on an H100 (bench/results/h100_2026-12-06c, call 2's trace) every round had `cuda_dp4a` at
// 6.6-22x the winner and `cuda_dp4a_ilp` at 3.9-12x, up to 117 and 59 ms a run against 9.8
// for the winner where every lost target re-detected over the whole frame.
// Plain C++, tested without a GPU (kernels/tests/test_auto_hopeless.cpp).
// Thread rules: every member takes the record's lock (rounds finish on the timing worker).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cuda/auto_cache.h"

namespace corrtrack {

class HopelessRecord {
public:
    static constexpr float kHopelessFactor = 4.0f;  // also a round's cut (auto_timing.cu's kHopeless)
    static constexpr int kRoundsToDrop = 2;

    // A round of `bucket` finished with these times (ms, kernel; any order).
    void note(const AutoCacheEntry& bucket, const std::vector<std::pair<float, std::string>>& times);
    // Whether `name` is left out of the next rounds of `bucket`'s template size.
    bool skip(const AutoCacheEntry& bucket, const std::string& name) const;
    // `names` less the skipped ones; never empty when `names` is not (the first stays).
    std::vector<std::string> timed(const AutoCacheEntry& bucket, const std::vector<std::string>& names) const;

private:
    using Key = std::tuple<int, int, int, std::string>;  // template bucket and kernel
    static Key key(const AutoCacheEntry& b, const std::string& name) {
        return {b.templ_w, b.templ_h, b.shared_roi, name};
    }
    mutable std::mutex mutex_;
    std::map<Key, int> losses_;  // hopeless rounds; -1: once within the factor, never dropped
};

}  // namespace corrtrack
