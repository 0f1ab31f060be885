// The correlation library's public interface: the NCC problem, the Correlator every kernel
// implements, and the explicit kernel registry.
// Thread rules: a Correlator is used by one thread at a time; run() is asynchronous on the
// caller's stream for CUDA kernels (the caller synchronizes), synchronous for CPU kernels.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "corrtrack/image.h"

namespace corrtrack {

// One search: frame size, template size, and the rectangle of the frame to search (roi).
// The output holds the valid positions only: (roi.w - templ.w + 1) x (roi.h - templ.h + 1).
// templates > 1 asks for that many templates of the same size in one pass: the template image
// given to set_template() holds them stacked vertically (template k in rows
// [k * templ.h, (k + 1) * templ.h)), and the output stacks their maps the same way (map k in
// rows [k * out.h, (k + 1) * out.h)). Template k searches roi shifted down by
// k * template_roi_step rows: step 0 is the JPDC one-to-many search (every template against
// the same roi); step == roi.height searches an atlas of equal patches stacked in the frame
// (one patch per template, the multi-target batch). Every shifted roi must lie in the frame.
struct NccProblem {
    Size frame;
    Size templ;
    Rect roi;
    int templates = 1;
    int template_roi_step =
        0;  // rows between the rois of successive templates: 0 = all templates search the same roi (JPDC one-to-many); roi.height = one patch per template stacked in an atlas (template k searches roi shifted down by k*step)

    // The roi template k searches.
    Rect roi_of(int k) const { return {roi.x, roi.y + k * template_roi_step, roi.width, roi.height}; }

    Size out_size() const { return {roi.width - templ.width + 1, roi.height - templ.height + 1}; }
    bool operator==(const NccProblem& o) const {
        return frame == o.frame && templ == o.templ && roi == o.roi && templates == o.templates &&
               template_roi_step == o.template_roi_step;
    }
    bool operator!=(const NccProblem& o) const { return !(*this == o); }
    static NccProblem full_frame(Size frame, Size templ) {
        return {frame, templ, Rect{0, 0, frame.width, frame.height}, 1, 0};
    }
};

// Checks what every kernel requires: template 1..256 a side, roi inside the frame, template
// no larger than the roi, at least one template, a step >= 0 and every template's (shifted)
// roi inside the frame. Returns an empty string when valid, else the reason.
std::string validate_problem(const NccProblem& p);

enum class Device { kCpu, kCuda };

struct KernelInfo {
    std::string name;
    Device device = Device::kCpu;
    std::string summary;  // one line for `corrtrack kernels` and the GUI
};

class Correlator {
public:
    virtual ~Correlator() = default;
    virtual const KernelInfo& info() const = 0;
    // Says no instead of computing something wrong; `why` (optional) receives the reason.
    virtual bool supports(const NccProblem& p, std::string* why = nullptr) const = 0;
    // Keeps a copy of the template (and whatever it precomputes from it).
    virtual void set_template(ImageView templ, Stream stream) = 0;
    // templ must have been set with the size in p.templ (times p.templates rows, stacked); out
    // must be p.out_size() per template (p.templates maps stacked). Workspaces are sized on the
    // first call for a shape and reused after.
    virtual void run(ImageView frame, const NccProblem& p, MapView out, Stream stream) = 0;
    // True when the next run(p) will only queue work a CUDA graph can capture (launches,
    // copies between device and pinned memory): no host wait, allocation or attribute change.
    // Asked before a capture, with the template set; it may prepare for it (auto sets its
    // choice's template here). The default says no: the caller runs it uncaptured.
    virtual bool capturable(const NccProblem& p, Stream stream) {
        (void)p;
        (void)stream;
        return false;
    }
};

struct KernelEntry {
    const char* name;
    Device device;
    const char* summary;
    bool (*available)();                      // can it run on this machine right now?
    std::unique_ptr<Correlator> (*create)();  // only call when available()
};

// Explicit, ordered list: cpu_ref first, then CPU kernels, then CUDA kernels.
const std::vector<KernelEntry>& kernel_registry();
// Tuning variants of registry kernels (e.g. cuda_dp4a_ilp_c2/c4/c8): not listed for users,
// but the bench times them and the sweep test checks them.
const std::vector<KernelEntry>& kernel_variants();
// Looks in the registry, then in the variants.
const KernelEntry* find_kernel(std::string_view name);
// nullptr when the name is unknown or the kernel cannot run here; `why` says which.
std::unique_ptr<Correlator> make_correlator(std::string_view name, std::string* why = nullptr);
// A registered kernel's (or variant's) name, device and summary: the one place they are
// written. Each kernel's info() is built from it, so `corrtrack kernels`, Python's kernels()
// and a kernel's own info() cannot disagree. Throws std::logic_error for an unknown name.
KernelInfo registry_info(std::string_view name);
// "" when e can run here, else why not ("no usable CUDA GPU", "needs compute capability 8.0+ ...").
std::string unavailable_reason(const KernelEntry& e);
// The kernel "auto" stands for: "auto" (timed CUDA kernels) with a usable GPU, else
// "cpu_fast". Every other name comes back as given.
std::string resolve_kernel(std::string_view name, bool have_gpu);

// True when a CUDA device is usable (checked once, cached).
bool cuda_available();
// "NVIDIA H200 (sm_90, driver 13.0)" or "" without a GPU.
std::string cuda_device_description();

}  // namespace corrtrack
