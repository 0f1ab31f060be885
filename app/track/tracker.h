// NCC tracker: every target runs one tracking policy (target.h: motion prediction, a search
// window from the box's longer side, a scale search, a template memory, re-detection that
// must hold before it is taken) over one search backend (search.h: CPU, or GPU with all
// targets' searches in one batched pass per frame). Targets have stable ids.
// Thread rules: one thread drives a tracker; it owns its backend and buffers and works on its
// GPU context's compute stream (no other thread queues work on that context).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/gpu/gpu_context.h"
#include "app/track/options.h"
#include "app/track/types.h"
#include "corrtrack/correlator.h"
#include "corrtrack/peak.h"

namespace corrtrack {

// Tracks several targets through one pass per frame. With a CUDA kernel the whole search runs
// on the device: the frame (device memory, or host memory it copies itself) is sampled into
// one atlas of search patches (every target, every scale, every template), correlated with
// one batched launch per template size where the kernel supports batches (else one launch
// per patch), and the motion-penalised peaks of all maps come back in one copy: one wait per
// pass, on an event; a second pass runs only for targets that lost their match.
class MultiTracker {
public:
    // A GPU kernel runs on gpu.compute(); `gpu` must outlive the tracker (composition roots
    // make the context first and destroy the tracker before it).
    MultiTracker(TrackerOptions options, const GpuContext& gpu);
    // With a GPU context of its own (tests, one-off trackers): the same, owned here.
    explicit MultiTracker(TrackerOptions options);
    ~MultiTracker();
    MultiTracker(const MultiTracker&) = delete;
    MultiTracker& operator=(const MultiTracker&) = delete;

    // Checks the box (inside the frame, >= 4x4 px, textured) and the options, and builds the
    // template from `frame` (host or device luma). Returns the target's id (never reused by
    // this tracker), or -1 with *error.
    TargetId add_target(const FrameView& frame, const BoxF& box, std::string* error);
    // Drops a target (false when the id is unknown); the others keep their ids.
    bool remove_target(TargetId id);
    void clear();
    int size() const;
    std::vector<TargetId> ids() const;  // in the order targets were added
    // Tracks every target on this frame: one result per target, in ids() order. Valid until
    // the next call.
    const std::vector<TrackResult>& update(const FrameView& frame);

    const TrackerOptions& options() const { return options_; }
    // Whether the colour cue reads the frames' host planes (colour on, and few enough targets
    // for the cues, counting one about to be added): a session then brings an NVDEC frame's
    // planes to the host, so that the GPU tracks a colour source as the CPU does.
    bool wants_host_colour() const {
        return options_.colour > 0 && options_.cue_targets > 0 && size() <= options_.cue_targets;
    }
    // New settings from the next update on; targets added later take their template settings
    // (max template side, core, anchor, memory) from them. The kernel stays (set_kernel swaps it),
    // and so do the stream and buffers, so a decoder sharing the stream keeps working.
    void set_options(const TrackerOptions& options);
    const std::string& kernel_name() const;  // as asked ("auto" stays "auto")
    std::string kernel_summary() const;
    bool on_gpu() const;
    // Swaps the kernel (next update). False + *error when unknown or unavailable. A swap
    // between CPU and GPU kernels changes stream() (nullptr on the CPU); every GPU kernel
    // runs on the context's compute stream, which outlives every swap.
    bool set_kernel(const std::string& name, std::string* error);
    // The stream the GPU path runs on (gpu().compute(); nullptr on the CPU path): decoders and
    // interop share it.
    Stream stream() const;
    // The GPU context the tracker works in (its own or the caller's).
    const GpuContext& gpu() const;
    // The last correlation map of a target's chosen search, in host memory (empty when
    // options.keep_maps is off), and where it lies in the frame. Unknown ids give empty maps.
    MapView last_map(TargetId id) const;
    // The same map in device memory (options.keep_device_maps, GPU path; else empty). Written
    // on stream() by update(): read it on that stream; valid until the next update().
    MapView last_device_map(TargetId id) const;
    BoxF last_map_region(TargetId id) const;
    BoxF box(TargetId id) const;
    // Kernel launches of the last update (correlation only), for the batching measurements.
    int last_correlation_launches() const;
    // Searches of the last update (tracking, re-detection) that ran as one CUDA graph launch.
    int last_replayed_searches() const;
    // Map positions searched by the last update, all targets and passes (the work done).
    long last_search_positions() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    TrackerOptions options_;
};

// Single-target front end of MultiTracker.
class Tracker {
public:
    explicit Tracker(TrackerOptions options);                // a GPU context of its own
    Tracker(TrackerOptions options, const GpuContext& gpu);  // `gpu` outlives the tracker
    ~Tracker();
    // Checks the box (inside the frame, >= 4x4 px, textured) and builds the template.
    // Returns false with a message in *error when the box cannot be tracked.
    bool init(const FrameView& frame, const BoxF& box, std::string* error);
    TrackResult update(const FrameView& frame);

    const TrackerOptions& options() const { return multi_.options(); }
    const std::string& kernel_name() const { return multi_.kernel_name(); }
    bool on_gpu() const { return multi_.on_gpu(); }
    Stream stream() const { return multi_.stream(); }  // see MultiTracker::stream()
    // Swaps the kernel (takes effect on the next update). False + *error if unknown.
    bool set_kernel(const std::string& name, std::string* error) { return multi_.set_kernel(name, error); }
    // The last correlation map of the chosen search (host memory) and where it lies in the
    // frame, for heatmap display.
    MapView last_map() const;
    BoxF last_map_region() const;

private:
    MultiTracker multi_;
    TargetId id_ = -1;
};

// Resolves "auto" to the fastest kernel available here (a CUDA kernel with a GPU, else
// cpu_fast); other names pass through.
std::string resolve_kernel_name(const std::string& name);

}  // namespace corrtrack
