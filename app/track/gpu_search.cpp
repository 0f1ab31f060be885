// The GPU search backend, on its GPU context's compute stream: per search, the rows of a host
// frame and the regions of the pyramid levels that the requests read (not the whole frame),
// every patch sampled into one atlas (a target's scales side by side in one row, rows grouped
// by template size, each group's patches in slots of its largest patch), one batched
// correlation launch per group where the kernel has a batched form (else one launch per row),
// and the motion-penalised peaks of all maps in one launch that writes them straight into
// mapped pinned memory (PinnedBuffer with cudaHostAllocMapped): the one wait of a search is an
// event after that launch. With many targets the launches read their items from device
// memory, so a search is O(template sizes) launches however many targets. The maps come to the
// host only when map() asks for them.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "app/track/backends.h"
#include "app/track/device_pyramid.h"
#include "app/track/gpu_search_stats.h"
#include "app/util/stats.h"
#include "corrtrack/cuda_util.h"

namespace corrtrack {
namespace {

// Host memory kernels write straight into (mapped pinned memory: no copy call, no copy on the
// stream), grown like every buffer here.
constexpr unsigned kMapped = cudaHostAllocMapped;

// A/B switches for measuring what each change saves (read once per backend; unset = the fast
// path): CORRTRACK_GPU_EAGER_MAPS=1 copies every map to the host after each search as before,
// CORRTRACK_GPU_COPY_PEAKS=1 copies peaks and template patches with cudaMemcpyAsync instead of
// writing mapped memory, CORRTRACK_GPU_FULL_UPLOAD=1 uploads and halves whole frames.
bool env_on(const char* name) {
    const char* v = std::getenv(name);
    return v && *v && std::string(v) != "0";
}

class GpuSearch final : public SearchBackend {
public:
    // `stream`: the GPU context's compute stream (the context outlives this backend).
    GpuSearch(std::string kernel, std::unique_ptr<Correlator> probe, Stream stream)
        : kernel_(std::move(kernel)), probe_(std::move(probe)), stream_(stream) {
        for (cudaEvent_t* e : {&begin_, &sampled_, &correlated_, &peaked_}) CORRTRACK_CUDA(cudaEventCreate(e));
        CORRTRACK_CUDA(cudaEventCreateWithFlags(&samples_ready_, cudaEventDisableTiming));
        CORRTRACK_CUDA(cudaEventCreateWithFlags(&uploaded_, cudaEventDisableTiming));
        CORRTRACK_CUDA(cudaEventCreateWithFlags(&searched_, cudaEventDisableTiming));
        eager_maps_ = env_on("CORRTRACK_GPU_EAGER_MAPS");
        copy_peaks_ = env_on("CORRTRACK_GPU_COPY_PEAKS");
        full_upload_ = env_on("CORRTRACK_GPU_FULL_UPLOAD");
        stats_ = env_on("CORRTRACK_GPU_SEARCH_STATS");
    }
    ~GpuSearch() override {
        cudaStreamSynchronize(as_cuda(stream_));  // queued copies still target our buffers
        if (stats_) counters_.print(stderr);
        cudaFree(frame_);
        for (cudaEvent_t e : {begin_, sampled_, correlated_, peaked_, samples_ready_, uploaded_, searched_})
            cudaEventDestroy(e);
    }

    bool on_gpu() const override { return true; }
    Stream stream() const override { return stream_; }
    std::string kernel_summary() const override { return probe_->info().summary; }
    int launches() const override { return launches_; }
    long positions() const override { return positions_; }
    void set_keep_maps(bool host, bool device) override {
        keep_maps_ = host;
        keep_device_maps_ = device;
    }

    // A device frame is used in place. A host frame is not copied here: each search uploads
    // the rows its patches read (and the rows the template patch sampled after it will read),
    // so a small target in a large frame costs a band of rows, not the frame.
    double begin_frame(ImageView f) override {
        const auto t0 = std::chrono::steady_clock::now();
        counters_.drop_phase();  // the time since the last call belongs to no frame
        counters_.mark(GpuSearchStats::kBeforeSearch);
        ++counters_.frames;
        if (f.space == MemorySpace::kDevice) {
            pyramid_.reset(f, nullptr, 0);
            return 0;
        }
        if (f.width > frame_capacity_.width || f.height > frame_capacity_.height) {
            cudaFree(frame_);
            frame_ = nullptr;
            frame_capacity_ = {std::max(f.width, frame_capacity_.width), std::max(f.height, frame_capacity_.height)};
            CORRTRACK_CUDA(cudaMallocPitch(reinterpret_cast<void**>(&frame_), &frame_pitch_, frame_capacity_.width,
                                           frame_capacity_.height));
        }
        ++counters_.host_frames;
        if (stats_) {
            // Is the frame pinned? A pageable one makes every row upload a synchronous copy.
            cudaPointerAttributes a{};
            if (cudaPointerGetAttributes(&a, f.data) != cudaSuccess) cudaGetLastError();
            if (a.type != cudaMemoryTypeHost) ++counters_.pageable_frames;
        }
        counters_.frame_rows += f.height;
        pyramid_.reset(f, frame_, frame_pitch_);
        if (full_upload_) count_uploads(pyramid_.upload_frame(stream_));
        return ms_since(t0);
    }

    void search(int pass, const std::vector<SearchRequest>& requests, std::vector<RankedPeak>& hits,
                StageTimes* times) override {
        // A request with a gradient channel gets a twin: the same window, its gradient
        // template. Both are correlated in the same batch; the twin's map is blended into the
        // request's before the peaks are taken.
        twins_.clear();
        for (std::size_t i = 0; i < requests.size(); ++i)
            if (requests[i].gradient_weight > 0 && requests[i].templ.gradient.data) twins_.push_back({i, 0});
        if (twins_.empty()) return search_all(pass, requests, hits, times);
        with_twins_ = requests;
        for (Twin& t : twins_) {
            SearchRequest r = requests[t.request];
            r.templ = {r.templ.key ^ kGradientKey, r.templ.version, r.templ.gradient, {}};
            r.gradient_weight = 0;
            t.twin = with_twins_.size();
            with_twins_.push_back(r);
        }
        search_all(pass, with_twins_, hits, times);
        hits.resize(requests.size());
    }

    MapView map(int pass, std::size_t i) const override {
        const Pass& ps = passes_[pass];
        if (!keep_maps_ || i >= ps.items.size()) return {};
        if (!ps.host_maps_valid) {
            // The first map asked for since this pass's search: all of its maps in one copy
            // and a wait (only heatmaps and tests ask; the device maps stay until the same
            // pass of the next frame).
            ps.host_maps.ensure(ps.floats);
            CORRTRACK_CUDA(cudaMemcpyAsync(ps.host_maps.get(), ps.maps.get(), ps.floats * sizeof(float),
                                           cudaMemcpyDeviceToHost, as_cuda(stream_)));
            CORRTRACK_CUDA(cudaStreamSynchronize(as_cuda(stream_)));
            ps.host_maps_valid = true;
        }
        const Item& it = ps.items[ps.slot_of_request[i]];
        return {ps.host_maps.get() + it.map_offset, it.out.width, it.out.height,
                static_cast<std::size_t>(it.map_pitch)};
    }
    MapView device_map(int pass, std::size_t i) const override {
        const Pass& ps = passes_[pass];
        if (!keep_device_maps_ || i >= ps.items.size()) return {};
        const Item& it = ps.items[ps.slot_of_request[i]];
        return {ps.maps.get() + it.map_offset, it.out.width, it.out.height, static_cast<std::size_t>(it.map_pitch),
                MemorySpace::kDevice};
    }

    void sample(const std::vector<SearchRequest>& patches) override;
    const std::uint8_t* sampled(std::size_t i) override {
        if (samples_pending_) {
            CORRTRACK_CUDA(cudaEventSynchronize(samples_ready_));
            samples_pending_ = false;
        }
        return host_samples_.get() + sample_offsets_.at(i);
    }

    void forget(std::uint64_t key) override {
        singles_.erase(key);
        singles_.erase(key ^ kGradientKey);
    }

private:
    struct Item {
        std::size_t request = 0;  // index in the caller's list
        int lane = 0, lanes = 1;  // its place in its atlas row, and the row's patches
        int row = 0;              // first atlas row
        std::size_t map_offset = 0;
        Size out;           // its map (the request's patch less the template, plus one)
        Size slot;          // the patch's slot in the atlas: its group's largest patch
        Size slot_out;      // the map of the whole slot (out is its top-left part)
        int map_pitch = 0;  // floats per map row: its atlas row's map is lanes slots wide
    };
    // Per template size: a correlator holding the stacked templates of a batch.
    struct Group {
        std::unique_ptr<Correlator> corr;
        std::vector<std::pair<std::uint64_t, std::uint64_t>> stacked;  // (key, version) last set
        std::vector<std::uint8_t> pixels;
    };
    struct Single {
        std::uint64_t version = 0;
        std::unique_ptr<Correlator> corr;
    };

    struct Twin {
        std::size_t request = 0, twin = 0;  // indices in with_twins_
    };
    void search_all(int pass, const std::vector<SearchRequest>& requests, std::vector<RankedPeak>& hits,
                    StageTimes* times);
    // pyramid_.prepare() with the A/B switch and the stats; returns the rows it uploaded.
    long prepare_levels(const std::vector<SampleItem>& items, const std::vector<Size>& margins) {
        StatClock clock(stat(&GpuSearchStats::prepare_ms));
        const DevicePyramid::Uploads u = pyramid_.prepare(items, margins, full_upload_, stream_);
        count_uploads(u);
        return u.rows;
    }
    void count_uploads(const DevicePyramid::Uploads& u) {
        counters_.uploaded_rows += u.rows;
        counters_.upload_ms += u.ms;
        counters_.halvings += u.halvings;
    }
    void lay_out(const std::vector<SearchRequest>& requests, std::vector<Item>& items) const;
    static std::size_t group_end(const std::vector<SearchRequest>& requests, const std::vector<Item>& items,
                                 std::size_t first);
    void correlate(const std::vector<SearchRequest>& requests, const std::vector<Item>& items, ImageView atlas,
                   float* maps);
    Correlator& single(const TemplateRef& t);

    std::string kernel_;
    std::unique_ptr<Correlator> probe_;
    Stream stream_ = nullptr;  // the GPU context's compute stream (not ours)
    cudaEvent_t begin_ = nullptr, sampled_ = nullptr, correlated_ = nullptr, peaked_ = nullptr;
    cudaEvent_t samples_ready_ = nullptr;
    cudaEvent_t searched_ = nullptr;  // the end of an untimed search
    std::uint8_t* frame_ = nullptr;   // device copy of host frames
    std::size_t frame_pitch_ = 0;
    Size frame_capacity_;
    DevicePyramid pyramid_;  // level 0: the device frame, or frame_ for a host frame
    cudaEvent_t uploaded_ = nullptr;
    // CORRTRACK_GPU_SEARCH_STATS=1: counted always (cheap), timed only when on.
    GpuSearchStats counters_;
    double* stat(double GpuSearchStats::*field) { return stats_ ? &(counters_.*field) : nullptr; }
    bool eager_maps_ = false, copy_peaks_ = false, full_upload_ = false, stats_ = false;
    DeviceBuffer<std::uint8_t> atlas_;
    DeviceBuffer<RankedPeak> peaks_;
    PinnedBuffer<RankedPeak> host_peaks_{kMapped};
    // Each pass (tracking, re-detection) keeps its maps until the same pass of the next frame.
    struct Pass {
        std::vector<Item> items;
        std::vector<std::size_t> slot_of_request;
        DeviceBuffer<float> maps;
        std::size_t floats = 0;
        mutable PinnedBuffer<float> host_maps{kMapped};
        mutable bool host_maps_valid = false;
    };
    Pass passes_[2];
    DeviceBuffer<std::uint8_t> samples_;
    PinnedBuffer<std::uint8_t> host_samples_{kMapped};
    std::vector<std::size_t> sample_offsets_;
    bool samples_pending_ = false;
    std::map<std::tuple<int, int, int>, Group> groups_;  // by template size and patches per row
    std::unordered_map<std::uint64_t, Single> singles_;

    // Reused per search.
    std::vector<Twin> twins_;
    std::vector<SearchRequest> with_twins_;
    std::vector<GradientItem> gradient_items_;
    std::vector<BlendItem> blend_items_;
    std::vector<SampleItem> sample_items_;
    std::vector<PeakItem> peak_items_;
    std::vector<Size> sample_margins_;
    // The items of launches that take more than kMaxItemsPerLaunch.
    struct Staged {
        StagedItems<SampleItem> samples, template_samples;
        StagedItems<GradientItem> gradients;
        StagedItems<BlendItem> blends;
        StagedItems<PeakItem> peaks;
    } staged_;
    bool keep_maps_ = true, keep_device_maps_ = false;
    int launches_ = 0;
    long positions_ = 0;
};

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

void GpuSearch::search_all(int pass, const std::vector<SearchRequest>& requests, std::vector<RankedPeak>& hits,
                           StageTimes* times) {
    counters_.mark(GpuSearchStats::kEnqueue);
    Pass& ps = passes_[pass];
    std::vector<Item>& items = ps.items;
    hits.resize(requests.size());
    items.clear();
    launches_ = 0;
    positions_ = 0;
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
        positions_ += it.out.area();
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
    std::uint8_t* atlas = atlas_.ensure(atlas_pitch * rows);
    float* maps = ps.maps.ensure(floats);
    ps.floats = floats;
    ps.host_maps_valid = false;
    RankedPeak* host_peaks = host_peaks_.ensure(items.size());
    RankedPeak* peaks = copy_peaks_ ? peaks_.ensure(items.size()) : host_peaks_.device();
    float* host_maps = keep_maps_ && eager_maps_ ? ps.host_maps.ensure(floats) : nullptr;

    // Stage events only where a split is wanted: each timed record costs about a us of host time.
    const bool timed = times || stats_;
    cudaEvent_t done = timed ? peaked_ : searched_;
    auto record = [&](cudaEvent_t e) {
        StatClock clock(stat(&GpuSearchStats::event_ms));
        if (timed) CORRTRACK_CUDA(cudaEventRecord(e, as_cuda(stream_)));
    };
    record(begin_);
    prepare_levels(sample_items_, sample_margins_);
    {
        StatClock clock(stat(&GpuSearchStats::sample_launch_ms));
        launch_sample_patches(pyramid_.levels(), sample_items_, atlas, stream_,
                              staged_.samples.stage(sample_items_, stream_));
        launch_gradient_patches(atlas, gradient_items_, stream_, staged_.gradients.stage(gradient_items_, stream_));
    }
    record(sampled_);
    {
        StatClock clock(stat(&GpuSearchStats::correlate_ms));
        correlate(requests, items, {atlas, width, rows, atlas_pitch, MemorySpace::kDevice}, maps);
    }
    launch_blend_maps(maps, blend_items_, stream_, staged_.blends.stage(blend_items_, stream_));
    record(correlated_);
    {
        StatClock clock(stat(&GpuSearchStats::peaks_launch_ms));
        launch_ranked_peaks(maps, peak_items_, peaks, stream_, staged_.peaks.stage(peak_items_, stream_));
    }
    if (copy_peaks_)
        CORRTRACK_CUDA(cudaMemcpyAsync(host_peaks, peaks, items.size() * sizeof(RankedPeak), cudaMemcpyDeviceToHost,
                                       as_cuda(stream_)));
    if (host_maps) {
        CORRTRACK_CUDA(
            cudaMemcpyAsync(host_maps, maps, floats * sizeof(float), cudaMemcpyDeviceToHost, as_cuda(stream_)));
        ps.host_maps_valid = true;
    }
    CORRTRACK_CUDA(cudaEventRecord(done, as_cuda(stream_)));
    // The one wait of a search: the policy's next step depends on these peaks.
    counters_.mark(GpuSearchStats::kWait);
    CORRTRACK_CUDA(cudaEventSynchronize(done));
    counters_.mark(GpuSearchStats::kAfterSearch);
    counters_.searches += 1;
    for (std::size_t k = 0; k < items.size(); ++k) hits[items[k].request] = host_peaks[k];
    if (!timed) return;
    float sample_ms = 0, correlate_ms = 0, peak_ms = 0;
    CORRTRACK_CUDA(cudaEventElapsedTime(&sample_ms, begin_, sampled_));
    CORRTRACK_CUDA(cudaEventElapsedTime(&correlate_ms, sampled_, correlated_));
    CORRTRACK_CUDA(cudaEventElapsedTime(&peak_ms, correlated_, peaked_));
    counters_.gpu_ms += sample_ms + correlate_ms + peak_ms;
    counters_.gpu_sample_ms += sample_ms;
    counters_.gpu_correlate_ms += correlate_ms;
    counters_.gpu_peaks_ms += peak_ms;
    if (!times) return;
    times->upload_ms += sample_ms;
    times->correlate_ms += correlate_ms;
    times->peak_ms += peak_ms;
}

// Atlas order: by template size, patches per row, request: each (size, patches per row)
// group is consecutive, one batched launch. A run of requests with one template (a target's
// scales) shares an atlas row side by side, so a batch stacks that template once, not once per
// scale (a third of the bytes to restack, upload and pack; wider maps fill the tensor-core
// kernel's 128-column tiles better); not with gradient twins, whose maps blend slot by slot.
// A group's patches lie in slots of its largest patch (targets' windows differ with their
// speed) and are sampled over the whole slot; positions past a patch's own map read that
// extra and are never looked at: the peaks and map() see its own map only.
void GpuSearch::lay_out(const std::vector<SearchRequest>& requests, std::vector<Item>& items) const {
    const bool share_rows = twins_.empty();
    for (std::size_t i = 0; i < requests.size();) {
        const TemplateRef& t = requests[i].templ;
        std::size_t j = i + 1;
        while (share_rows && j < requests.size() && requests[j].templ.key == t.key &&
               requests[j].templ.version == t.version && requests[j].templ.image.size() == t.image.size())
            ++j;
        for (std::size_t k = i; k < j; ++k) {
            Item it;
            it.request = k;
            it.lane = static_cast<int>(k - i);
            it.lanes = static_cast<int>(j - i);
            items.push_back(it);
        }
        i = j;
    }
    std::stable_sort(items.begin(), items.end(), [&](const Item& a, const Item& b) {
        const Size ta = requests[a.request].templ.image.size(), tb = requests[b.request].templ.image.size();
        return std::make_tuple(ta.width, ta.height, a.lanes) < std::make_tuple(tb.width, tb.height, b.lanes);
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

// The end of the group that starts at items[first]: one template size, one row width in lanes.
std::size_t GpuSearch::group_end(const std::vector<SearchRequest>& requests, const std::vector<Item>& items,
                                 std::size_t first) {
    const Size ts = requests[items[first].request].templ.image.size();
    std::size_t last = first + 1;
    while (last < items.size() && requests[items[last].request].templ.image.size() == ts &&
           items[last].lanes == items[first].lanes)
        ++last;
    return last;
}

void GpuSearch::correlate(const std::vector<SearchRequest>& requests, const std::vector<Item>& items, ImageView atlas,
                          float* maps) {
    for (std::size_t first = 0; first < items.size();) {
        const Item& head = items[first];
        const Size ts = requests[head.request].templ.image.size();
        const std::size_t last = group_end(requests, items, first);
        const int lanes = head.lanes;
        const int count = static_cast<int>((last - first) / lanes);  // atlas rows: one template each
        const Size row{lanes * head.slot.width, head.slot.height};   // every row of the group has it
        const NccProblem batch{atlas.size(), ts, Rect{0, head.row, row.width, row.height}, count, row.height};
        Group& grp = groups_[{ts.width, ts.height, lanes}];
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
            {
                StatClock clock(stat(&GpuSearchStats::run_ms));
                grp.corr->run(atlas, batch,
                              {maps + head.map_offset, head.map_pitch, head.slot_out.height * count,
                               static_cast<std::size_t>(head.map_pitch), MemorySpace::kDevice},
                              stream_);
            }
            counters_.run_calls += 1;
            ++launches_;
        } else {
            for (std::size_t k = first; k < last; k += lanes) {  // one run per atlas row
                const Item& it = items[k];
                const SearchRequest& r = requests[it.request];
                const NccProblem p{atlas.size(), ts, Rect{0, it.row, row.width, row.height}};
                Correlator& corr = single(r.templ);
                StatClock clock(stat(&GpuSearchStats::run_ms));
                std::string why;
                if (!corr.supports(p, &why))
                    throw std::runtime_error("kernel " + kernel_ + " cannot run this search: " + why);
                corr.run(atlas, p,
                         {maps + it.map_offset, it.map_pitch, it.slot_out.height,
                          static_cast<std::size_t>(it.map_pitch), MemorySpace::kDevice},
                         stream_);
                counters_.run_calls += 1;
                ++launches_;
            }
        }
        first = last;
    }
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
    std::uint8_t* host = host_samples_.ensure(total);
    const SampleItem* staged = staged_.template_samples.stage(sample_items_, stream_);
    if (copy_peaks_) {
        std::uint8_t* dev = samples_.ensure(total);
        launch_sample_patches(pyramid_.levels(), sample_items_, dev, stream_, staged);
        CORRTRACK_CUDA(cudaMemcpyAsync(host, dev, total, cudaMemcpyDeviceToHost, as_cuda(stream_)));
    } else {
        launch_sample_patches(pyramid_.levels(), sample_items_, host_samples_.device(), stream_, staged);
    }
    CORRTRACK_CUDA(cudaEventRecord(samples_ready_, as_cuda(stream_)));
    samples_pending_ = true;
    counters_.mark(GpuSearchStats::kNone);
}

}  // namespace

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
    return std::make_unique<GpuSearch>(kernel, std::move(probe), gpu.compute());
}

}  // namespace corrtrack
