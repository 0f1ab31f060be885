// The GUI's A/B comparison: runs the A/B panel's two kernels (AbCompare, ab_compare.h) on the
// selected target's problem on every tracked frame while enabled, fills the panel's AbModel
// with the result and owns the two heatmap textures it shows.
// Thread rules: main (GL) thread only; the heatmap sinks are GL textures (CUDA-GL interop with
// a GPU), so release() must run while the GL context is current.
#pragma once

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
    // `gpu` (the tracker's context) must outlive the runner.
    AbRunner(AbModel& model, const GpuContext& gpu);

    // Compares both kernels on `target` (the selected one; nullptr: none) this frame. `host_luma`
    // gives the frame in host memory; it is called only when a comparison runs (it may download
    // an NVDEC frame).
    void run(const GuiTarget* target, const MultiTracker& tracker, const std::function<ImageView()>& host_luma);
    void kernels_changed();  // the panel picked other kernels, or toggled A/B
    void restyle();          // the heatmap style changed: colour the maps again
    void upload_heatmaps(const HeatmapStyle& style, Stream stream);
    const HeatmapSink* heat(int which) const { return heat_[which].get(); }
    void release();  // the GL textures (teardown)

private:
    AbModel& model_;
    AbCompare ab_;
    bool ready_ = false, dirty_ = false;
    std::unique_ptr<HeatmapSink> heat_[2];
};

}  // namespace corrtrack
