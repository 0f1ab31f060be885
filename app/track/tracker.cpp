// Tracker: fixed-size template at a working scale; each frame samples a search patch per
// candidate scale around the last centre, correlates, refines the peak, and keeps the best.
// The target logic (candidates, loss, scale, template update) is shared; the search runs
// either per target on the host (CPU kernels) or for all targets at once on the device.
#include "app/track/tracker.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>
#include <tuple>

#include "app/track/device_search.h"
#include "app/track/matcher.h"
#include "app/track/resample.h"
#include "corrtrack/ncc_math.h"
#include "cuda/common.cuh"

namespace corrtrack {

const char* to_string(UpdatePolicy p) {
    switch (p) {
        case UpdatePolicy::kNone: return "none";
        case UpdatePolicy::kKeyframe: return "keyframe";
        case UpdatePolicy::kBlend: return "blend";
    }
    return "?";
}

bool parse_update_policy(const std::string& s, UpdatePolicy* out) {
    for (UpdatePolicy p : {UpdatePolicy::kNone, UpdatePolicy::kKeyframe, UpdatePolicy::kBlend})
        if (s == to_string(p)) {
            *out = p;
            return true;
        }
    return false;
}

std::string resolve_kernel_name(const std::string& name) {
    if (name != "auto") return name;
    if (const KernelEntry* e = find_kernel("auto"); e && e->available()) return "auto";
    return "cpu_fast";
}

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

// Packed 8-bit image owned by the tracker.
struct Buffer {
    Size size;
    std::vector<std::uint8_t> pixels;
    void resize(Size s) {
        size = s;
        pixels.resize(static_cast<std::size_t>(s.width) * s.height);
    }
    ImageView view() const {
        return {pixels.data(), size.width, size.height, static_cast<std::size_t>(size.width), MemorySpace::kHost};
    }
};

struct Candidate {
    double cx = 0, cy = 0, scale = 1, factor = 1;
    float score = -2, ranked = -2, psr = 0;
    BoxF region;  // where the map's origin (0, 0) window lies, for display
};

// One search patch of a target: where it is sampled and how its peak is ranked.
struct Search {
    double ox = 0, oy = 0, scale = 1, factor = 1;
    Size patch;
    bool penalise = true;
};

// The map minus a quadratic motion penalty (zero at the centre, `weight` at the edge of the
// search window), so a distractor must beat the target by more than its distance costs. The
// integer peak and PSR come from the penalised map; the score and sub-pixel offset from the
// raw one. device_search.cu computes the same on the GPU.
RankedPeak penalised_peak(const MapView& map, double weight, std::vector<float>& scratch) {
    RankedPeak out;
    if (weight <= 0) {
        out.peak = find_peak(map);
        out.ranked = out.peak.score;
        return out;
    }
    scratch.resize(static_cast<std::size_t>(map.width) * map.height);
    const double cx = (map.width - 1) / 2.0, cy = (map.height - 1) / 2.0;
    const double rx2 = std::max(1.0, cx * cx), ry2 = std::max(1.0, cy * cy);
    for (int y = 0; y < map.height; ++y) {
        const double dy2 = (y - cy) * (y - cy) / ry2;
        const float* src = map.row(y);
        float* dst = &scratch[static_cast<std::size_t>(y) * map.width];
        for (int x = 0; x < map.width; ++x)
            dst[x] = src[x] - static_cast<float>(weight * ((x - cx) * (x - cx) / rx2 + dy2));
    }
    const MapView pm{scratch.data(), map.width, map.height, static_cast<std::size_t>(map.width)};
    Peak& pk = out.peak;
    pk = find_peak(pm);
    out.ranked = pk.score;
    const float* row = map.row(pk.y);
    pk.score = row[pk.x];
    pk.sub_x = static_cast<float>(pk.x);
    pk.sub_y = static_cast<float>(pk.y);
    if (pk.x > 0 && pk.x + 1 < map.width) pk.sub_x += parabolic_offset(row[pk.x - 1], pk.score, row[pk.x + 1]);
    if (pk.y > 0 && pk.y + 1 < map.height)
        pk.sub_y += parabolic_offset(map.row(pk.y - 1)[pk.x], pk.score, map.row(pk.y + 1)[pk.x]);
    return out;
}

}  // namespace

// One target: its template, position, scale and state.
struct Target {
    Size templ_size;                   // working template, pixels
    std::vector<float> templ_float;    // blended appearance
    std::vector<float> templ_initial;  // the first frame's appearance
    float anchor = 0;                  // TrackerOptions::anchor
    Buffer templ;                      // quantised template handed to the kernels
    double scale = 1;                  // frame pixels per template pixel
    double cx = 0, cy = 0;
    bool lost = false;
    long frames = 0;
    BoxF box;
    TrackResult result;

    std::vector<float> best_map;
    Size best_map_size;
    BoxF best_region;

    // CPU path
    Matcher matcher;
    Buffer patch;
    ResampleScratch scratch;
    std::vector<float> penalised;
    std::vector<Search> searches;

    // GPU path
    std::unique_ptr<Correlator> corr;  // this target's template alone (re-detection, unbatched)
    DeviceBuffer<float> device_map;    // the chosen map, kept for display (keep_device_maps)
    Size device_map_size;
    bool device_map_pending = false;   // chosen in the current pass: copy it before the next
    std::size_t device_map_offset = 0;
    Size device_map_out;
    bool update_pending = false;       // a template-sized patch is on its way to update_host
    std::size_t update_offset = 0;     // its place in the pinned update buffer

    void quantise_template() {
        for (std::size_t i = 0; i < templ_float.size(); ++i) {
            const float v = anchor * templ_initial[i] + (1.0f - anchor) * templ_float[i];
            templ.pixels[i] = static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
        }
    }
    void blend(const std::uint8_t* appearance, float rate) {
        for (std::size_t i = 0; i < templ_float.size(); ++i)
            templ_float[i] += rate * (appearance[i] - templ_float[i]);
        quantise_template();
    }
    // Where the template-sized box around (x, y) is sampled at the working scale.
    Search box_sample(double x, double y) const {
        Search s;
        s.scale = scale;
        s.patch = templ_size;
        s.ox = x - templ_size.width * scale / 2;
        s.oy = y - templ_size.height * scale / 2;
        snap(s);
        return s;
    }
    // Integer copies keep scale-1 tracking free of interpolation blur.
    static void snap(Search& s) {
        if (s.scale == 1.0) {
            s.ox = std::round(s.ox);
            s.oy = std::round(s.oy);
        }
    }
    void keep_map(const MapView& m, const BoxF& region) {
        best_map_size = m.size();
        best_map.resize(static_cast<std::size_t>(m.width) * m.height);
        for (int y = 0; y < m.height; ++y)
            std::copy(m.row(y), m.row(y) + m.width, &best_map[static_cast<std::size_t>(y) * m.width]);
        best_region = region;
    }
};

namespace {

// The tracking searches of a target this frame: one patch per scale around the last centre.
void tracking_searches(const Target& t, const TrackerOptions& o, std::vector<Search>& out) {
    out.clear();
    const Size ts = t.templ_size;
    const int margin_x = std::max(8, static_cast<int>(std::lround(ts.width * (o.search_factor - 1) / 2)));
    const int margin_y = std::max(8, static_cast<int>(std::lround(ts.height * (o.search_factor - 1) / 2)));
    const Size patch{ts.width + 2 * margin_x, ts.height + 2 * margin_y};
    const int half = o.scales / 2;
    for (int k = -half; k <= half; ++k) {
        Search s;
        s.factor = std::pow(o.scale_step, k);
        s.scale = k == 0 ? t.scale : t.scale * s.factor;
        s.patch = patch;
        s.ox = t.cx - patch.width * s.scale / 2;
        s.oy = t.cy - patch.height * s.scale / 2;
        Target::snap(s);
        out.push_back(s);
    }
}

// The full-frame re-detection search at the target's current scale.
Search redetect_search(const Target& t, Size frame) {
    Search s;
    s.scale = t.scale;
    s.patch = {std::max(t.templ_size.width, static_cast<int>(frame.width / t.scale)),
               std::max(t.templ_size.height, static_cast<int>(frame.height / t.scale))};
    s.penalise = false;
    Target::snap(s);
    return s;
}

Candidate make_candidate(const Target& t, const TrackerOptions& o, const Search& s, const RankedPeak& rp) {
    const Size ts = t.templ_size;
    Candidate c;
    c.cx = s.ox + (rp.peak.sub_x + ts.width / 2.0) * s.scale;
    c.cy = s.oy + (rp.peak.sub_y + ts.height / 2.0) * s.scale;
    c.scale = s.scale;
    c.factor = s.factor;
    c.score = rp.peak.score;
    c.psr = rp.peak.psr;
    c.ranked = s.factor == 1.0 ? rp.ranked : rp.ranked * static_cast<float>(o.scale_penalty);
    c.region = {s.ox, s.oy, s.patch.width * s.scale, s.patch.height * s.scale};
    return c;
}

// After the searches: position, scale, loss. Returns whether to update the template.
bool settle(Target& t, const TrackerOptions& o, const Candidate& best, Size frame) {
    if (!t.lost) {
        t.cx = std::clamp(best.cx, 0.0, static_cast<double>(frame.width));
        t.cy = std::clamp(best.cy, 0.0, static_cast<double>(frame.height));
        // Follow scale changes halfway per frame: single-frame scale picks are noisy.
        t.scale *= 1.0 + o.scale_rate * (best.scale / t.scale - 1.0);
    }
    const Size ts = t.templ_size;
    t.box = {t.cx - ts.width * t.scale / 2, t.cy - ts.height * t.scale / 2, ts.width * t.scale, ts.height * t.scale};
    TrackResult& r = t.result;
    r.box = t.box;
    r.sub_cx = t.lost ? t.cx : best.cx;
    r.sub_cy = t.lost ? t.cy : best.cy;
    r.score = best.score;
    r.confidence = best.psr;
    r.lost = t.lost;
    if (t.lost) return false;
    const bool sure = best.score >= o.update_min_score;
    const bool keyframe = o.update == UpdatePolicy::kKeyframe && t.frames % o.keyframe_interval == 0;
    return sure && (o.update == UpdatePolicy::kBlend || keyframe);
}

float update_rate(const TrackerOptions& o) {
    return o.update == UpdatePolicy::kBlend ? static_cast<float>(o.blend_rate) : 1.0f;
}

}  // namespace

// The device side of the tracker: one stream, the atlas of search patches, the maps, the
// ranked peaks and the template-update patches, all grown once and reused.
struct GpuSearch {
    cudaStream_t stream = nullptr;
    cudaEvent_t begin = nullptr, sampled = nullptr, correlated = nullptr, peaked = nullptr;
    cudaEvent_t updates_ready = nullptr;  // the template-update patches reached the host
    std::uint8_t* frame = nullptr;        // device copy of host frames
    std::size_t frame_pitch = 0;
    Size frame_capacity;
    DeviceBuffer<std::uint8_t> atlas;
    DeviceBuffer<float> maps;
    DeviceBuffer<RankedPeak> peaks;
    PinnedArray<RankedPeak> host_peaks;
    PinnedArray<float> host_maps;
    DeviceBuffer<std::uint8_t> update_patches;
    PinnedArray<std::uint8_t> host_updates;
    bool updates_pending = false;

    // Per template size: a correlator holding the stacked templates of a batch.
    struct Group {
        std::unique_ptr<Correlator> corr;
        std::vector<std::uint8_t> stacked;  // the templates last set, to skip unchanged ones
    };
    std::map<std::pair<int, int>, Group> groups;

    // Reused per frame.
    struct Item {
        int target;
        Search search;
        int row;                // first atlas row
        std::size_t map_offset; // first float of its map
        Size out;
        int order = 0;          // position before sorting
    };
    std::vector<Item> items;
    std::vector<SampleItem> samples;
    std::vector<PeakItem> peak_items;
    std::vector<Search> searches;
    std::vector<Candidate> best, prev;
    std::vector<SampleItem> one;
    int launches = 0;

    GpuSearch() {
        CORRTRACK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        for (cudaEvent_t* e : {&begin, &sampled, &correlated, &peaked}) CORRTRACK_CUDA(cudaEventCreate(e));
        CORRTRACK_CUDA(cudaEventCreateWithFlags(&updates_ready, cudaEventDisableTiming));
    }
    ~GpuSearch() {
        if (stream) cudaStreamSynchronize(stream);  // queued copies still target our buffers
        cudaFree(frame);
        for (cudaEvent_t e : {begin, sampled, correlated, peaked, updates_ready}) cudaEventDestroy(e);
        cudaStreamDestroy(stream);
    }

    // A device view of the frame: as is, or copied from host memory on our stream.
    ImageView device_frame(ImageView f) {
        if (f.space == MemorySpace::kDevice) return f;
        if (f.width > frame_capacity.width || f.height > frame_capacity.height) {
            cudaFree(frame);
            frame = nullptr;
            frame_capacity = {std::max(f.width, frame_capacity.width), std::max(f.height, frame_capacity.height)};
            CORRTRACK_CUDA(cudaMallocPitch(reinterpret_cast<void**>(&frame), &frame_pitch, frame_capacity.width,
                                  frame_capacity.height));
        }
        CORRTRACK_CUDA(cudaMemcpy2DAsync(frame, frame_pitch, f.data, f.pitch, f.width, f.height, cudaMemcpyHostToDevice,
                                stream));
        return {frame, f.width, f.height, frame_pitch, MemorySpace::kDevice};
    }
};

struct MultiTracker::Impl {
    std::string kernel_name;  // as asked
    std::string resolved;     // what make_correlator gets
    bool gpu = false;
    std::unique_ptr<Correlator> probe;  // for info() and supports() checks
    std::vector<std::unique_ptr<Target>> targets;
    std::vector<TrackResult> results;
    std::unique_ptr<GpuSearch> g;
    bool keep_maps = true;
    bool keep_device_maps = false;
    double motion_penalty = 0.2;

    bool set_kernel(const std::string& name, std::string* error);
    void attach(Target& t);  // (re)creates the target's kernel for the current path
    void apply_pending_updates(const TrackerOptions& o);
    void update_cpu(Target& t, ImageView frame, const TrackerOptions& o);
    void update_gpu(ImageView frame, const TrackerOptions& o);
    // Samples, correlates and ranks the searches in g->items on `frame`, waiting once.
    void search_gpu(ImageView frame, const TrackerOptions& o, StageTimes* times);
};

bool MultiTracker::Impl::set_kernel(const std::string& name, std::string* error) {
    const std::string resolved_name = resolve_kernel_name(name);
    std::string why;
    auto k = make_correlator(resolved_name, &why);
    if (!k) {
        if (error) *error = why;
        return false;
    }
    if (g) {
        // Pending template updates belong to the old kernel's frame; apply them first.
        CORRTRACK_CUDA(cudaStreamSynchronize(g->stream));
    }
    kernel_name = name;
    resolved = resolved_name;
    probe = std::move(k);
    gpu = probe->info().device == Device::kCuda;
    if (gpu && !g) g = std::make_unique<GpuSearch>();
    if (g) g->groups.clear();
    for (auto& t : targets) attach(*t);
    return true;
}

void MultiTracker::Impl::attach(Target& t) {
    if (gpu) {
        t.corr = make_correlator(resolved);
        t.corr->set_template(t.templ.view(), g->stream);
    } else {
        std::string why;
        if (!t.matcher.set_kernel(resolved, &why)) throw std::runtime_error(why);
        t.matcher.set_template(t.templ.view());
    }
}

void MultiTracker::Impl::update_cpu(Target& t, ImageView frame, const TrackerOptions& o) {
    TrackResult& r = t.result;
    Candidate best;
    auto run = [&](const Search& s) {
        t.patch.resize(s.patch);
        auto t0 = std::chrono::steady_clock::now();
        sample_patch(frame, s.ox, s.oy, s.scale, s.patch, t.patch.pixels.data(), s.patch.width, t.scratch);
        r.times.upload_ms += ms_since(t0);
        const MapView map = t.matcher.match(t.patch.view(), &r.times);
        t0 = std::chrono::steady_clock::now();
        const RankedPeak rp = penalised_peak(map, s.penalise ? o.motion_penalty : 0.0, t.penalised);
        r.times.peak_ms += ms_since(t0);
        const Candidate c = make_candidate(t, o, s, rp);
        if (c.ranked > best.ranked) {
            best = c;
            if (keep_maps) t.keep_map(map, c.region);
            t.best_region = c.region;
        }
    };
    if (!t.lost) {
        tracking_searches(t, o, t.searches);
        for (const Search& s : t.searches) run(s);
    }
    if (t.lost || !(best.score >= o.lost_score)) {
        r.redetected = true;
        const Candidate prev = best;
        best = Candidate{};
        run(redetect_search(t, frame.size()));
        t.lost = !(best.score >= o.recover_score);
        if (t.lost && prev.score > best.score) best.score = prev.score;
    }
    if (settle(t, o, best, frame.size())) {
        const auto t0 = std::chrono::steady_clock::now();
        const Search s = t.box_sample(t.cx, t.cy);
        t.patch.resize(s.patch);
        sample_patch(frame, s.ox, s.oy, s.scale, s.patch, t.patch.pixels.data(), s.patch.width, t.scratch);
        t.blend(t.patch.pixels.data(), update_rate(o));
        t.matcher.set_template(t.templ.view());
        r.times.upload_ms += ms_since(t0);
    }
}

// Template updates sampled at the end of the previous frame: their patches reached pinned
// memory long ago (the copy was queued right after that frame's search), so the event wait
// returns at once; blending them here keeps the host template logic identical to the CPU path.
void MultiTracker::Impl::apply_pending_updates(const TrackerOptions& o) {
    if (!g || !g->updates_pending) return;
    CORRTRACK_CUDA(cudaEventSynchronize(g->updates_ready));
    g->updates_pending = false;
    for (auto& tp : targets) {
        Target& t = *tp;
        if (!t.update_pending) continue;
        t.update_pending = false;
        t.blend(g->host_updates.ptr + t.update_offset, update_rate(o));
        t.corr->set_template(t.templ.view(), g->stream);
    }
}

void MultiTracker::Impl::search_gpu(ImageView frame, const TrackerOptions& o, StageTimes* times) {
    GpuSearch& s = *g;
    // Lay the patches out in the atlas grouped by template size, so that each group's
    // patches (equal in size) are consecutive: one batched launch per group.
    // (std::sort with the list position as the last key: stable without stable_sort's buffer.)
    for (std::size_t k = 0; k < s.items.size(); ++k) s.items[k].order = static_cast<int>(k);
    std::sort(s.items.begin(), s.items.end(), [&](const GpuSearch::Item& a, const GpuSearch::Item& b) {
        const Size ta = targets[a.target]->templ_size, tb = targets[b.target]->templ_size;
        return std::make_tuple(ta.width, ta.height, a.order) < std::make_tuple(tb.width, tb.height, b.order);
    });
    int rows = 0, width = 0;
    std::size_t floats = 0;
    s.samples.clear();
    s.peak_items.clear();
    for (auto& it : s.items) {
        const Size ts = targets[it.target]->templ_size;
        it.row = rows;
        it.out = {it.search.patch.width - ts.width + 1, it.search.patch.height - ts.height + 1};
        it.map_offset = floats;
        rows += it.search.patch.height;
        width = std::max(width, it.search.patch.width);
        floats += static_cast<std::size_t>(it.out.width) * it.out.height;
        s.samples.push_back({it.search.ox, it.search.oy, it.search.scale, it.search.patch.width,
                             it.search.patch.height, it.row});
        s.peak_items.push_back({it.map_offset, it.out.width, it.out.height, it.search.penalise ? o.motion_penalty : 0.0});
    }
    const std::size_t atlas_pitch = (static_cast<std::size_t>(width) + 63) / 64 * 64;
    std::uint8_t* atlas = s.atlas.ensure(atlas_pitch * rows);
    float* maps = s.maps.ensure(floats);
    RankedPeak* peaks = s.peaks.ensure(s.items.size());
    RankedPeak* host_peaks = s.host_peaks.ensure(s.items.size());
    float* host_maps = keep_maps ? s.host_maps.ensure(floats) : nullptr;

    CORRTRACK_CUDA(cudaEventRecord(s.begin, s.stream));
    launch_sample_patches(frame, s.samples, atlas, atlas_pitch, s.stream);
    CORRTRACK_CUDA(cudaEventRecord(s.sampled, s.stream));
    const ImageView atlas_view{atlas, width, rows, atlas_pitch, MemorySpace::kDevice};
    s.launches = 0;
    for (std::size_t first = 0; first < s.items.size();) {
        const Target& t0 = *targets[s.items[first].target];
        const Size ts = t0.templ_size;
        std::size_t last = first + 1;
        while (last < s.items.size() && targets[s.items[last].target]->templ_size == ts) ++last;
        const int count = static_cast<int>(last - first);
        const GpuSearch::Item& head = s.items[first];
        const Size patch = head.search.patch;
        bool same_patch = true;
        for (std::size_t k = first; k < last; ++k) same_patch = same_patch && s.items[k].search.patch == patch;
        NccProblem batch{atlas_view.size(), ts, Rect{0, head.row, patch.width, patch.height}, count, patch.height};
        GpuSearch::Group& grp = s.groups[{ts.width, ts.height}];
        if (!grp.corr) grp.corr = make_correlator(resolved);
        const bool batched = count > 1 && same_patch && grp.corr && grp.corr->supports(batch, nullptr);
        if (batched) {
            const std::size_t tb = static_cast<std::size_t>(ts.width) * ts.height;
            std::vector<std::uint8_t>& stacked = grp.stacked;
            bool changed = stacked.size() != tb * count;
            stacked.resize(tb * count);
            for (int k = 0; k < count; ++k) {
                const std::uint8_t* src = targets[s.items[first + k].target]->templ.pixels.data();
                std::uint8_t* dst = &stacked[k * tb];
                if (!changed && std::memcmp(dst, src, tb) != 0) changed = true;
                std::memcpy(dst, src, tb);
            }
            if (changed)
                grp.corr->set_template({stacked.data(), ts.width, ts.height * count, static_cast<std::size_t>(ts.width),
                                        MemorySpace::kHost}, s.stream);
            const Size out = head.out;
            grp.corr->run(atlas_view, batch, {maps + head.map_offset, out.width, out.height * count,
                                              static_cast<std::size_t>(out.width), MemorySpace::kDevice}, s.stream);
            ++s.launches;
        } else {
            for (std::size_t k = first; k < last; ++k) {
                const GpuSearch::Item& it = s.items[k];
                Target& t = *targets[it.target];
                const NccProblem p{atlas_view.size(), ts, Rect{0, it.row, it.search.patch.width, it.search.patch.height}};
                std::string why;
                if (!t.corr->supports(p, &why))
                    throw std::runtime_error("kernel " + kernel_name + " cannot run this search: " + why);
                t.corr->run(atlas_view, p, {maps + it.map_offset, it.out.width, it.out.height,
                                            static_cast<std::size_t>(it.out.width), MemorySpace::kDevice}, s.stream);
                ++s.launches;
            }
        }
        first = last;
    }
    CORRTRACK_CUDA(cudaEventRecord(s.correlated, s.stream));
    launch_ranked_peaks(maps, s.peak_items, peaks, s.stream);
    CORRTRACK_CUDA(cudaMemcpyAsync(host_peaks, peaks, s.items.size() * sizeof(RankedPeak), cudaMemcpyDeviceToHost, s.stream));
    if (host_maps)
        CORRTRACK_CUDA(cudaMemcpyAsync(host_maps, maps, floats * sizeof(float), cudaMemcpyDeviceToHost, s.stream));
    CORRTRACK_CUDA(cudaEventRecord(s.peaked, s.stream));
    // The one wait of the frame: the next search window depends on these peaks.
    CORRTRACK_CUDA(cudaEventSynchronize(s.peaked));
    float sample_ms = 0, correlate_ms = 0, peak_ms = 0;
    CORRTRACK_CUDA(cudaEventElapsedTime(&sample_ms, s.begin, s.sampled));
    CORRTRACK_CUDA(cudaEventElapsedTime(&correlate_ms, s.sampled, s.correlated));
    CORRTRACK_CUDA(cudaEventElapsedTime(&peak_ms, s.correlated, s.peaked));
    times->upload_ms += sample_ms;
    times->correlate_ms += correlate_ms;
    times->peak_ms += peak_ms;
}

void MultiTracker::Impl::update_gpu(ImageView host_or_device, const TrackerOptions& o) {
    GpuSearch& s = *g;
    apply_pending_updates(o);
    StageTimes times;
    const auto t_upload = std::chrono::steady_clock::now();
    const ImageView frame = s.device_frame(host_or_device);
    if (host_or_device.space == MemorySpace::kHost) times.upload_ms += ms_since(t_upload);

    // Pass 1: every tracking target, every scale.
    s.items.clear();
    for (int i = 0; i < static_cast<int>(targets.size()); ++i) {
        Target& t = *targets[i];
        if (t.lost) continue;
        tracking_searches(t, o, s.searches);
        for (const Search& sr : s.searches) s.items.push_back({i, sr, 0, 0, {}});
    }
    std::vector<Candidate>& best = s.best;
    best.assign(targets.size(), Candidate{});
    auto consider = [&](const std::vector<GpuSearch::Item>& items) {
        for (std::size_t k = 0; k < items.size(); ++k) {
            const GpuSearch::Item& it = items[k];
            Target& t = *targets[it.target];
            const Candidate c = make_candidate(t, o, it.search, s.host_peaks.ptr[k]);
            if (c.ranked > best[it.target].ranked) {
                best[it.target] = c;
                if (keep_maps)
                    t.keep_map({s.host_maps.ptr + it.map_offset, it.out.width, it.out.height,
                                static_cast<std::size_t>(it.out.width)}, c.region);
                t.best_region = c.region;
                t.device_map_pending = true;
                t.device_map_offset = it.map_offset;
                t.device_map_out = it.out;
            }
        }
        // Keep the chosen maps before another pass reuses the map buffer (stream order).
        for (auto& tp : targets) {
            Target& t = *tp;
            if (!t.device_map_pending) continue;
            t.device_map_pending = false;
            if (!keep_device_maps) continue;
            const std::size_t n = static_cast<std::size_t>(t.device_map_out.width) * t.device_map_out.height;
            CORRTRACK_CUDA(cudaMemcpyAsync(t.device_map.ensure(n), s.maps.get() + t.device_map_offset, n * sizeof(float),
                                  cudaMemcpyDeviceToDevice, s.stream));
            t.device_map_size = t.device_map_out;
        }
    };
    if (!s.items.empty()) {
        search_gpu(frame, o, &times);
        consider(s.items);
    }
    // Pass 2 (rare): full-frame re-detection for lost targets and those that just lost it.
    std::vector<Candidate>& prev = s.prev;
    prev.assign(targets.size(), Candidate{});
    s.items.clear();
    for (int i = 0; i < static_cast<int>(targets.size()); ++i) {
        Target& t = *targets[i];
        if (!t.lost && best[i].score >= o.lost_score) continue;
        t.result.redetected = true;
        prev[i] = best[i];
        best[i] = Candidate{};
        s.items.push_back({i, redetect_search(t, frame.size()), 0, 0, {}});
    }
    if (!s.items.empty()) {
        const int launches = s.launches;
        search_gpu(frame, o, &times);
        s.launches += launches;
        consider(s.items);
        for (const auto& it : s.items) {
            Target& t = *targets[it.target];
            t.lost = !(best[it.target].score >= o.recover_score);
            if (t.lost && prev[it.target].score > best[it.target].score) best[it.target].score = prev[it.target].score;
        }
    }
    // Settle every target; sample the template updates and queue them to the host.
    s.samples.clear();
    std::size_t update_bytes = 0;
    for (std::size_t i = 0; i < targets.size(); ++i) {
        Target& t = *targets[i];
        t.result.times = times;
        if (!settle(t, o, best[i], frame.size())) continue;
        const Search sr = t.box_sample(t.cx, t.cy);
        t.update_pending = true;
        t.update_offset = update_bytes;
        // Each patch in its own rows of a packed buffer: width == template width, pitch too.
        s.samples.push_back({sr.ox, sr.oy, sr.scale, sr.patch.width, sr.patch.height, 0});
        update_bytes += static_cast<std::size_t>(sr.patch.width) * sr.patch.height;
    }
    if (!s.samples.empty()) {
        // Items of different widths cannot share a pitch: sample each into its own span.
        std::uint8_t* dev = s.update_patches.ensure(update_bytes);
        std::uint8_t* host = s.host_updates.ensure(update_bytes);
        std::size_t offset = 0;
        std::vector<SampleItem>& one = s.one;
        one.resize(1);
        for (const SampleItem& it : s.samples) {
            one[0] = it;
            launch_sample_patches(frame, one, dev + offset, static_cast<std::size_t>(it.width), s.stream);
            offset += static_cast<std::size_t>(it.width) * it.height;
        }
        CORRTRACK_CUDA(cudaMemcpyAsync(host, dev, update_bytes, cudaMemcpyDeviceToHost, s.stream));
        CORRTRACK_CUDA(cudaEventRecord(s.updates_ready, s.stream));
        s.updates_pending = true;
    }
}

MultiTracker::MultiTracker(TrackerOptions options) : impl_(std::make_unique<Impl>()), options_(std::move(options)) {
    impl_->kernel_name = options_.kernel;
    impl_->keep_maps = options_.keep_maps;
    impl_->keep_device_maps = options_.keep_device_maps;
}
MultiTracker::~MultiTracker() = default;

int MultiTracker::size() const { return static_cast<int>(impl_->targets.size()); }
void MultiTracker::clear() {
    if (impl_->g) CORRTRACK_CUDA(cudaStreamSynchronize(impl_->g->stream));
    if (impl_->g) impl_->g->updates_pending = false;
    impl_->targets.clear();
    impl_->results.clear();
}
void MultiTracker::remove_target(int i) {
    Impl& m = *impl_;
    if (i < 0 || i >= static_cast<int>(m.targets.size())) throw std::out_of_range("MultiTracker::remove_target");
    m.targets.erase(m.targets.begin() + i);
    if (i < static_cast<int>(m.results.size())) m.results.erase(m.results.begin() + i);
}
void MultiTracker::set_options(const TrackerOptions& options) {
    const std::string kernel = options_.kernel;
    options_ = options;
    options_.kernel = kernel;
    impl_->keep_maps = options_.keep_maps;
    impl_->keep_device_maps = options_.keep_device_maps;
}
const std::string& MultiTracker::kernel_name() const { return impl_->kernel_name; }
std::string MultiTracker::kernel_summary() const { return impl_->probe ? impl_->probe->info().summary : ""; }
bool MultiTracker::on_gpu() const { return impl_->gpu; }
Stream MultiTracker::stream() const { return impl_->g && impl_->gpu ? impl_->g->stream : nullptr; }
int MultiTracker::last_correlation_launches() const { return impl_->g ? impl_->g->launches : 0; }

bool MultiTracker::set_kernel(const std::string& name, std::string* error) {
    if (!impl_->set_kernel(name, error)) return false;
    options_.kernel = name;
    return true;
}

MapView MultiTracker::last_map(int i) const {
    const Target& t = *impl_->targets.at(i);
    return {const_cast<float*>(t.best_map.data()), t.best_map_size.width, t.best_map_size.height,
            static_cast<std::size_t>(t.best_map_size.width)};
}
MapView MultiTracker::last_device_map(int i) const {
    Target& t = *impl_->targets.at(i);
    if (!impl_->gpu || !impl_->keep_device_maps || t.device_map_size.area() == 0) return {};
    return {t.device_map.get(), t.device_map_size.width, t.device_map_size.height,
            static_cast<std::size_t>(t.device_map_size.width), MemorySpace::kDevice};
}
BoxF MultiTracker::last_map_region(int i) const { return impl_->targets.at(i)->best_region; }
const BoxF& MultiTracker::box(int i) const { return impl_->targets.at(i)->box; }

int MultiTracker::add_target(ImageView frame, const BoxF& box, std::string* error) {
    auto fail = [&](const std::string& msg) {
        if (error) *error = msg;
        return -1;
    };
    char buf[160];
    std::snprintf(buf, sizeof buf, "box %.1f,%.1f,%.1f,%.1f", box.x, box.y, box.width, box.height);
    const std::string what = buf;
    if (!(box.width > 0 && box.height > 0)) return fail(what + " has zero or negative size");
    if (box.width < 4 || box.height < 4) return fail(what + " is smaller than 4x4 pixels: too little to match");
    if (box.x < 0 || box.y < 0 || box.x + box.width > frame.width + 0.5 || box.y + box.height > frame.height + 0.5) {
        if (box.width > frame.width || box.height > frame.height)
            return fail(what + " is larger than the " + std::to_string(frame.width) + "x" +
                        std::to_string(frame.height) + " frame");
        return fail(what + " lies outside the " + std::to_string(frame.width) + "x" +
                    std::to_string(frame.height) + " frame");
    }
    const TrackerOptions& o = options_;
    if (o.scales < 1 || o.scale_step < 1.0 || o.search_factor < 1.0 || o.max_template_side < 4 ||
        o.max_template_side > kMaxTemplateSide)
        return fail("invalid tracker options (scales >= 1, scale step >= 1, search factor >= 1, "
                    "template side 4.." + std::to_string(kMaxTemplateSide) + ")");
    Impl& m = *impl_;
    if (!m.probe && !m.set_kernel(o.kernel, error)) return -1;

    auto tp = std::make_unique<Target>();
    Target& t = *tp;
    const double longest = std::max(box.width, box.height);
    t.scale = std::max(1.0, longest / o.max_template_side);
    t.templ_size = {std::max(4, static_cast<int>(std::lround(box.width / t.scale))),
                    std::max(4, static_cast<int>(std::lround(box.height / t.scale)))};
    t.cx = box.cx();
    t.cy = box.cy();
    t.templ.resize(t.templ_size);
    const Search s = t.box_sample(t.cx, t.cy);
    if (frame.space == MemorySpace::kHost) {
        sample_patch(frame, s.ox, s.oy, s.scale, s.patch, t.templ.pixels.data(), s.patch.width, t.scratch);
    } else {
        // A device frame (NVDEC): sample there and wait; this happens once per target.
        if (!m.g) m.g = std::make_unique<GpuSearch>();
        std::uint8_t* dev = m.g->update_patches.ensure(t.templ.pixels.size());
        launch_sample_patches(frame, {SampleItem{s.ox, s.oy, s.scale, s.patch.width, s.patch.height, 0}}, dev,
                              static_cast<std::size_t>(s.patch.width), m.g->stream);
        CORRTRACK_CUDA(cudaMemcpyAsync(t.templ.pixels.data(), dev, t.templ.pixels.size(), cudaMemcpyDeviceToHost, m.g->stream));
        CORRTRACK_CUDA(cudaStreamSynchronize(m.g->stream));
    }
    t.templ_float.assign(t.templ.pixels.begin(), t.templ.pixels.end());
    t.templ_initial = t.templ_float;
    t.anchor = static_cast<float>(std::clamp(o.anchor, 0.0, 1.0));

    double mean = 0, sq = 0;
    for (std::uint8_t v : t.templ.pixels) {
        mean += v;
        sq += static_cast<double>(v) * v;
    }
    mean /= t.templ.pixels.size();
    const double sd = std::sqrt(std::max(0.0, sq / t.templ.pixels.size() - mean * mean));
    if (sd < 1.0) {
        std::snprintf(buf, sizeof buf, " is flat (grey-level std %.2f): nothing to correlate", sd);
        return fail(what + buf);
    }
    m.attach(t);
    t.box = box;  // report the user's box exactly on the first frame
    m.targets.push_back(std::move(tp));
    return static_cast<int>(m.targets.size()) - 1;
}

const std::vector<TrackResult>& MultiTracker::update(ImageView frame) {
    Impl& m = *impl_;
    for (auto& t : m.targets) {
        ++t->frames;
        t->result = TrackResult{};
    }
    if (m.gpu) {
        m.update_gpu(frame, options_);
    } else {
        if (frame.space != MemorySpace::kHost)
            throw std::runtime_error("kernel " + m.kernel_name + " runs on the CPU and needs frames in host memory");
        for (auto& t : m.targets) m.update_cpu(*t, frame, options_);
    }
    m.results.resize(m.targets.size());
    for (std::size_t i = 0; i < m.targets.size(); ++i) m.results[i] = m.targets[i]->result;
    return m.results;
}

Tracker::Tracker(TrackerOptions options) : multi_(std::move(options)) {}
Tracker::~Tracker() = default;

bool Tracker::init(ImageView frame, const BoxF& box, std::string* error) {
    multi_.clear();
    return multi_.add_target(frame, box, error) >= 0;
}

TrackResult Tracker::update(ImageView frame) {
    return multi_.update(frame).at(0);
}

MapView Tracker::last_map() const { return multi_.size() ? multi_.last_map(0) : MapView{}; }
BoxF Tracker::last_map_region() const { return multi_.size() ? multi_.last_map_region(0) : BoxF{}; }

}  // namespace corrtrack
