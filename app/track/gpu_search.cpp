// The GPU search backend (gpu_search.h): a frame, a search, the template patches.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "app/track/gpu_search.h"

namespace corrtrack {
namespace gpu_search {

void GpuSearch::search_all(int pass, const std::vector<SearchRequest>& requests, std::vector<RankedPeak>& hits,
                           StageTimes* times) {
    counters_.mark(GpuSearchStats::kEnqueue);
    Pass& ps = passes_[pass];
    std::vector<Item>& items = ps.items;
    hits.resize(requests.size());
    items.clear();
    launches_ = 0;
    positions_ = 0;
    replayed_ = false;
    if (requests.empty()) return;
    lay_out(requests, items);
    int rows = 0, width = 0;
    std::size_t floats = 0;
    sample_items_.clear();
    peak_items_.clear();
    sample_margins_.clear();
    ps.slot_of_request.resize(requests.size());
    for (std::size_t k = 0; k < items.size(); ++k) {
        Item& it = items[k];
        const SearchRequest& r = requests[it.request];
        ps.slot_of_request[it.request] = k;
        const Size ts = r.templ.image.size();
        if (it.lane == 0 && k > 0) {  // a new atlas row: below the last one, its map after its map
            rows += items[k - 1].slot.height;
            floats += static_cast<std::size_t>(items[k - 1].map_pitch) * items[k - 1].slot_out.height;
        }
        it.row = rows;
        it.out = {r.patch.width - ts.width + 1, r.patch.height - ts.height + 1};
        it.slot_out = {it.slot.width - ts.width + 1, it.slot.height - ts.height + 1};
        it.map_pitch = it.lanes * it.slot.width - ts.width + 1;
        it.map_offset = floats + static_cast<std::size_t>(it.lane) * it.slot.width;
        width = std::max(width, it.lanes * it.slot.width);
        if (it.request < extras_first_) positions_ += it.out.area();
        const LevelSample ls = level_sample(r.ox, r.oy, r.scale);
        sample_items_.push_back({ls.ox, ls.oy, ls.scale, it.slot.width, it.slot.height, ls.level, 0, 0});
        // The template patch sampled after a search lies inside the window, give or take the
        // scale step: a template's size of margin covers it.
        sample_margins_.push_back({static_cast<int>(std::ceil(ts.width * ls.scale)) + 2,
                                   static_cast<int>(std::ceil(ts.height * ls.scale)) + 2});
        peak_items_.push_back({it.map_offset, it.out.width, it.out.height, r.penalty, it.map_pitch});
    }
    rows += items.back().slot.height;
    floats += static_cast<std::size_t>(items.back().map_pitch) * items.back().slot_out.height;
    const std::size_t atlas_pitch = (static_cast<std::size_t>(width) + 63) / 64 * 64;
    for (std::size_t k = 0; k < items.size(); ++k) {
        sample_items_[k].dst_offset = static_cast<std::size_t>(items[k].row) * atlas_pitch +
                                      static_cast<std::size_t>(items[k].lane) * items[k].slot.width;
        sample_items_[k].dst_pitch = atlas_pitch;
    }
    gradient_items_.clear();
    blend_items_.clear();
    for (const Twin& t : twins_) {
        const std::size_t a = ps.slot_of_request[t.request], b = ps.slot_of_request[t.twin];
        const SearchRequest& r = requests[t.request];
        gradient_items_.push_back({sample_items_[a].dst_offset, sample_items_[b].dst_offset, atlas_pitch, r.patch.width,
                                   r.patch.height, items[a].slot.width, items[a].slot.height});
        blend_items_.push_back({items[a].map_offset, items[b].map_offset,
                                static_cast<std::size_t>(items[a].slot_out.area()), r.gradient_weight});
    }
    // Grown with headroom (grow_traced): slots follow the targets' speed, so these creep up
    // over the first frames; exact sizes would reallocate at every new maximum.
    std::uint8_t* atlas = grow_traced(atlas_, atlas_pitch * rows, "atlas (bytes)");
    float* maps = grow_traced(ps.maps, floats, "maps (floats)");
    ps.floats = floats;
    ps.host_maps_valid = false;
    RankedPeak* host_peaks = grow_traced(host_peaks_, items.size(), "peaks (mapped pinned)");
    RankedPeak* peaks = copy_peaks_ ? peaks_.grow(items.size()) : host_peaks_.device();
    peak_scratch_.ensure(items.size(), stream_);
    float* host_maps = keep_maps_ && eager_maps_ ? grow_traced(ps.host_maps, floats, "host maps (pinned)") : nullptr;

    // Stage events only where a split is wanted: each timed record costs about a us of host time.
    const bool timed = times || stats_;
    cudaEvent_t done = timed ? peaked_ : searched_;
    // Under a capture a stage event is a node of the graph (external: recorded as it runs).
    auto record = [&](cudaEvent_t e, Stream q, bool in_graph) {
        if (!timed) return;
        StatClock clock(stat(&GpuSearchStats::event_ms));
        const cudaStream_t s = as_cuda(q);
        CORRTRACK_CUDA(in_graph ? cudaEventRecordWithFlags(e, s, cudaEventRecordExternal) : cudaEventRecord(e, s));
    };
    const ImageView atlas_view{atlas, width, rows, atlas_pitch, MemorySpace::kDevice};
    // Uploads and template sets go before the launches: a graph captures launches only.
    record(begin_, stream_, false);
    prepare_levels(sample_items_, sample_margins_);
    {
        StatClock clock(stat(&GpuSearchStats::correlate_ms));
        bind_runs(requests, items, atlas_view, maps);
    }
    bool captured = false;
    // `q`: stream_, or the graph's own capture stream (never fed by another thread: NVDEC's
    // decoder thread launches onto stream_, and a capture there took its launches and crashed
    // the driver, bench/results/h200_2026-12-03/run3).
    auto queue = [&](Stream q) {
        {
            StatClock clock(stat(&GpuSearchStats::sample_launch_ms));
            launch_sample_patches(pyramid_.levels(), sample_items_, atlas, q, staged_.samples.stage(sample_items_, q));
            launch_gradient_patches(atlas, gradient_items_, q, staged_.gradients.stage(gradient_items_, q));
        }
        record(sampled_, q, captured);
        {
            StatClock clock(stat(&GpuSearchStats::correlate_ms));
            queue_runs(atlas_view, q);
        }
        launch_blend_maps(maps, blend_items_, q, staged_.blends.stage(blend_items_, q));
        record(correlated_, q, captured);
        {
            StatClock clock(stat(&GpuSearchStats::peaks_launch_ms));
            launch_ranked_peaks(maps, peak_items_, peaks, peak_scratch_, q, staged_.peaks.stage(peak_items_, q));
        }
        if (copy_peaks_)
            CORRTRACK_CUDA(cudaMemcpyAsync(host_peaks, peaks, items.size() * sizeof(RankedPeak), cudaMemcpyDeviceToHost,
                                           as_cuda(q)));
        if (host_maps)
            CORRTRACK_CUDA(
                cudaMemcpyAsync(host_maps, maps, floats * sizeof(float), cudaMemcpyDeviceToHost, as_cuda(q)));
    };
    if (graphs_ && (!timed || graph_timing_ok_) && runs_capturable()) {
        StatClock clock(stat(&GpuSearchStats::graph_ms));
        captured = true;
        const int launches = launches_;
        if (!ps.graph.launch(stream_, queue, counters_.graph)) {
            captured = false;
            launches_ = launches;
        }
    }
    if (!captured) queue(stream_);
    replayed_ = captured;
    copy_cue_inputs(ps, requests, atlas, maps);
    if (host_maps) ps.host_maps_valid = true;
    CORRTRACK_CUDA(cudaEventRecord(done, as_cuda(stream_)));
    // The one wait of a search: the policy's next step depends on these peaks.
    counters_.mark(GpuSearchStats::kWait);
    CORRTRACK_CUDA(cudaEventSynchronize(done));
    counters_.mark(GpuSearchStats::kAfterSearch);
    counters_.searches += 1;
    for (std::size_t k = 0; k < items.size(); ++k) hits[items[k].request] = host_peaks[k];
    rank_on_host(ps, requests, hits);
    if (!timed) return;
    float sample_ms = 0, correlate_ms = 0, peak_ms = 0;
    if (captured) {
        // Events recorded by a graph's nodes: if this driver cannot time them, timed searches
        // go uncaptured from now on (this search's split is lost).
        const bool ok = cudaEventElapsedTime(&sample_ms, begin_, sampled_) == cudaSuccess &&
                        cudaEventElapsedTime(&correlate_ms, sampled_, correlated_) == cudaSuccess &&
                        cudaEventElapsedTime(&peak_ms, correlated_, peaked_) == cudaSuccess;
        if (!ok) {
            cudaGetLastError();
            graph_timing_ok_ = false;
            return;
        }
    } else {
        CORRTRACK_CUDA(cudaEventElapsedTime(&sample_ms, begin_, sampled_));
        CORRTRACK_CUDA(cudaEventElapsedTime(&correlate_ms, sampled_, correlated_));
        CORRTRACK_CUDA(cudaEventElapsedTime(&peak_ms, correlated_, peaked_));
    }
    counters_.gpu_ms += sample_ms + correlate_ms + peak_ms;
    counters_.gpu_sample_ms += sample_ms;
    counters_.gpu_correlate_ms += correlate_ms;
    counters_.gpu_peaks_ms += peak_ms;
    if (!times) return;
    times->upload_ms += sample_ms;
    times->correlate_ms += correlate_ms;
    times->peak_ms += peak_ms;
}

void GpuSearch::sample(const std::vector<SearchRequest>& patches) {
    counters_.mark(GpuSearchStats::kSample);
    if (samples_pending_) {  // the last sample() was never read: its staged items may be in use
        CORRTRACK_CUDA(cudaEventSynchronize(samples_ready_));
        samples_pending_ = false;
    }
    std::size_t total = 0;
    sample_offsets_.clear();
    sample_items_.clear();
    for (const SearchRequest& r : patches) {
        const LevelSample ls = level_sample(r.ox, r.oy, r.scale);
        sample_items_.push_back({ls.ox, ls.oy, ls.scale, r.patch.width, r.patch.height, ls.level, total,
                                 static_cast<std::size_t>(r.patch.width)});
        sample_offsets_.push_back(total);
        total += static_cast<std::size_t>(r.patch.width) * r.patch.height;
    }
    if (total == 0) return;
    if (prepare_levels(sample_items_, {}) > 0) {
        // Rows the search did not upload (a patch outside every searched window): the host
        // frame may be reused once the caller returns, so this copy is waited for (rare).
        CORRTRACK_CUDA(cudaEventRecord(uploaded_, as_cuda(stream_)));
        CORRTRACK_CUDA(cudaEventSynchronize(uploaded_));
        ++counters_.late_uploads;
    }
    std::uint8_t* host = grow_traced(host_samples_, total, "template samples (mapped pinned)");
    const SampleItem* staged = staged_.template_samples.stage(sample_items_, stream_);
    if (copy_peaks_) {
        std::uint8_t* dev = samples_.grow(total);
        launch_sample_patches(pyramid_.levels(), sample_items_, dev, stream_, staged);
        CORRTRACK_CUDA(cudaMemcpyAsync(host, dev, total, cudaMemcpyDeviceToHost, as_cuda(stream_)));
    } else {
        launch_sample_patches(pyramid_.levels(), sample_items_, host_samples_.device(), stream_, staged);
    }
    CORRTRACK_CUDA(cudaEventRecord(samples_ready_, as_cuda(stream_)));
    samples_pending_ = true;
    counters_.mark(GpuSearchStats::kNone);
}

}  // namespace gpu_search

std::unique_ptr<SearchBackend> make_gpu_search(const std::string& kernel, const GpuContext& gpu, std::string* error) {
    std::string why;
    auto probe = make_correlator(kernel, &why);
    if (!probe) {
        if (error) *error = why;
        return nullptr;
    }
    if (!gpu.available()) {
        if (error) *error = "kernel " + kernel + " needs a CUDA GPU and this tracker's GPU context has none";
        return nullptr;
    }
    return std::make_unique<gpu_search::GpuSearch>(kernel, std::move(probe), gpu.compute());
}

}  // namespace corrtrack
