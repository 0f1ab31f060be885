// MultiTracker: the thin orchestrator between the targets' policy (target.h) and a search
// backend (search.h). Per frame: the template updates sampled at the end of the last frame
// are learnt, every target plans its tracking searches and the backend runs them all at once;
// targets that lost their match plan a re-detection and the backend runs those; then every
// target settles and the patches it learns from are sampled for the next frame.
#include "app/track/tracker.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <mutex>
#include <stdexcept>

#include "app/track/backends.h"
#include "app/track/target.h"
#include "corrtrack/work_pool.h"

namespace corrtrack {

// Re-detection positions per frame on the CPU when options leave it to the backend: about a
// millisecond of cpu_fast on two cores; the GPU searches the whole frame every frame.
constexpr int kCpuRedetectBudget = 30000;
// With the budget left to the backend, at most this many lost targets re-detect per frame
// (those following a lead first, then the others in turn): on the GPU each searches the whole
// frame, a map of a million positions, so 1024 targets crowded at the frame's edges, lost
// together, cost a hundred times a frame's tracking. The rest keep their local search.
constexpr int kRedetectsPerFrame = 8;
// A crowd's per-target work (learning, planning, taking the hits) goes to the work pool from
// this many targets, in blocks of kTargetsPerBlock (a target's share is a microsecond or two:
// smaller blocks would cost more in hand-offs than they spread).
constexpr std::size_t kParallelTargets = 64;
constexpr std::size_t kTargetsPerBlock = 16;

// fn(i) for every i in [0, n): on this thread under kParallelTargets, else on the work pool
// in blocks; each i is one target's own work, so the result is the same on any thread count.
// A worker must not throw (it would end the process): the first error is rethrown here.
template <typename Fn>
void for_each_target(std::size_t n, Fn&& fn) {
    if (n < kParallelTargets) {
        for (std::size_t i = 0; i < n; ++i) fn(i);
        return;
    }
    std::exception_ptr error;
    std::mutex error_mutex;
    parallel_for(static_cast<int>((n + kTargetsPerBlock - 1) / kTargetsPerBlock), [&](int b) {
        const std::size_t first = static_cast<std::size_t>(b) * kTargetsPerBlock;
        try {
            for (std::size_t i = first; i < std::min(first + kTargetsPerBlock, n); ++i) fn(i);
        } catch (...) {
            std::lock_guard<std::mutex> lock(error_mutex);
            if (!error) error = std::current_exception();
        }
    });
    if (error) std::rethrow_exception(error);
}

// What "auto" stands for is the registry's rule (resolve_kernel); here only which GPU counts.
std::string resolve_kernel_name(const std::string& name) { return resolve_kernel(name, cuda_available()); }

namespace {

// A context without a GPU (GpuUse::kNone on a machine with one) resolves as a machine without.
std::string resolve_kernel_in(const std::string& kernel, const GpuContext& gpu) {
    return resolve_kernel(kernel, gpu.available());
}

}  // namespace

std::unique_ptr<SearchBackend> make_search_backend(const std::string& kernel, const GpuContext& gpu,
                                                   std::string* error) {
    const std::string resolved = resolve_kernel_in(kernel, gpu);
    const KernelEntry* e = find_kernel(resolved);
    if (e && e->device == Device::kCuda) return make_gpu_search(resolved, gpu, error);
    return make_cpu_search(resolved, error);
}

struct MultiTracker::Impl {
    std::unique_ptr<GpuContext> own_gpu;  // made when the caller gave none
    const GpuContext* gpu = nullptr;      // the backend's streams: outlives the backend
    std::string kernel_name;              // as asked
    std::unique_ptr<SearchBackend> backend;
    std::vector<std::unique_ptr<Target>> targets;
    std::vector<TrackResult> results;
    TargetId next_id = 0;
    TrackerOptions active;  // the options with the backend's defaults resolved

    // Reused per frame.
    std::vector<SearchRequest> requests;
    std::vector<RankedPeak> hits;
    std::vector<std::size_t> first;  // per target: its first request in the pass
    std::vector<SearchRequest> samples;
    std::vector<TargetId> sample_owner;        // whose patch samples[i] is (applied next frame)
    std::vector<int> sample_kind;              // ... and what it is (Target::SampleKind)
    std::vector<const std::uint8_t*> sampled;  // ... and its pixels, once they are back
    std::vector<std::size_t> learners;         // apply_pending: each target's first sample
    bool samples_pending = false;
    std::vector<std::size_t> redetects;  // targets that re-detect this frame
    std::vector<char> chosen;            // choose_redetects' marks, per target
    TargetId redetect_next = 0;          // the first id the next frame's turn starts at
    int launches = 0;                    // correlation launches of the last update
    int replayed = 0;                    // its searches that ran as one graph launch
    long positions = 0;                  // map positions searched by the last update

    // Targets stay in id order (ids only grow, removal erases in place): a binary search, as
    // apply_pending() looks up every target each frame.
    Target* find(TargetId id) const {
        const auto it = std::lower_bound(targets.begin(), targets.end(), id,
                                         [](const std::unique_ptr<Target>& t, TargetId v) { return t->id() < v; });
        return it != targets.end() && (*it)->id() == id ? it->get() : nullptr;
    }
    void resolve(const TrackerOptions& o) {
        active = o;
        if (active.redetect_budget < 0) active.redetect_budget = backend && backend->on_gpu() ? 0 : kCpuRedetectBudget;
        if (backend) backend->set_keep_maps(o.keep_maps, o.keep_device_maps);
    }
    // The targets that re-detect this frame, in target order: all that want to, or at most
    // `limit` (0: no limit): those following a lead, then the others in turn from
    // redetect_next on; the rest skip it this frame.
    void choose_redetects(int limit) {
        redetects.clear();
        const std::size_t n = targets.size();
        for (std::size_t i = 0; i < n; ++i)
            if (targets[i]->wants_redetect()) redetects.push_back(i);
        if (limit <= 0 || redetects.size() <= static_cast<std::size_t>(limit)) return;
        chosen.assign(n, 0);
        int taken = 0;
        for (const std::size_t i : redetects)
            if (taken < limit && targets[i]->has_lead()) chosen[i] = 1, ++taken;
        const auto from = std::lower_bound(targets.begin(), targets.end(), redetect_next,
                                           [](const std::unique_ptr<Target>& t, TargetId v) { return t->id() < v; });
        const std::size_t start = static_cast<std::size_t>(from - targets.begin());
        for (std::size_t k = 0; k < n && taken < limit; ++k) {
            const std::size_t i = (start + k) % n;
            if (chosen[i] || !targets[i]->wants_redetect()) continue;
            chosen[i] = 1;
            ++taken;
            redetect_next = targets[i]->id() + 1;
        }
        redetects.clear();
        for (std::size_t i = 0; i < n; ++i) {
            if (!targets[i]->wants_redetect()) continue;
            if (chosen[i])
                redetects.push_back(i);
            else
                targets[i]->skip_redetect();
        }
    }
    // The patches sampled at the end of the last frame (GPU: long arrived by now).
    // Each target learns its own samples, which lie together in target order; a crowd's
    // targets learn in parallel (for_each_target): the template blends of 1024 targets were a
    // quarter of the GPU path's host time a frame (bench/results/h100_2026-12-05e).
    void apply_pending() {
        if (!samples_pending) return;
        samples_pending = false;
        sampled.resize(sample_owner.size());
        for (std::size_t i = 0; i < sample_owner.size(); ++i) sampled[i] = backend->sampled(i);  // waits once
        learners.clear();  // the first sample of each target's run
        for (std::size_t i = 0; i < sample_owner.size(); ++i)
            if (i == 0 || sample_owner[i] != sample_owner[i - 1]) learners.push_back(i);
        for_each_target(learners.size(), [&](std::size_t k) {
            const std::size_t end = k + 1 < learners.size() ? learners[k + 1] : sample_owner.size();
            if (Target* t = find(sample_owner[learners[k]]))
                for (std::size_t i = learners[k]; i < end; ++i) t->apply_sample(active, sample_kind[i], sampled[i]);
        });
    }
};

MultiTracker::MultiTracker(TrackerOptions options, const GpuContext& gpu)
    : impl_(std::make_unique<Impl>()), options_(std::move(options)) {
    impl_->gpu = &gpu;
    impl_->kernel_name = options_.kernel;
    impl_->resolve(options_);
}
MultiTracker::MultiTracker(TrackerOptions options) : impl_(std::make_unique<Impl>()), options_(std::move(options)) {
    impl_->own_gpu = std::make_unique<GpuContext>();
    impl_->gpu = impl_->own_gpu.get();
    impl_->kernel_name = options_.kernel;
    impl_->resolve(options_);
}
MultiTracker::~MultiTracker() {
    // The backend's queued work and buffers go first, then a context of our own.
    impl_->backend.reset();
    impl_->own_gpu.reset();
}

int MultiTracker::size() const { return static_cast<int>(impl_->targets.size()); }

std::vector<TargetId> MultiTracker::ids() const {
    std::vector<TargetId> out;
    for (const auto& t : impl_->targets) out.push_back(t->id());
    return out;
}

void MultiTracker::clear() {
    Impl& m = *impl_;
    m.samples_pending = false;
    for (const auto& t : m.targets)
        for (std::uint64_t key : t->template_keys())
            if (m.backend) m.backend->forget(key);
    m.targets.clear();
    m.results.clear();
}

bool MultiTracker::remove_target(TargetId id) {
    Impl& m = *impl_;
    for (std::size_t i = 0; i < m.targets.size(); ++i) {
        if (m.targets[i]->id() != id) continue;
        for (std::uint64_t key : m.targets[i]->template_keys())
            if (m.backend) m.backend->forget(key);
        m.targets.erase(m.targets.begin() + i);
        if (i < m.results.size()) m.results.erase(m.results.begin() + i);
        return true;
    }
    return false;
}

void MultiTracker::set_options(const TrackerOptions& options) {
    const std::string kernel = options_.kernel;
    options_ = options;
    options_.kernel = kernel;
    impl_->resolve(options_);
}

const std::string& MultiTracker::kernel_name() const { return impl_->kernel_name; }
std::string MultiTracker::kernel_summary() const { return impl_->backend ? impl_->backend->kernel_summary() : ""; }
bool MultiTracker::on_gpu() const {
    if (impl_->backend) return impl_->backend->on_gpu();
    const KernelEntry* e = find_kernel(resolve_kernel_in(impl_->kernel_name, *impl_->gpu));
    return e && e->device == Device::kCuda && e->available() && impl_->gpu->available();
}
Stream MultiTracker::stream() const { return impl_->backend ? impl_->backend->stream() : nullptr; }
const GpuContext& MultiTracker::gpu() const { return *impl_->gpu; }
int MultiTracker::last_correlation_launches() const { return impl_->launches; }
int MultiTracker::last_replayed_searches() const { return impl_->replayed; }
long MultiTracker::last_search_positions() const { return impl_->positions; }

bool MultiTracker::set_kernel(const std::string& name, std::string* error) {
    Impl& m = *impl_;
    auto backend = make_search_backend(name, *m.gpu, error);
    if (!backend) return false;
    if (m.backend) m.apply_pending();  // learnt before the old backend's buffers go
    m.backend = std::move(backend);
    m.kernel_name = name;
    options_.kernel = name;
    m.resolve(options_);
    return true;
}

MapView MultiTracker::last_map(TargetId id) const {
    const Target* t = impl_->find(id);
    if (!t || t->chosen_pass() < 0 || !impl_->backend) return {};
    return impl_->backend->map(t->chosen_pass(), t->chosen_request());
}
MapView MultiTracker::last_device_map(TargetId id) const {
    const Target* t = impl_->find(id);
    if (!t || t->chosen_pass() < 0 || !impl_->backend) return {};
    return impl_->backend->device_map(t->chosen_pass(), t->chosen_request());
}
BoxF MultiTracker::last_map_region(TargetId id) const {
    const Target* t = impl_->find(id);
    return t ? t->chosen_region() : BoxF{};
}
BoxF MultiTracker::box(TargetId id) const {
    const Target* t = impl_->find(id);
    if (!t) throw std::out_of_range("MultiTracker::box: unknown target " + std::to_string(id));
    return t->result().box;
}

TargetId MultiTracker::add_target(const FrameView& view, const BoxF& box, std::string* error) {
    const ImageView frame = view.luma;
    auto fail = [&](const std::string& msg) {
        if (error) *error = msg;
        return -1;
    };
    char buf[160];
    std::snprintf(buf, sizeof buf, "box %.1f,%.1f,%.1f,%.1f", box.x, box.y, box.width, box.height);
    const std::string what = buf;
    if (!(box.width > 0 && box.height > 0)) return fail(what + " has zero or negative size");
    if (box.width < 4 || box.height < 4) return fail(what + " is smaller than 4x4 pixels: too little to match");
    if (!(box.x >= 0 && box.y >= 0 && box.x + box.width <= frame.width + 0.5 &&
          box.y + box.height <= frame.height + 0.5)) {
        if (box.width > frame.width || box.height > frame.height)
            return fail(what + " is larger than the " + std::to_string(frame.width) + "x" +
                        std::to_string(frame.height) + " frame");
        return fail(what + " lies outside the " + std::to_string(frame.width) + "x" + std::to_string(frame.height) +
                    " frame");
    }
    if (const std::string bad = validate(options_); !bad.empty()) return fail("invalid tracker options: " + bad);
    Impl& m = *impl_;
    if (!m.backend && !set_kernel(m.kernel_name, error)) return -1;

    m.apply_pending();  // sample() below reuses the buffer of the pending patches
    m.backend->begin_frame(view);
    auto start = [&](const TrackerOptions& o, std::string* why) {
        auto t = std::make_unique<Target>(m.next_id, o, box, frame.size());
        m.samples.assign(1, t->template_patch());
        m.backend->sample(m.samples);
        return t->init(m.backend->sampled(0), why) ? std::move(t) : nullptr;
    };
    std::string why;
    std::unique_ptr<Target> t = start(m.active, &why);
    if (!t && m.active.core < 1) {  // a flat core in a textured box: the whole box, as before
        TrackerOptions whole = m.active;
        whole.core = 1;
        t = start(whole, &why);
    }
    if (!t) return fail(what + why);
    if (m.active.colour > 0 && view.on_host().luma.data) t->learn_colour(view.on_host(), 1.0f);
    m.targets.push_back(std::move(t));
    m.results.push_back(m.targets.back()->result());
    return m.next_id++;
}

const std::vector<TrackResult>& MultiTracker::update(const FrameView& view) {
    const ImageView frame = view.luma;
    Impl& m = *impl_;
    if (m.targets.empty()) {
        m.results.clear();
        return m.results;
    }
    const TrackerOptions& o = m.active;
    StageTimes times;
    times.upload_ms += m.backend->begin_frame(view);
    m.apply_pending();
    const Size fs = frame.size();
    m.first.resize(m.targets.size());

    // Pass 0: every tracking target, every scale and template.
    m.requests.clear();
    // A crowd tracks on NCC alone: the cues' per-search host work would cap its rate.
    const bool cues = m.targets.size() <= static_cast<std::size_t>(std::max(0, o.cue_targets));
    std::size_t planned = 0;
    for (std::size_t i = 0; i < m.targets.size(); ++i) {
        m.targets[i]->set_cues(cues);
        m.targets[i]->begin_frame();
        m.first[i] = planned;
        planned += m.targets[i]->track_requests(o);
    }
    m.requests.resize(planned);
    for_each_target(m.targets.size(),
                    [&](std::size_t i) { m.targets[i]->plan_track(o, fs, m.requests.data() + m.first[i]); });
    StageTimes* stages = o.stage_times ? &times : nullptr;
    if (!m.requests.empty()) m.backend->search(0, m.requests, m.hits, stages);
    m.launches = m.requests.empty() ? 0 : m.backend->launches();
    m.replayed = !m.requests.empty() && m.backend->replayed();
    m.positions = m.requests.empty() ? 0 : m.backend->positions();
    for_each_target(m.targets.size(),
                    [&](std::size_t i) { m.targets[i]->take_track(o, m.hits.data() + m.first[i], m.first[i]); });

    // Pass 1: re-detection for the targets that lost their match.
    m.choose_redetects(options_.redetect_budget < 0 ? kRedetectsPerFrame : 0);
    m.requests.clear();
    for (const std::size_t i : m.redetects) {
        m.first[i] = m.requests.size();
        m.targets[i]->plan_redetect(o, fs, m.requests);
    }
    if (!m.requests.empty()) {
        m.backend->search(1, m.requests, m.hits, stages);
        m.launches += m.backend->launches();
        m.replayed += m.backend->replayed();
        m.positions += m.backend->positions();
        for (const std::size_t i : m.redetects) m.targets[i]->take_redetect(o, m.hits.data() + m.first[i], m.first[i]);
    }

    // Settle; the patches to learn from are sampled now and learnt at the next frame.
    m.samples.clear();
    m.sample_owner.clear();
    m.sample_kind.clear();
    m.results.resize(m.targets.size());
    for (std::size_t i = 0; i < m.targets.size(); ++i) {
        Target& t = *m.targets[i];
        t.settle(o, fs, m.samples, m.sample_kind);
        m.sample_owner.resize(m.samples.size(), t.id());
        if (t.colour_due() && view.on_host().luma.data)
            t.learn_colour(view.on_host(), static_cast<float>(o.colour_rate));
        if (o.colour_extent > 0 && view.on_host().has_chroma())
            t.refine_size(view.on_host(), static_cast<float>(o.colour_extent));
        m.results[i] = t.result();
        m.results[i].times = times;
    }
    if (!m.samples.empty()) {
        m.backend->sample(m.samples);
        m.samples_pending = true;
    }
    return m.results;
}

Tracker::Tracker(TrackerOptions options) : multi_(std::move(options)) {}
Tracker::Tracker(TrackerOptions options, const GpuContext& gpu) : multi_(std::move(options), gpu) {}
Tracker::~Tracker() = default;

bool Tracker::init(const FrameView& frame, const BoxF& box, std::string* error) {
    multi_.clear();
    id_ = multi_.add_target(frame, box, error);
    return id_ >= 0;
}

TrackResult Tracker::update(const FrameView& frame) { return multi_.update(frame).at(0); }

MapView Tracker::last_map() const { return multi_.last_map(id_); }
BoxF Tracker::last_map_region() const { return multi_.last_map_region(id_); }

}  // namespace corrtrack
