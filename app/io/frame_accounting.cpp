#include "app/io/frame_accounting.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace corrtrack {
namespace {
// A stream whose frames keep not matching their packets must not grow this without bound.
constexpr std::size_t kMaxPending = 4096;
}  // namespace

void FrameAccounting::mark_lost(long count) {
    for (long i = 0; i < count && lost_at_.size() < kListed; ++i) lost_at_.push_back(next_ + i);
    next_ += count;
    lost_ += count;
}

void FrameAccounting::packet_sent(std::int64_t pts, std::int64_t dts, std::int64_t duration) {
    ++packets_;
    if (dts != kNoTimestamp) {
        if (last_dts_ != kNoTimestamp && dts < last_dts_) ++epoch_;
        last_dts_ = dts;
    }
    if (pts == kNoTimestamp) return;
    if (pending_.size() >= kMaxPending) pending_.erase(pending_.begin());
    pending_.emplace(Key{epoch_, pts}, duration > 0 ? duration : 0);
}

long FrameAccounting::frame_out(std::int64_t pts) {
    // The frame's packet: the oldest epoch that has this timestamp waiting.
    auto it = pending_.end();
    if (pts != kNoTimestamp)
        for (auto e = pending_.begin(); e != pending_.end();
             e = pending_.lower_bound(Key{e->first.first + 1, INT64_MIN}))
            if ((it = pending_.find(Key{e->first.first, pts})) != pending_.end()) break;
    if (it == pending_.end()) {
        if (pts != kNoTimestamp) unmatched_ = true;
        have_previous_ = false;
        return next_++;
    }
    const Key key = it->first;
    const std::int64_t duration = it->second;
    // Waiting packets before this one never became frames.
    const auto older_end = pending_.lower_bound(key);
    const long decode_lost = static_cast<long>(std::distance(pending_.begin(), older_end));
    long same_epoch_older = 0;
    for (auto o = pending_.lower_bound(Key{key.first, INT64_MIN}); o != older_end; ++o) ++same_epoch_older;
    // A hole in the timestamps: packets the demuxer skipped.
    long hole_lost = 0;
    if (have_previous_ && previous_.first == key.first && previous_duration_ > 0 && key.second > previous_.second) {
        const double between = static_cast<double>(key.second - previous_.second) / previous_duration_ - 1.0;
        const auto expected = static_cast<std::int64_t>(std::llround(between));
        if (between > 0.5 && expected <= kMaxHole)
            hole_lost = std::max<long>(0, static_cast<long>(expected) - same_epoch_older);
    }
    pending_.erase(pending_.begin(), older_end);
    pending_.erase(pending_.find(key));
    mark_lost(decode_lost + hole_lost);
    have_previous_ = true;
    previous_ = key;
    previous_duration_ = duration;
    return next_++;
}

void FrameAccounting::end_of_stream() {
    if (!unmatched_) {
        mark_lost(static_cast<long>(pending_.size()));
    } else {
        // Unmatched timestamps say nothing about which packets were shown, but every packet is
        // a frame: those that did not come out are lost (a damaged MP4 once gave 1 frame of
        // 25 and was called whole). Where they were is unknown: they count at the end.
        mark_lost(std::max<long>(0, packets_ - next_));
    }
    pending_.clear();
}

void FrameAccounting::lose(long n) { mark_lost(n); }

}  // namespace corrtrack
