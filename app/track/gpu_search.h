// The GPU search backend's class, shared by its two sources: gpu_search.cpp (a frame, a
// search, the template patches) and gpu_search_runs.cpp (the atlas layout and the correlator
// runs). Private to app/track: everyone else makes one with make_gpu_search (backends.h).
//
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
// A pass whose runs are all capturable replays its search as one CUDA graph (search_graph.h).
#pragma once

#include <cuda_runtime.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "app/track/backends.h"
#include "app/track/device_pyramid.h"
#include "app/track/gpu_search_stats.h"
#include "app/track/search_cues.h"
#include "app/track/search_graph.h"
#include "app/util/stats.h"
#include "corrtrack/cuda_util.h"
#include "corrtrack/start_trace.h"

namespace corrtrack {
namespace gpu_search {

// Host memory kernels write straight into (mapped pinned memory: no copy call, no copy on the
// stream), grown like every buffer here.
constexpr unsigned kMapped = cudaHostAllocMapped;

// A/B switches for measuring what each change saves (read once per backend; unset = the fast
// path): CORRTRACK_GPU_EAGER_MAPS=1 copies every map to the host after each search as before,
// CORRTRACK_GPU_COPY_PEAKS=1 copies peaks and template patches with cudaMemcpyAsync instead of
// writing mapped memory, CORRTRACK_GPU_FULL_UPLOAD=1 uploads and halves whole frames.
inline bool env_on(const char* name) {
    const char* v = std::getenv(name);
    return v && *v && std::string(v) != "0";
}

// buffer.grow(count), traced when it allocates (CORRTRACK_TRACE_START=1): the start's
// allocations, and any growth after.
template <typename Buffer>
auto grow_traced(Buffer& buffer, std::size_t count, const char* what) {
    if (count <= buffer.capacity()) return buffer.get();
    StartTraceScope trace("gpu search buffer grows", std::string(what) + ": " + std::to_string(buffer.capacity()) +
                                                         " -> " +
                                                         std::to_string(grown_capacity(count, buffer.capacity())));
    return buffer.grow(count);
}

// Searches replayed as CUDA graphs unless CORRTRACK_GPU_GRAPHS=1/0 says otherwise: off until
// a bench on the H200 shows them faster (notes/PERF.md).
constexpr bool kGraphsByDefault = false;

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
        const char* graphs = std::getenv("CORRTRACK_GPU_GRAPHS");
        graphs_ = graphs && *graphs ? std::string(graphs) != "0" : kGraphsByDefault;
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
    bool replayed() const override { return replayed_; }
    long positions() const override { return positions_; }
    void set_keep_maps(bool host, bool device) override {
        keep_maps_ = host;
        keep_device_maps_ = device;
    }

    // A device frame is used in place. A host frame is not copied here: each search uploads
    // the rows its patches read (and the rows the template patch sampled after it will read),
    // so a small target in a large frame costs a band of rows, not the frame.
    double begin_frame(const FrameView& fv) override {
        const ImageView f = fv.luma;
        const auto t0 = std::chrono::steady_clock::now();
        counters_.drop_phase();  // the time since the last call belongs to no frame
        counters_.mark(GpuSearchStats::kBeforeSearch);
        ++counters_.frames;
        view_ = fv;  // the host chroma of the colour cue, where the frame has it
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
        // Each look-alike of a request: the same window against the distractor template, in
        // the same batch (its template size); distractor-major, so a target's scales share
        // atlas rows as the template's do.
        lookalikes_.clear();
        for (int d = 0; d < SearchRequest::kMaxDistractors; ++d)
            for (std::size_t i = 0; i < requests.size(); ++i)
                if (lookalikes_apply(requests[i]) && d < requests[i].distractor_count) lookalikes_.push_back({i, d, 0});
        callers_ = requests.size();
        extras_first_ = requests.size() + twins_.size();
        if (twins_.empty() && lookalikes_.empty()) return search_all(pass, requests, hits, times);
        with_twins_ = requests;
        for (Twin& t : twins_) {
            SearchRequest r = requests[t.request];
            r.templ = {r.templ.key ^ kGradientKey, r.templ.version, r.templ.gradient, {}};
            r.gradient_weight = 0;
            t.twin = with_twins_.size();
            with_twins_.push_back(r);
        }
        for (LookalikeItem& l : lookalikes_) {
            SearchRequest r;
            const SearchRequest& of = requests[l.request];
            r.templ = of.distractors[l.distractor];
            r.ox = of.ox;
            r.oy = of.oy;
            r.scale = of.scale;
            r.patch = of.patch;
            l.item = with_twins_.size();
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
            ps.host_maps.grow(ps.floats);
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
        Size out;            // its map (the request's patch less the template, plus one)
        Size slot;           // the patch's slot in the atlas: its group's largest patch
        Size slot_out;       // the map of the whole slot (out is its top-left part)
        int map_pitch = 0;   // floats per map row: its atlas row's map is lanes slots wide
        int size_class = 0;  // its row's patches in half octaves of width and height
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
    struct LookalikeItem {
        std::size_t request = 0;  // the caller's request
        int distractor = 0;       // its distractor
        std::size_t item = 0;     // index in with_twins_
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
    // The correlator runs of a search: bind_runs sets their templates, queue_runs launches them.
    struct Run {
        Correlator* corr = nullptr;
        NccProblem problem;
        MapView out;
    };
    void bind_runs(const std::vector<SearchRequest>& requests, const std::vector<Item>& items, ImageView atlas,
                   float* maps);
    bool runs_capturable();
    void queue_runs(ImageView atlas, Stream q);
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
    bool graphs_ = false;          // CORRTRACK_GPU_GRAPHS=1/0 over kGraphsByDefault
    bool graph_timing_ok_ = true;  // false once graph-recorded stage events failed to time
    DeviceBuffer<std::uint8_t> atlas_;
    DeviceBuffer<RankedPeak> peaks_;
    PeakScratch peak_scratch_;
    PinnedBuffer<RankedPeak> host_peaks_{kMapped};
    // Each pass (tracking, re-detection) keeps its maps until the same pass of the next frame.
    struct Pass {
        std::vector<Item> items;
        std::vector<std::size_t> slot_of_request;
        DeviceBuffer<float> maps;
        std::size_t floats = 0;
        mutable PinnedBuffer<float> host_maps{kMapped};
        mutable bool host_maps_valid = false;
        SearchGraph graph;  // this pass's searches, replayed
    };
    Pass passes_[2];
    DeviceBuffer<std::uint8_t> samples_;
    PinnedBuffer<std::uint8_t> host_samples_{kMapped};
    std::vector<std::size_t> sample_offsets_;
    bool samples_pending_ = false;
    std::map<std::tuple<int, int, int, int>, Group> groups_;  // by template size, patches per row, size class
    std::unordered_map<std::uint64_t, Single> singles_;

    // Reused per search.
    std::vector<Run> runs_;
    std::vector<Twin> twins_;
    std::vector<LookalikeItem> lookalikes_;
    std::vector<SearchRequest> with_twins_;
    std::size_t callers_ = 0;       // the caller's requests (the first of with_twins_)
    std::size_t extras_first_ = 0;  // the first look-alike item (positions() leaves them out)
    FrameView view_;                // the current frame
    // The host side of the cues: the requests ranked there, their copied maps and patches at
    // their device offsets (pinned, grown geometrically), packed copies and the scratch.
    std::vector<std::size_t> host_ranked_;
    std::vector<std::pair<std::size_t, std::size_t>> ranges_;
    std::size_t cue_atlas_pitch_ = 0;
    PinnedBuffer<float> cue_maps_;
    PinnedBuffer<std::uint8_t> cue_atlas_;
    std::vector<float> cue_map_, cue_lookalike_[SearchRequest::kMaxDistractors];
    std::vector<std::uint8_t> cue_patch_;
    CueScratch cue_scratch_;
    // The shared host cues (search_cues.h) for the requests that need them: copy_cue_inputs
    // queues the copies of their maps and patches (before the search's one wait),
    // rank_on_host overwrites their hits after it.
    void copy_cue_inputs(const Pass& ps, const std::vector<SearchRequest>& requests, const std::uint8_t* atlas,
                         const float* maps);
    void rank_on_host(const Pass& ps, const std::vector<SearchRequest>& requests, std::vector<RankedPeak>& hits);
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
    bool replayed_ = false;
};

}  // namespace gpu_search
}  // namespace corrtrack
