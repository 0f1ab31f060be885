// The tracker's search backends: the policy (target.h) asks for patches to be sampled out of
// the frame and correlated with templates; a backend runs a whole list of such requests and
// returns one ranked peak per request. The CPU backend runs them one by one on the host; the
// GPU backend samples all patches into one atlas, correlates each template size in one
// batched launch and brings every peak back in one copy. Both sample from the same pyramid
// with the same arithmetic, and rank with the same host cue code (search_cues.h), so they
// give the same peaks.
// Thread rules: one thread drives a backend; it owns its kernels and buffers and works on its
// GPU context's compute stream.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/gpu/gpu_context.h"
#include "app/track/colour_model.h"
#include "app/track/correlation_filter.h"
#include "app/track/device_search.h"  // RankedPeak
#include "app/track/types.h"
#include "corrtrack/correlator.h"

namespace corrtrack {

// A template as the backends see it: host pixels, a key unique among live templates, and a
// version that changes whenever the pixels do (backends cache per key and version).
struct TemplateRef {
    std::uint64_t key = 0;
    std::uint64_t version = 0;
    ImageView image;     // host memory, packed rows
    ImageView gradient;  // its gradient channel (gradient.h), same size; empty when off
};

// Backends cache a template's gradient channel under its key with this bit set.
constexpr std::uint64_t kGradientKey = std::uint64_t{1} << 63;

// Sample the patch whose pixel (u, v) covers the frame rectangle [ox + u*scale, ...) and
// correlate `templ` over all of it; rank the peak with a motion penalty (NCC `penalty` at the
// patch's edge, growing with the square of the distance from its centre; 0: none).
struct SearchRequest {
    TemplateRef templ;
    double ox = 0, oy = 0, scale = 1;
    Size patch;
    double penalty = 0;
    // With templ.gradient: the map is grey + gradient_weight x (gradient map - grey map).
    float gradient_weight = 0;
    // With colour.likelihood and a frame with host chroma: the map is (1 - w) x NCC +
    // w x (2 x colour score - 1), where the colour score is the mean target likelihood of the
    // box at each position. Both cues are applied by one host definition (search_cues.h): the
    // GPU copies the maps of the requests that carry one to the host with its peaks.
    ColourCue colour;
    // With filter.filter (trained on windows of this request's patch size): the target's
    // correlation filter answers over the window, and the ranking map is (1 - w) x NCC + w x
    // that answer, w from the two maps' peak-to-sidelobe ratios (filter_weight). Applied
    // first, before the colour cue, by the same host code.
    FilterCue filter;
    // Look-alikes (distractor templates of the template's size, DaSiamRPN's idea): where the
    // best of their NCC maps exceeds the template's, the ranking map loses distractor_weight
    // x the difference, so a position that matches a known look-alike better than the target
    // ranks lower. The score stays the template's NCC.
    static constexpr int kMaxDistractors = 2;
    TemplateRef distractors[kMaxDistractors];
    int distractor_count = 0;
    float distractor_weight = 0;
    static_assert(kMaxDistractors == RankedPeak::kLookalikes, "one found look-alike per distractor");
    // Where each look-alike stood last (map coordinates: its template's corner): it is looked
    // for again within half a template of there. One found there at lookalike_claim or more
    // that has not moved (a person standing, a parked car) claims its place: the positions
    // within half a template of it leave the ranking map, unless the target's own prediction
    // (the window's centre) lies there too. Identity through a crossing: when the target passes
    // a still look-alike and is hidden, the box does not drop onto the look-alike. 0: no claims.
    float distractor_x[kMaxDistractors] = {}, distractor_y[kMaxDistractors] = {};
    float lookalike_claim = 0;
    static constexpr float kLookalikeFound = 0.5f;  // found again where its NCC reaches this
    // The caller reads the hit's rival fields (RankedPeak): both backends fill them only where
    // this is set (the GPU ranks such requests on the host).
    bool want_rival = false;
};

class SearchBackend {
public:
    virtual ~SearchBackend() = default;
    virtual bool on_gpu() const = 0;
    virtual Stream stream() const = 0;  // nullptr on the CPU
    virtual std::string kernel_summary() const = 0;

    // The frame of the next calls (host memory, or device memory on the GPU). Returns the
    // host time spent (a copy to the device), added to the upload stage.
    virtual double begin_frame(const FrameView& frame) = 0;
    // Runs every request on the current frame; hits[i] is request i's peak. A frame has two
    // passes (0: tracking, 1: re-detection); with keep_maps, map(pass, i) shows request i's
    // map (host memory) until the same pass of the next frame. times: null when no stage
    // split is wanted (the GPU then records no timing events).
    virtual void search(int pass, const std::vector<SearchRequest>& requests, std::vector<RankedPeak>& hits,
                        StageTimes* times) = 0;
    virtual MapView map(int pass, std::size_t i) const = 0;
    // The same map in device memory (GPU path with keep_device_maps; else empty), valid on
    // stream() until the same pass of the next frame.
    virtual MapView device_map(int pass, std::size_t i) const = 0;
    // Samples patches (request.templ unused) from the current frame into a packed buffer.
    // The GPU backend queues the work and returns; sampled(i) waits for it (by then long
    // done) and points at patch i's pixels (width = patch width) until the next sample().
    virtual void sample(const std::vector<SearchRequest>& patches) = 0;
    virtual const std::uint8_t* sampled(std::size_t i) = 0;
    // The template with this key is gone: drop whatever was cached for it.
    virtual void forget(std::uint64_t key) = 0;
    // Correlation launches and map positions of the last search (batching and budget checks).
    virtual int launches() const = 0;
    virtual long positions() const = 0;
    // Whether the last search ran as one CUDA graph launch (GPU; else false).
    virtual bool replayed() const { return false; }
    virtual void set_keep_maps(bool host, bool device) = 0;
};

// "auto" picks the fastest CUDA kernel where `gpu` has a GPU, else cpu_fast. nullptr + *error
// when the kernel is unknown or cannot run here (a CUDA kernel on a context without a GPU). A
// GPU backend works on gpu.compute(); `gpu` must outlive it.
std::unique_ptr<SearchBackend> make_search_backend(const std::string& kernel, const GpuContext& gpu,
                                                   std::string* error);

}  // namespace corrtrack
