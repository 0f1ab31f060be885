// The GPU search backend: one stream; per search, the frame's pyramid levels that the
// requests need, every patch sampled into one atlas (grouped by template size), one batched
// correlation launch per template size where the kernel has a batched form (else one launch
// per patch), the motion-penalised peaks of all maps in one launch, and one copy back: the
// one wait of a search is an event on those few bytes.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "app/track/backends.h"
#include "cuda/common.cuh"

namespace corrtrack {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Pinned host memory that only grows (copies from the device land here asynchronously).
template <typename T>
struct PinnedArray {
    T* ptr = nullptr;
    std::size_t capacity = 0;
    ~PinnedArray() { cudaFreeHost(ptr); }
    T* ensure(std::size_t count) {
        if (count > capacity) {
            cudaFreeHost(ptr);
            ptr = nullptr;
            CORRTRACK_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&ptr), count * sizeof(T), cudaHostAllocDefault));
            capacity = count;
        }
        return ptr;
    }
};

class GpuSearch final : public SearchBackend {
public:
    GpuSearch(std::string kernel, std::unique_ptr<Correlator> probe)
        : kernel_(std::move(kernel)), probe_(std::move(probe)) {
        CORRTRACK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
        for (cudaEvent_t* e : {&begin_, &sampled_, &correlated_, &peaked_}) CORRTRACK_CUDA(cudaEventCreate(e));
        CORRTRACK_CUDA(cudaEventCreateWithFlags(&samples_ready_, cudaEventDisableTiming));
    }
    ~GpuSearch() override {
        if (stream_) cudaStreamSynchronize(stream_);  // queued copies still target our buffers
        cudaFree(frame_);
        for (cudaEvent_t e : {begin_, sampled_, correlated_, peaked_, samples_ready_}) cudaEventDestroy(e);
        cudaStreamDestroy(stream_);
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

    double begin_frame(ImageView f) override {
        const auto t0 = std::chrono::steady_clock::now();
        levels_built_ = 0;
        if (f.space == MemorySpace::kDevice) {
            levels_.level[0] = f;
            return 0;
        }
        if (f.width > frame_capacity_.width || f.height > frame_capacity_.height) {
            cudaFree(frame_);
            frame_ = nullptr;
            frame_capacity_ = {std::max(f.width, frame_capacity_.width), std::max(f.height, frame_capacity_.height)};
            CORRTRACK_CUDA(cudaMallocPitch(reinterpret_cast<void**>(&frame_), &frame_pitch_, frame_capacity_.width,
                                           frame_capacity_.height));
        }
        CORRTRACK_CUDA(cudaMemcpy2DAsync(frame_, frame_pitch_, f.data, f.pitch, f.width, f.height,
                                         cudaMemcpyHostToDevice, stream_));
        levels_.level[0] = {frame_, f.width, f.height, frame_pitch_, MemorySpace::kDevice};
        return ms_since(t0);
    }

    void search(int pass, const std::vector<SearchRequest>& requests, std::vector<RankedPeak>& hits,
                StageTimes* times) override;

    MapView map(int pass, std::size_t i) const override {
        const Pass& ps = passes_[pass];
        if (!keep_maps_ || i >= ps.items.size()) return {};
        const Item& it = ps.items[ps.slot_of_request[i]];
        return {ps.host_maps.ptr + it.map_offset, it.out.width, it.out.height, static_cast<std::size_t>(it.out.width)};
    }
    MapView device_map(int pass, std::size_t i) const override {
        const Pass& ps = passes_[pass];
        if (!keep_device_maps_ || i >= ps.items.size()) return {};
        const Item& it = ps.items[ps.slot_of_request[i]];
        return {ps.maps.get() + it.map_offset, it.out.width, it.out.height, static_cast<std::size_t>(it.out.width),
                MemorySpace::kDevice};
    }

    void sample(const std::vector<SearchRequest>& patches) override;
    const std::uint8_t* sampled(std::size_t i) override {
        if (samples_pending_) {
            CORRTRACK_CUDA(cudaEventSynchronize(samples_ready_));
            samples_pending_ = false;
        }
        return host_samples_.ptr + sample_offsets_.at(i);
    }

    void forget(std::uint64_t key) override { singles_.erase(key); }

private:
    struct Item {
        std::size_t request;     // index in the caller's list
        int row = 0;             // first atlas row
        std::size_t map_offset = 0;
        Size out;
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

    void build_levels(int deepest);
    void correlate(const std::vector<SearchRequest>& requests, const std::vector<Item>& items, ImageView atlas,
                   float* maps);
    Correlator& single(const TemplateRef& t);

    std::string kernel_;
    std::unique_ptr<Correlator> probe_;
    cudaStream_t stream_ = nullptr;
    cudaEvent_t begin_ = nullptr, sampled_ = nullptr, correlated_ = nullptr, peaked_ = nullptr;
    cudaEvent_t samples_ready_ = nullptr;
    std::uint8_t* frame_ = nullptr;  // device copy of host frames
    std::size_t frame_pitch_ = 0;
    Size frame_capacity_;
    DeviceLevels levels_;
    int levels_built_ = 0;
    DeviceBuffer<std::uint8_t> level_storage_[kMaxPyramidLevels];
    DeviceBuffer<std::uint8_t> atlas_;
    DeviceBuffer<RankedPeak> peaks_;
    PinnedArray<RankedPeak> host_peaks_;
    // Each pass (tracking, re-detection) keeps its maps until the same pass of the next frame.
    struct Pass {
        std::vector<Item> items;
        std::vector<std::size_t> slot_of_request;
        DeviceBuffer<float> maps;
        PinnedArray<float> host_maps;
    };
    Pass passes_[2];
    DeviceBuffer<std::uint8_t> samples_;
    PinnedArray<std::uint8_t> host_samples_;
    std::vector<std::size_t> sample_offsets_;
    bool samples_pending_ = false;
    std::map<std::pair<int, int>, Group> groups_;
    std::unordered_map<std::uint64_t, Single> singles_;

    // Reused per search.
    std::vector<SampleItem> sample_items_;
    std::vector<PeakItem> peak_items_;
    bool keep_maps_ = true, keep_device_maps_ = false;
    int launches_ = 0;
    long positions_ = 0;
};

void GpuSearch::build_levels(int deepest) {
    for (int k = levels_built_ + 1; k <= deepest; ++k) {
        const ImageView src = levels_.level[k - 1];
        const Size s = pyramid_level_size(src.size(), 1);
        const std::size_t pitch = (static_cast<std::size_t>(s.width) + 63) / 64 * 64;
        std::uint8_t* dst = level_storage_[k].ensure(pitch * s.height);
        launch_halve(src, dst, pitch, stream_);
        levels_.level[k] = {dst, s.width, s.height, pitch, MemorySpace::kDevice};
        levels_built_ = k;
    }
}

Correlator& GpuSearch::single(const TemplateRef& t) {
    Single& s = singles_[t.key];
    if (!s.corr) {
        std::string why;
        s.corr = make_correlator(kernel_, &why);
        if (!s.corr) throw std::runtime_error(why);
        s.version = t.version + 1;
    }
    if (s.version != t.version) {
        s.corr->set_template(t.image, stream_);
        s.version = t.version;
    }
    return *s.corr;
}

void GpuSearch::search(int pass, const std::vector<SearchRequest>& requests, std::vector<RankedPeak>& hits,
                       StageTimes* times) {
    Pass& ps = passes_[pass];
    std::vector<Item>& items = ps.items;
    hits.resize(requests.size());
    items.clear();
    launches_ = 0;
    positions_ = 0;
    if (requests.empty()) return;
    // Lay the patches out in the atlas grouped by template size, so that each group's patches
    // are consecutive: one batched launch per group. (Ties keep the request order.)
    for (std::size_t i = 0; i < requests.size(); ++i) items.push_back({i, 0, 0, {}});
    std::sort(items.begin(), items.end(), [&](const Item& a, const Item& b) {
        const Size ta = requests[a.request].templ.image.size(), tb = requests[b.request].templ.image.size();
        return std::make_tuple(ta.width, ta.height, a.request) < std::make_tuple(tb.width, tb.height, b.request);
    });
    int rows = 0, width = 0, deepest = 0;
    std::size_t floats = 0;
    sample_items_.clear();
    peak_items_.clear();
    ps.slot_of_request.resize(requests.size());
    for (std::size_t k = 0; k < items.size(); ++k) {
        Item& it = items[k];
        const SearchRequest& r = requests[it.request];
        ps.slot_of_request[it.request] = k;
        const Size ts = r.templ.image.size();
        it.row = rows;
        it.out = {r.patch.width - ts.width + 1, r.patch.height - ts.height + 1};
        it.map_offset = floats;
        rows += r.patch.height;
        width = std::max(width, r.patch.width);
        floats += static_cast<std::size_t>(it.out.width) * it.out.height;
        positions_ += it.out.area();
        const LevelSample ls = level_sample(r.ox, r.oy, r.scale);
        deepest = std::max(deepest, ls.level);
        sample_items_.push_back({ls.ox, ls.oy, ls.scale, r.patch.width, r.patch.height, ls.level, 0, 0});
        peak_items_.push_back({it.map_offset, it.out.width, it.out.height, r.penalty});
    }
    const std::size_t atlas_pitch = (static_cast<std::size_t>(width) + 63) / 64 * 64;
    for (std::size_t k = 0; k < items.size(); ++k) {
        sample_items_[k].dst_offset = static_cast<std::size_t>(items[k].row) * atlas_pitch;
        sample_items_[k].dst_pitch = atlas_pitch;
    }
    std::uint8_t* atlas = atlas_.ensure(atlas_pitch * rows);
    float* maps = ps.maps.ensure(floats);
    RankedPeak* peaks = peaks_.ensure(items.size());
    RankedPeak* host_peaks = host_peaks_.ensure(items.size());
    float* host_maps = keep_maps_ ? ps.host_maps.ensure(floats) : nullptr;

    CORRTRACK_CUDA(cudaEventRecord(begin_, stream_));
    build_levels(deepest);
    launch_sample_patches(levels_, sample_items_, atlas, stream_);
    CORRTRACK_CUDA(cudaEventRecord(sampled_, stream_));
    correlate(requests, items, {atlas, width, rows, atlas_pitch, MemorySpace::kDevice}, maps);
    CORRTRACK_CUDA(cudaEventRecord(correlated_, stream_));
    launch_ranked_peaks(maps, peak_items_, peaks, stream_);
    CORRTRACK_CUDA(cudaMemcpyAsync(host_peaks, peaks, items.size() * sizeof(RankedPeak), cudaMemcpyDeviceToHost,
                                   stream_));
    if (host_maps)
        CORRTRACK_CUDA(cudaMemcpyAsync(host_maps, maps, floats * sizeof(float), cudaMemcpyDeviceToHost, stream_));
    CORRTRACK_CUDA(cudaEventRecord(peaked_, stream_));
    // The one wait of a search: the policy's next step depends on these peaks.
    CORRTRACK_CUDA(cudaEventSynchronize(peaked_));
    for (std::size_t k = 0; k < items.size(); ++k) hits[items[k].request] = host_peaks[k];
    float sample_ms = 0, correlate_ms = 0, peak_ms = 0;
    CORRTRACK_CUDA(cudaEventElapsedTime(&sample_ms, begin_, sampled_));
    CORRTRACK_CUDA(cudaEventElapsedTime(&correlate_ms, sampled_, correlated_));
    CORRTRACK_CUDA(cudaEventElapsedTime(&peak_ms, correlated_, peaked_));
    times->upload_ms += sample_ms;
    times->correlate_ms += correlate_ms;
    times->peak_ms += peak_ms;
}

void GpuSearch::correlate(const std::vector<SearchRequest>& requests, const std::vector<Item>& items, ImageView atlas,
                          float* maps) {
    for (std::size_t first = 0; first < items.size();) {
        const Size ts = requests[items[first].request].templ.image.size();
        std::size_t last = first + 1;
        while (last < items.size() && requests[items[last].request].templ.image.size() == ts) ++last;
        const int count = static_cast<int>(last - first);
        const Item& head = items[first];
        const Size patch = requests[head.request].patch;
        bool same_patch = true;
        for (std::size_t k = first; k < last; ++k) same_patch = same_patch && requests[items[k].request].patch == patch;
        const NccProblem batch{atlas.size(), ts, Rect{0, head.row, patch.width, patch.height}, count, patch.height};
        Group& grp = groups_[{ts.width, ts.height}];
        if (!grp.corr) grp.corr = make_correlator(kernel_);
        if (count > 1 && same_patch && grp.corr && grp.corr->supports(batch, nullptr)) {
            // Restack only when the batch's templates or their pixels changed.
            bool changed = grp.stacked.size() != static_cast<std::size_t>(count);
            grp.stacked.resize(count);
            for (int k = 0; k < count; ++k) {
                const TemplateRef& t = requests[items[first + k].request].templ;
                const std::pair<std::uint64_t, std::uint64_t> id{t.key, t.version};
                if (grp.stacked[k] != id) changed = true;
                grp.stacked[k] = id;
            }
            if (changed) {
                const std::size_t tb = static_cast<std::size_t>(ts.width) * ts.height;
                grp.pixels.resize(tb * count);
                for (int k = 0; k < count; ++k) {
                    const ImageView& img = requests[items[first + k].request].templ.image;
                    for (int y = 0; y < ts.height; ++y)
                        std::copy(img.row(y), img.row(y) + ts.width, &grp.pixels[k * tb + y * ts.width]);
                }
                grp.corr->set_template({grp.pixels.data(), ts.width, ts.height * count,
                                        static_cast<std::size_t>(ts.width), MemorySpace::kHost},
                                       stream_);
            }
            grp.corr->run(atlas, batch,
                          {maps + head.map_offset, head.out.width, head.out.height * count,
                           static_cast<std::size_t>(head.out.width), MemorySpace::kDevice},
                          stream_);
            ++launches_;
        } else {
            for (std::size_t k = first; k < last; ++k) {
                const Item& it = items[k];
                const SearchRequest& r = requests[it.request];
                const NccProblem p{atlas.size(), ts, Rect{0, it.row, r.patch.width, r.patch.height}};
                Correlator& corr = single(r.templ);
                std::string why;
                if (!corr.supports(p, &why))
                    throw std::runtime_error("kernel " + kernel_ + " cannot run this search: " + why);
                corr.run(atlas, p,
                         {maps + it.map_offset, it.out.width, it.out.height, static_cast<std::size_t>(it.out.width),
                          MemorySpace::kDevice},
                         stream_);
                ++launches_;
            }
        }
        first = last;
    }
}

void GpuSearch::sample(const std::vector<SearchRequest>& patches) {
    std::size_t total = 0;
    int deepest = 0;
    sample_offsets_.clear();
    sample_items_.clear();
    for (const SearchRequest& r : patches) {
        const LevelSample ls = level_sample(r.ox, r.oy, r.scale);
        deepest = std::max(deepest, ls.level);
        sample_items_.push_back({ls.ox, ls.oy, ls.scale, r.patch.width, r.patch.height, ls.level, total,
                                 static_cast<std::size_t>(r.patch.width)});
        sample_offsets_.push_back(total);
        total += static_cast<std::size_t>(r.patch.width) * r.patch.height;
    }
    if (total == 0) return;
    build_levels(deepest);
    std::uint8_t* dev = samples_.ensure(total);
    std::uint8_t* host = host_samples_.ensure(total);
    launch_sample_patches(levels_, sample_items_, dev, stream_);
    CORRTRACK_CUDA(cudaMemcpyAsync(host, dev, total, cudaMemcpyDeviceToHost, stream_));
    CORRTRACK_CUDA(cudaEventRecord(samples_ready_, stream_));
    samples_pending_ = true;
}

}  // namespace

std::unique_ptr<SearchBackend> make_gpu_search(const std::string& kernel, std::string* error) {
    std::string why;
    auto probe = make_correlator(kernel, &why);
    if (!probe) {
        if (error) *error = why;
        return nullptr;
    }
    return std::make_unique<GpuSearch>(kernel, std::move(probe));
}

}  // namespace corrtrack
