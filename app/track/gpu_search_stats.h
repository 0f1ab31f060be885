// Host-time counters of the GPU search for CORRTRACK_GPU_SEARCH_STATS=1 (notes/PERF.md reads
// them): where a frame's host time goes, call by call, printed when the search goes.
// Thread rules: owned by one GpuSearch, used on its thread.
#pragma once

#include <chrono>
#include <cstdio>

#include "app/track/search_graph.h"

namespace corrtrack {

struct GpuSearchStats {
    // The host phases of a frame, in order; mark() moves from one to the next.
    enum Phase { kNone = -1, kBeforeSearch, kEnqueue, kWait, kAfterSearch, kSample, kPhases };
    double phase_ms[kPhases] = {};
    double searches = 0, gpu_ms = 0, gpu_sample_ms = 0, gpu_correlate_ms = 0, gpu_peaks_ms = 0;
    // Inside the enqueue: row uploads and level building, correlate(), set_template, run,
    // launches and event records.
    double upload_ms = 0, prepare_ms = 0, correlate_ms = 0, set_template_ms = 0, run_ms = 0;
    double sample_launch_ms = 0, peaks_launch_ms = 0, event_ms = 0;
    double graph_ms = 0;                       // capture, update and launch of the searches that ran as graphs
    double host_rank_ms = 0, host_ranked = 0;  // the requests ranked by the shared host cues
    double host_rivals = 0;                    // the requests that only had their rival found there
    SearchGraphCounts graph;
    double set_template_calls = 0, set_template_px = 0, run_calls = 0, halvings = 0;
    long frames = 0, host_frames = 0, pageable_frames = 0, late_uploads = 0, uploaded_rows = 0, frame_rows = 0;

    void mark(Phase next) {
        const auto now = std::chrono::steady_clock::now();
        if (phase_ >= 0) phase_ms[phase_] += std::chrono::duration<double, std::milli>(now - last_).count();
        last_ = now;
        phase_ = next;
    }
    void drop_phase() { phase_ = kNone; }
    void print(std::FILE* out) const;

private:
    Phase phase_ = kNone;
    std::chrono::steady_clock::time_point last_;
};

// Adds the scope's host time (ms) to *into; does nothing for a null `into` (stats off).
class StatClock {
public:
    explicit StatClock(double* into) : into_(into) {
        if (into_) t0_ = std::chrono::steady_clock::now();
    }
    ~StatClock() {
        if (into_) *into_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
    }
    StatClock(const StatClock&) = delete;
    StatClock& operator=(const StatClock&) = delete;

private:
    double* into_;
    std::chrono::steady_clock::time_point t0_;
};

}  // namespace corrtrack
