// The GPU search's atlas layout and its correlator runs: which requests share a row and a
// batched launch, each group's templates (set before any capture), and the runs themselves.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "app/track/gpu_search.h"

namespace corrtrack {
namespace gpu_search {
namespace {

// ceil(2 log2(v)), the bit width of v^2 - 1, in integers (lay_out runs it on every request of
// every search): sizes within one step differ by at most a factor of sqrt(2).
int half_octaves(int v) {
    const unsigned long long n = static_cast<unsigned long long>(std::max(1, v));
    const unsigned long long below = n * n - 1;
    return below == 0 ? 0 : 64 - __builtin_clzll(below);
}
int size_class_of(Size patch) { return half_octaves(patch.width) * 256 + half_octaves(patch.height); }

}  // namespace

Correlator& GpuSearch::single(const TemplateRef& t) {
    Single& s = singles_[t.key];
    if (!s.corr) {
        std::string why;
        s.corr = make_correlator(kernel_, &why);
        if (!s.corr) throw std::runtime_error(why);
        s.version = t.version + 1;
    }
    if (s.version != t.version) {
        {
            StatClock clock(stat(&GpuSearchStats::set_template_ms));
            s.corr->set_template(t.image, stream_);
        }
        counters_.set_template_calls += 1;
        counters_.set_template_px += static_cast<double>(t.image.width) * t.image.height;
        s.version = t.version;
    }
    return *s.corr;
}

// Atlas order: by template size, patches per row, size class, request: each group is
// consecutive, one batched launch. A run of requests with one template (a target's
// scales) shares an atlas row side by side, so a batch stacks that template once, not once per
// scale (a third of the bytes to restack, upload and pack; wider maps fill the tensor-core
// kernel's 128-column tiles better); not with gradient twins, whose maps blend slot by slot.
// A group's patches lie in slots of its largest patch (targets' windows differ with their
// speed) and are sampled over the whole slot; positions past a patch's own map read that
// extra and are never looked at: the peaks and map() see its own map only. Patches of one
// row and of one group lie within half an octave of each other in width and height
// (size_class): one re-detection of a target shrunk below its template samples an upsampled
// frame, and in a slot of that size every other re-detection's whole frame cost 7 times its
// own (bench/results/h100_2026-12-06d); a lead's window shared the row of its target's whole
// frame, and so a whole frame's slot.
void GpuSearch::lay_out(const std::vector<SearchRequest>& requests, std::vector<Item>& items) const {
    const bool share_rows = twins_.empty();
    for (std::size_t i = 0; i < requests.size();) {
        const TemplateRef& t = requests[i].templ;
        const int size_class = size_class_of(requests[i].patch);
        std::size_t j = i + 1;
        while (share_rows && j < requests.size() && requests[j].templ.key == t.key &&
               requests[j].templ.version == t.version && requests[j].templ.image.size() == t.image.size() &&
               size_class_of(requests[j].patch) == size_class)
            ++j;
        for (std::size_t k = i; k < j; ++k) {
            Item it;
            it.request = k;
            it.lane = static_cast<int>(k - i);
            it.lanes = static_cast<int>(j - i);
            it.size_class = size_class;
            items.push_back(it);
        }
        i = j;
    }
    std::stable_sort(items.begin(), items.end(), [&](const Item& a, const Item& b) {
        const Size ta = requests[a.request].templ.image.size(), tb = requests[b.request].templ.image.size();
        return std::make_tuple(ta.width, ta.height, a.lanes, a.size_class) <
               std::make_tuple(tb.width, tb.height, b.lanes, b.size_class);
    });
    for (std::size_t first = 0; first < items.size();) {
        const std::size_t last = group_end(requests, items, first);
        Size slot;
        for (std::size_t k = first; k < last; ++k) {
            const Size patch = requests[items[k].request].patch;
            slot = {std::max(slot.width, patch.width), std::max(slot.height, patch.height)};
        }
        for (std::size_t k = first; k < last; ++k) items[k].slot = slot;
        first = last;
    }
}

// The end of the group that starts at items[first]: one template size, one row width in
// lanes, one size class.
std::size_t GpuSearch::group_end(const std::vector<SearchRequest>& requests, const std::vector<Item>& items,
                                 std::size_t first) {
    const Size ts = requests[items[first].request].templ.image.size();
    std::size_t last = first + 1;
    while (last < items.size() && requests[items[last].request].templ.image.size() == ts &&
           items[last].lanes == items[first].lanes && items[last].size_class == items[first].size_class)
        ++last;
    return last;
}

// Sets each group's templates (uploads: never under a capture) and lists its correlator runs.
void GpuSearch::bind_runs(const std::vector<SearchRequest>& requests, const std::vector<Item>& items, ImageView atlas,
                          float* maps) {
    runs_.clear();
    for (std::size_t first = 0; first < items.size();) {
        const Item& head = items[first];
        const Size ts = requests[head.request].templ.image.size();
        const std::size_t last = group_end(requests, items, first);
        const int lanes = head.lanes;
        const int count = static_cast<int>((last - first) / lanes);  // atlas rows: one template each
        const Size row{lanes * head.slot.width, head.slot.height};   // every row of the group has it
        const NccProblem batch{atlas.size(), ts, Rect{0, head.row, row.width, row.height}, count, row.height};
        Group& grp = groups_[{ts.width, ts.height, lanes, head.size_class}];
        if (!grp.corr) grp.corr = make_correlator(kernel_);
        if (count > 1 && grp.corr && grp.corr->supports(batch, nullptr)) {
            // Restack only when the batch's templates or their pixels changed.
            bool changed = grp.stacked.size() != static_cast<std::size_t>(count);
            grp.stacked.resize(count);
            for (int k = 0; k < count; ++k) {
                const TemplateRef& t = requests[items[first + k * lanes].request].templ;
                const std::pair<std::uint64_t, std::uint64_t> id{t.key, t.version};
                if (grp.stacked[k] != id) changed = true;
                grp.stacked[k] = id;
            }
            if (changed) {
                const std::size_t tb = static_cast<std::size_t>(ts.width) * ts.height;
                grp.pixels.resize(tb * count);
                for (int k = 0; k < count; ++k) {
                    const ImageView& img = requests[items[first + k * lanes].request].templ.image;
                    if (img.pitch == static_cast<std::size_t>(ts.width))  // a target's templates are packed
                        std::copy(img.data, img.data + tb, &grp.pixels[k * tb]);
                    else
                        for (int y = 0; y < ts.height; ++y)
                            std::copy(img.row(y), img.row(y) + ts.width, &grp.pixels[k * tb + y * ts.width]);
                }
                StatClock clock(stat(&GpuSearchStats::set_template_ms));
                grp.corr->set_template({grp.pixels.data(), ts.width, ts.height * count,
                                        static_cast<std::size_t>(ts.width), MemorySpace::kHost},
                                       stream_);
                counters_.set_template_calls += 1;
                counters_.set_template_px += static_cast<double>(grp.pixels.size());
            }
            runs_.push_back({grp.corr.get(),
                             batch,
                             {maps + head.map_offset, head.map_pitch, head.slot_out.height * count,
                              static_cast<std::size_t>(head.map_pitch), MemorySpace::kDevice}});
        } else {
            for (std::size_t k = first; k < last; k += lanes) {  // one run per atlas row
                const Item& it = items[k];
                const SearchRequest& r = requests[it.request];
                const NccProblem p{atlas.size(), ts, Rect{0, it.row, row.width, row.height}};
                Correlator& corr = single(r.templ);
                std::string why;
                if (!corr.supports(p, &why))
                    throw std::runtime_error("kernel " + kernel_ + " cannot run this search: " + why);
                runs_.push_back({&corr,
                                 p,
                                 {maps + it.map_offset, it.map_pitch, it.slot_out.height,
                                  static_cast<std::size_t>(it.map_pitch), MemorySpace::kDevice}});
            }
        }
        first = last;
    }
}

bool GpuSearch::runs_capturable() {
    for (const Run& r : runs_)
        if (!r.corr->capturable(r.problem, stream_)) return false;
    return true;
}

void GpuSearch::queue_runs(ImageView atlas, Stream q) {
    for (const Run& r : runs_) {
        StatClock clock(stat(&GpuSearchStats::run_ms));
        r.corr->run(atlas, r.problem, r.out, q);
        counters_.run_calls += 1;
        ++launches_;
    }
}

}  // namespace gpu_search
}  // namespace corrtrack
