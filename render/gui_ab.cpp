// The A/B comparison's glue between the panel, the targets and AbCompare; see gui_ab.h.
#include "render/gui_ab.h"

#include <algorithm>
#include <cstdio>
#include <exception>

#include "render/heatmap_sink_cuda.h"

namespace corrtrack {
namespace {

const char* clock_of(const std::string& kernel) {
    const KernelEntry* k = find_kernel(resolve_kernel_name(kernel));
    return k && k->device == Device::kCuda ? "CUDA events" : "wall clock";
}

}  // namespace

AbRunner::AbRunner(AbModel& model, const GpuContext& gpu)
    : model_(model), ab_(gpu), heat_{make_heatmap_sink(), make_heatmap_sink()} {}

bool AbRunner::prepare() {
    if (ready_) return true;
    if (!ab_.set_kernels(model_.a, model_.b, &model_.error)) {
        model_.valid = false;
        return false;
    }
    ready_ = true;
    return true;
}

void AbRunner::run(const GuiTarget* t, const MultiTracker& tracker, const std::function<ImageView()>& host_luma) {
    if (!model_.enabled) return;
    if (model_.full_frame)
        run_full_frame(t, host_luma);
    else
        run_window(t, tracker, host_luma);
}

void AbRunner::run_window(const GuiTarget* t, const MultiTracker& tracker,
                          const std::function<ImageView()>& host_luma) {
    AbModel& ab = model_;
    if (!t || !t->updated) {
        ab.valid = false;
        ab.error = "needs a tracked target (one frame after selecting it)";
        return;
    }
    if (!prepare()) return;
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
    ab.timing = "host clock around each run, upload and download included";
    publish(buf);
}

void AbRunner::run_full_frame(const GuiTarget* t, const std::function<ImageView()>& host_luma) {
    AbModel& ab = model_;
    const auto now = std::chrono::steady_clock::now();
    if (!full_frame_due_ && now < next_full_frame_) return;  // the last comparison stays on screen
    full_frame_due_ = false;
    if (!prepare()) return;
    ab.error.clear();
    try {
        const ImageView frame = host_luma();
        float cx = frame.width / 2.0f, cy = frame.height / 2.0f;
        if (t) {
            cx = static_cast<float>(t->result.box.x + t->result.box.width / 2);
            cy = static_cast<float>(t->result.box.y + t->result.box.height / 2);
        }
        ab.valid = ab_.run_full_frame(frame, cx, cy, ab.templ_side, &ab.error);
    } catch (const std::exception& e) {
        ab.valid = false;
        ab.error = e.what();
    }
    const double took_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - now).count();
    next_full_frame_ =
        now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                  std::chrono::duration<double>(std::max(kFullFrameMinGapS, kFullFrameGapFactor * took_s)));
    if (!ab.valid) return;
    const Rect r = ab_.roi(), tr = ab_.templ_rect();
    char buf[192];
    std::snprintf(buf, sizeof buf, "full frame %dx%d, template %dx%d at (%d,%d) from the %s", r.width, r.height,
                  tr.width, tr.height, tr.x, tr.y, t ? "target's centre" : "frame centre");
    ab.timing = std::string("kernel-only times (A: ") + clock_of(ab.a) + ", B: " + clock_of(ab.b) + "); maps shown " +
                (ab_.view_factor() > 1 ? "max-pooled " + std::to_string(ab_.view_factor()) + "x" : "at full size");
    publish(buf);
}

void AbRunner::publish(const char* problem) {
    AbModel& ab = model_;
    ab.problem = problem;
    ab.ms_a = ab_.median_ms(0);
    ab.ms_b = ab_.median_ms(1);
    ab.ratio = ab_.median_ratio();
    ab.samples = ab_.samples();
    ab.max_diff = ab_.max_abs_diff();
    ab.peaks_agree = ab_.peaks_agree();
    ab.map_size[0] = ab_.map(0).width;
    ab.map_size[1] = ab_.map(0).height;
    ab.view_factor = ab_.view_factor();
    for (int i = 0; i < 2; ++i) {
        (i == 0 ? ab.peak_a : ab.peak_b)[0] = ab_.peak(i).x;
        (i == 0 ? ab.peak_a : ab.peak_b)[1] = ab_.peak(i).y;
    }
    dirty_ = true;
}

void AbRunner::kernels_changed() {
    ready_ = false;
    full_frame_due_ = true;
    model_.valid = false;
}

void AbRunner::restyle() { dirty_ = model_.valid; }

void AbRunner::upload_heatmaps(const HeatmapStyle& style, Stream stream) {
    if (!dirty_) return;
    for (int i = 0; i < 2; ++i) heat_[i]->upload(ab_.view_map(i), style, stream);
    dirty_ = false;
}

void AbRunner::release() {
    heat_[0].reset();
    heat_[1].reset();
    model_.heat_a = model_.heat_b = nullptr;
}

}  // namespace corrtrack
