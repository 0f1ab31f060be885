// The GPU search's cues (gpu_search.h): the requests with a colour cue, look-alikes or a
// correlation filter are
// ranked by the shared host code (search_cues.h) on their maps, copied to pinned memory on the
// stream before the search's one wait, so the boxes are the CPU's; a request that only asks
// for its rival keeps the device's peak and gets the rival from its copied map.
#include <algorithm>

#include "app/track/gpu_search.h"

namespace corrtrack {
namespace gpu_search {
namespace {

// Grows `buf` to at least n elements, doubling, so that a growing load allocates O(log n) times.
template <typename T>
T* grow(PinnedBuffer<T>& buf, std::size_t n) {
    if (n > buf.capacity()) buf.ensure(std::max(n, buf.capacity() * 2));
    return buf.get();
}

// Copies the [begin, end) ranges of `src` to the same offsets of `dst`, merged where they touch
// or lie closer than `gap` elements (a few extra bytes cost less than another copy call).
template <typename T>
void copy_ranges(std::vector<std::pair<std::size_t, std::size_t>>& ranges, std::size_t gap, const T* src, T* dst,
                 cudaStream_t stream) {
    std::sort(ranges.begin(), ranges.end());
    for (std::size_t k = 0; k < ranges.size();) {
        const std::size_t begin = ranges[k].first;
        std::size_t end = ranges[k].second;
        for (++k; k < ranges.size() && ranges[k].first <= end + gap; ++k) end = std::max(end, ranges[k].second);
        CORRTRACK_CUDA(
            cudaMemcpyAsync(dst + begin, src + begin, (end - begin) * sizeof(T), cudaMemcpyDeviceToHost, stream));
    }
}

constexpr std::size_t kGapBytes = 64 * 1024;

}  // namespace

void GpuSearch::copy_cue_inputs(const Pass& ps, const std::vector<SearchRequest>& requests, const std::uint8_t* atlas,
                                const float* maps) {
    host_ranked_.clear();
    for (std::size_t i = 0; i < callers_; ++i)
        if (needs_host_rank(requests[i], view_)) host_ranked_.push_back(i);
    if (host_ranked_.empty()) return;
    const cudaStream_t s = as_cuda(stream_);
    // The maps: each ranked request's and its look-alikes'.
    ranges_.clear();
    auto add_map = [&](std::size_t request) {
        const Item& it = ps.items[ps.slot_of_request[request]];
        ranges_.push_back(
            {it.map_offset, it.map_offset + static_cast<std::size_t>(it.out.height - 1) * it.map_pitch + it.out.width});
    };
    for (std::size_t i : host_ranked_) add_map(i);
    for (const LookalikeItem& l : lookalikes_) add_map(l.item);
    float* host_maps = grow(cue_maps_, ps.floats);
    copy_ranges(ranges_, kGapBytes / sizeof(float), maps, host_maps, s);
    // The windows of those with a colour cue or a filter (both read the sampled luma).
    ranges_.clear();
    for (std::size_t i : host_ranked_) {
        const SearchRequest& r = requests[i];
        if (!reads_window(r, view_)) continue;
        const SampleItem& si = sample_items_[ps.slot_of_request[i]];
        ranges_.push_back({si.dst_offset, si.dst_offset + static_cast<std::size_t>(r.patch.height - 1) * si.dst_pitch +
                                              r.patch.width});
    }
    if (ranges_.empty()) return;
    std::size_t bytes = 0;
    for (const auto& rg : ranges_) bytes = std::max(bytes, rg.second);
    copy_ranges(ranges_, kGapBytes, atlas, grow(cue_atlas_, bytes), s);
}

void GpuSearch::rank_on_host(const Pass& ps, const std::vector<SearchRequest>& requests,
                             std::vector<RankedPeak>& hits) {
    if (host_ranked_.empty()) return;
    StatClock clock(stat(&GpuSearchStats::host_rank_ms));
    // Packs a copied map (its device layout: map_pitch floats a row) into `out`.
    auto pack = [&](std::size_t request, std::vector<float>& out) {
        const Item& it = ps.items[ps.slot_of_request[request]];
        out.resize(static_cast<std::size_t>(it.out.area()));
        for (int y = 0; y < it.out.height; ++y) {
            const float* row = cue_maps_.get() + it.map_offset + static_cast<std::size_t>(y) * it.map_pitch;
            std::copy(row, row + it.out.width, out.data() + static_cast<std::size_t>(y) * it.out.width);
        }
        return it.out;
    };
    for (std::size_t i : host_ranked_) {
        const SearchRequest& r = requests[i];
        const Size o = pack(i, cue_map_);
        if (!cues_apply(r, view_)) {
            // Only its rival: the device's peak is the host's penalised peak (the boxes of the
            // two backends are equal without cues), so only the rival scan runs here.
            add_rival(r, cue_map_.data(), o, hits[i]);
            counters_.host_rivals += 1;
            continue;
        }
        const float* lookalike[SearchRequest::kMaxDistractors] = {};
        for (const LookalikeItem& l : lookalikes_)
            if (l.request == i) {
                pack(l.item, cue_lookalike_[l.distractor]);
                lookalike[l.distractor] = cue_lookalike_[l.distractor].data();
            }
        if (reads_window(r, view_)) {
            const SampleItem& si = sample_items_[ps.slot_of_request[i]];
            cue_patch_.resize(static_cast<std::size_t>(r.patch.area()));
            for (int y = 0; y < r.patch.height; ++y) {
                const std::uint8_t* row = cue_atlas_.get() + si.dst_offset + static_cast<std::size_t>(y) * si.dst_pitch;
                std::copy(row, row + r.patch.width, cue_patch_.data() + static_cast<std::size_t>(y) * r.patch.width);
            }
        }
        hits[i] = rank_request(r, view_, cue_patch_.data(), cue_map_.data(), o, lookalike, cue_scratch_);
        counters_.host_ranked += 1;
    }
}

}  // namespace gpu_search
}  // namespace corrtrack
