#include "cuda/auto_hopeless.h"

#include <algorithm>

namespace corrtrack {

void HopelessRecord::note(const AutoCacheEntry& bucket, const std::vector<std::pair<float, std::string>>& times) {
    if (times.size() < 2) return;
    float fastest = times.front().first;
    for (const auto& t : times) fastest = std::min(fastest, t.first);
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [ms, name] : times) {
        int& losses = losses_[key(bucket, name)];
        if (losses < 0) continue;
        losses = ms > kHopelessFactor * fastest ? losses + 1 : -1;
    }
}

bool HopelessRecord::skip(const AutoCacheEntry& bucket, const std::string& name) const {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = losses_.find(key(bucket, name));
    return it != losses_.end() && it->second >= kRoundsToDrop;
}

std::vector<std::string> HopelessRecord::timed(const AutoCacheEntry& bucket,
                                               const std::vector<std::string>& names) const {
    std::vector<std::string> out;
    for (const std::string& n : names)
        if (!skip(bucket, n)) out.push_back(n);
    if (out.empty() && !names.empty()) out.push_back(names.front());
    return out;
}

}  // namespace corrtrack
