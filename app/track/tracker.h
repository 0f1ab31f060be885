// NCC tracker: template from the first box, search window around the last position,
// sub-pixel peak, confidence, lost detection with full-frame re-detection, a template update
// policy and a small scale search; several targets share one pass per frame.
// Thread rules: one thread drives a tracker; it owns its kernels, stream and buffers.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "corrtrack/correlator.h"
#include "corrtrack/peak.h"

namespace corrtrack {

struct BoxF {
    double x = 0, y = 0, width = 0, height = 0;  // top-left corner, pixels (0-based)
    double cx() const { return x + width / 2; }
    double cy() const { return y + height / 2; }
};

enum class UpdatePolicy { kNone, kKeyframe, kBlend };
const char* to_string(UpdatePolicy p);
bool parse_update_policy(const std::string& s, UpdatePolicy* out);

struct TrackerOptions {
    std::string kernel = "auto";
    double search_factor = 2.5;     // search window side = factor x box side (at least +16 px)
    int max_template_side = 48;     // larger boxes are matched at a reduced scale
    UpdatePolicy update = UpdatePolicy::kBlend;
    double blend_rate = 0.08;       // weight of the new appearance in a blend update
    int keyframe_interval = 25;     // frames between keyframe updates
    double update_min_score = 0.8;  // update the template only when this sure
    double lost_score = 0.3;        // below this the target counts as lost
    double recover_score = 0.5;     // a re-detection must reach this to resume tracking
    int scales = 3;                 // scales searched per frame (1 = none)
    double scale_step = 1.04;       // ratio between neighbouring scales
    double scale_penalty = 0.985;   // score factor for a scale change (prefers staying put)
    double scale_rate = 0.5;        // share of a frame's scale pick applied (smooths noise)
    double anchor = 0.0;            // weight of the first frame's appearance kept in the
                                    // template, against drift from blend updates
    double motion_penalty = 0.2;    // NCC subtracted at the search window's edge, growing
                                    // with the square of the distance from the last centre
    bool keep_maps = true;          // GPU path: bring the chosen maps to the host (heatmaps)
    bool keep_device_maps = false;  // GPU path: keep each target's chosen map on the device
                                    // too (interop display without a host round trip)
};

struct StageTimes {
    // decode: host clock in the decode thread. upload: frame copy to the device plus patch
    // sampling; correlate, peak: CUDA events on the GPU path, host clocks on the CPU path.
    // render: host clock. latency: decode start to box ready (filled by the caller).
    double decode_ms = 0, upload_ms = 0, correlate_ms = 0, peak_ms = 0, render_ms = 0, latency_ms = 0;
};

struct TrackResult {
    BoxF box;
    double sub_cx = 0, sub_cy = 0;  // sub-pixel centre of the match
    float score = 0;                // NCC at the peak
    float confidence = 0;           // peak-to-sidelobe ratio of the chosen map
    bool lost = false;
    bool redetected = false;        // this frame ran a full-frame search
    StageTimes times;
};

// Tracks several targets through one pass per frame. With a CUDA kernel the whole search runs
// on the device: the frame (device memory, or host memory it copies itself) is sampled into
// one atlas of search patches (every target, every scale), correlated with one batched launch
// per template size where the kernel supports batches (else one launch per patch), and the
// motion-penalised peaks of all maps come back in one copy: one wait per frame, on an event.
// With a CPU kernel each target runs its own search on the host.
// Thread rules: one thread drives a MultiTracker; it owns its CUDA stream, buffers and kernels.
class MultiTracker {
public:
    explicit MultiTracker(TrackerOptions options);
    ~MultiTracker();
    MultiTracker(const MultiTracker&) = delete;
    MultiTracker& operator=(const MultiTracker&) = delete;

    // Checks the box (inside the frame, >= 4x4 px, textured) and builds the template from
    // `frame` (host or device luma). Returns the target's index, or -1 with *error.
    int add_target(ImageView frame, const BoxF& box, std::string* error);
    // Drops target i; later targets move down one index. Its pending template update is
    // discarded; the others' stay queued.
    void remove_target(int i);
    void clear();
    int size() const;
    // Tracks every target on this frame. Results stay valid until the next call.
    const std::vector<TrackResult>& update(ImageView frame);

    const TrackerOptions& options() const { return options_; }
    // New settings from the next update on; targets added later take their template settings
    // (max template side, anchor) from them. The kernel stays (set_kernel swaps it), and so do
    // the stream and buffers, so a decoder sharing the stream keeps working.
    void set_options(const TrackerOptions& options);
    const std::string& kernel_name() const;   // as asked ("auto" stays "auto")
    std::string kernel_summary() const;
    bool on_gpu() const;
    // Swaps the kernel (next update). False + *error when unknown or unavailable.
    bool set_kernel(const std::string& name, std::string* error);
    // The stream the GPU path runs on (nullptr on the CPU path): decoders and interop share it.
    Stream stream() const;
    // The last correlation map of target i's chosen scale, in host memory (empty when
    // options.keep_maps is off on the GPU path), and where it lies in the frame.
    MapView last_map(int i) const;
    // The same map in device memory (options.keep_device_maps, GPU path; else empty). Written
    // on stream() by update(): read it on that stream; valid until the next update().
    MapView last_device_map(int i) const;
    BoxF last_map_region(int i) const;
    const BoxF& box(int i) const;
    // Kernel launches of the last update (correlation only), for the batching measurements.
    int last_correlation_launches() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    TrackerOptions options_;
};

// Single-target front end of MultiTracker.
class Tracker {
public:
    explicit Tracker(TrackerOptions options);
    ~Tracker();
    // Checks the box (inside the frame, >= 4x4 px, textured) and builds the template.
    // Returns false with a message in *error when the box cannot be tracked.
    bool init(ImageView frame, const BoxF& box, std::string* error);
    TrackResult update(ImageView frame);

    const TrackerOptions& options() const { return multi_.options(); }
    const std::string& kernel_name() const { return multi_.kernel_name(); }
    // Swaps the kernel (takes effect on the next update). False + *error if unknown.
    bool set_kernel(const std::string& name, std::string* error) { return multi_.set_kernel(name, error); }
    // The last correlation map of the chosen scale (host memory) and where it lies in the
    // frame, for heatmap display.
    MapView last_map() const;
    BoxF last_map_region() const;

private:
    MultiTracker multi_;
};

// Resolves "auto" to the fastest kernel available here (a CUDA kernel with a GPU, else
// cpu_fast); other names pass through.
std::string resolve_kernel_name(const std::string& name);

}  // namespace corrtrack
