// The GUI's A/B comparison: runs the A/B panel's two kernels (AbCompare, ab_compare.h) on the
// selected target's search window on every tracked frame, or on the whole frame at a bounded
// rate, fills the panel's AbModel with the result and owns the two heatmap textures it shows.
// Thread rules: main (GL) thread only; the heatmap sinks are GL textures (CUDA-GL interop with
// a GPU), so release() must run while the GL context is current.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "app/track/tracker.h"
#include "render/ab_compare.h"
#include "render/gui_targets.h"
#include "render/heatmap_sink.h"
#include "render/panels.h"

namespace corrtrack {

class AbRunner {
public:
    // Full frame: after a comparison that took T of wall time, the next one waits at least
    // max(kFullFrameMinGapS, kFullFrameGapFactor x T), so A/B takes at most a fifth of the GUI's
    // time even with slow CPU kernels; a settings change runs one at once.
    static constexpr double kFullFrameMinGapS = 1.0;
    static constexpr double kFullFrameGapFactor = 4.0;

    // `gpu` (the tracker's context) must outlive the runner.
    AbRunner(AbModel& model, const GpuContext& gpu);

    // Compares both kernels this frame: on `target`'s window (the selected one; nullptr: none),
    // or, in full-frame scope, on the whole frame when due. `host_luma` gives the frame in host
    // memory; it is called only when a comparison runs (it may download an NVDEC frame).
    void run(const GuiTarget* target, const MultiTracker& tracker, const std::function<ImageView()>& host_luma);
    void kernels_changed();  // the panel picked other kernels, scope or template, or toggled A/B
    void restyle();          // the heatmap style changed: colour the maps again
    void upload_heatmaps(const HeatmapStyle& style, Stream stream);
    const HeatmapSink* heat(int which) const { return heat_[which].get(); }
    void release();  // the GL textures (teardown)

private:
    bool prepare();  // the kernels set; false with the model's error
    void run_window(const GuiTarget* t, const MultiTracker& tracker, const std::function<ImageView()>& host_luma);
    void run_full_frame(const GuiTarget* t, const std::function<ImageView()>& host_luma);
    void publish(const char* problem);  // the comparison's results into the model

    AbModel& model_;
    AbCompare ab_;
    bool ready_ = false, dirty_ = false;
    bool full_frame_due_ = true;  // a settings change: run the next full-frame comparison at once
    std::chrono::steady_clock::time_point next_full_frame_{};
    std::unique_ptr<HeatmapSink> heat_[2];
};

}  // namespace corrtrack
