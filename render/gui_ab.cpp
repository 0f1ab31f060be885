// The A/B comparison's glue between the panel, the targets and AbCompare; see gui_ab.h.
#include "render/gui_ab.h"

#include <cstdio>
#include <exception>

#include "render/heatmap_sink_cuda.h"

namespace corrtrack {

AbRunner::AbRunner(AbModel& model, const GpuContext& gpu)
    : model_(model), ab_(gpu), heat_{make_heatmap_sink(), make_heatmap_sink()} {}

void AbRunner::run(const GuiTarget* t, const MultiTracker& tracker, const std::function<ImageView()>& host_luma) {
    AbModel& ab = model_;
    if (!ab.enabled) return;
    if (!t || !t->updated) {
        ab.valid = false;
        ab.error = "needs a tracked target (one frame after selecting it)";
        return;
    }
    if (!ready_) {
        if (!ab_.set_kernels(ab.a, ab.b, &ab.error)) {
            ab.valid = false;
            return;
        }
        ready_ = true;
    }
    ab.error.clear();
    try {
        ab.valid = ab_.run(host_luma(), tracker.last_map_region(t->tid), t->result.box, &ab.error);
    } catch (const std::exception& e) {
        ab.valid = false;
        ab.error = e.what();
    }
    if (!ab.valid) return;
    const Rect r = ab_.roi();
    char buf[128];
    std::snprintf(buf, sizeof buf, "target #%d: search %dx%d at (%d,%d), template %dx%d", t->id, r.width, r.height, r.x,
                  r.y, ab_.templ_size().width, ab_.templ_size().height);
    ab.problem = buf;
    ab.ms_a = ab_.median_ms(0);
    ab.ms_b = ab_.median_ms(1);
    ab.ratio = ab_.median_ratio();
    ab.samples = ab_.samples();
    ab.max_diff = ab_.max_abs_diff();
    ab.peaks_agree = ab_.peaks_agree();
    for (int i = 0; i < 2; ++i) {
        (i == 0 ? ab.peak_a : ab.peak_b)[0] = ab_.peak(i).x;
        (i == 0 ? ab.peak_a : ab.peak_b)[1] = ab_.peak(i).y;
    }
    dirty_ = true;
}

void AbRunner::kernels_changed() {
    ready_ = false;
    model_.valid = false;
}

void AbRunner::restyle() { dirty_ = model_.valid; }

void AbRunner::upload_heatmaps(const HeatmapStyle& style, Stream stream) {
    if (!dirty_) return;
    for (int i = 0; i < 2; ++i) heat_[i]->upload(ab_.map(i), style, stream);
    dirty_ = false;
}

void AbRunner::release() {
    heat_[0].reset();
    heat_[1].reset();
    model_.heat_a = model_.heat_b = nullptr;
}

}  // namespace corrtrack
