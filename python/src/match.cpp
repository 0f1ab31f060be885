// Bindings of the correlation library: Correlator (one kernel, its template and workspaces),
// PeakFinder, kernels(). The public match_template / Matcher / find_peak wrap these in
// corrtrack/__init__.py, which picks the caller's stream and allocates outputs with the
// caller's framework.
// Thread rules: any Python thread may call any method; calls on one Correlator or PeakFinder
// run one at a time (CallLock).
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <cuda_runtime.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "arrays.h"
#include "corrtrack/correlator.h"
#include "corrtrack/cuda_peak.h"
#include "corrtrack/peak.h"
#include "corrtrack/cuda_util.h"

namespace corrtrack::py {
namespace {

// Takes an object's call mutex, with the GIL released while waiting for it (its holder may be
// running with the GIL released and must be able to take it back), then holding the GIL again.
// Nobody waits for the mutex while holding the GIL, so the two cannot deadlock.
std::unique_lock<std::mutex> lock_call(std::mutex& m) {
    std::unique_lock<std::mutex> lock(m, std::try_to_lock);
    if (!lock.owns_lock()) {
        nb::gil_scoped_release unlocked;
        lock.lock();
    }
    return lock;
}

using RoiTuple = std::tuple<int, int, int, int>;

// One kernel with its template and workspaces: a Correlator plus a packed host copy of the
// template stack, so that a batch the kernel cannot run in one call runs one template at a
// time (the kernel then holds one slice; the stack is reloaded when a batch can run again).
class PyCorrelator {
public:
    PyCorrelator(const std::string& kernel, int device) : device_(device) {
        const KernelEntry* e = find_kernel(kernel);
        if (!e) {
            std::string why;
            make_correlator(kernel, &why);
            throw nb::value_error(why.c_str());
        }
        gpu_ = e->device == Device::kCuda;
        if (gpu_ && !cuda_available()) {
            std::string cpu;  // the registry's CPU kernels usable here, not a list written twice
            for (const KernelEntry& k : kernel_registry())
                if (k.device == Device::kCpu && k.available()) cpu += std::string(cpu.empty() ? "" : ", ") + k.name;
            throw std::runtime_error("kernel '" + kernel +
                                     "' needs a CUDA GPU and none was found (CPU kernels: " + cpu + ")");
        }
        if (!gpu_) device_ = -1;
        if (gpu_ && device_ < 0) CORRTRACK_CUDA(cudaGetDevice(&device_));  // e.g. a NumPy template
        DeviceGuard guard(device_);
        std::string why;
        corr_ = make_correlator(kernel, &why);
        if (!corr_) throw std::runtime_error(why);
    }

    // Copies the template(s): 2-D, or a 3-D stack of K templates.
    void set_template(const InArray& templ, std::uintptr_t stream) {
        const auto lock = lock_call(mutex_);
        const TemplateStack t = template_stack(templ);
        const Placement where = placement_of(templ, "templ");
        const std::size_t w = t.view.width, rows = t.view.height;
        host_.resize(w * rows);
        if (where.space == MemorySpace::kHost) {
            for (std::size_t y = 0; y < rows; ++y) std::memcpy(&host_[y * w], t.view.row(static_cast<int>(y)), w);
        } else {
            // The kernels compute the template's exact sums on the host anyway: one small copy,
            // after whatever wrote the template on the caller's stream.
            DeviceGuard guard(where.device);
            nb::gil_scoped_release unlocked;
            const auto s = as_cuda(as_stream(stream));
            CORRTRACK_CUDA(
                cudaMemcpy2DAsync(host_.data(), w, t.view.data, t.view.pitch, w, rows, cudaMemcpyDeviceToHost, s));
            CORRTRACK_CUDA(cudaStreamSynchronize(s));
        }
        templ_ = {t.view.width, t.height};
        count_ = t.count;
        stacked_ = t.stacked;
        loaded_ = kNothing;
    }

    // Correlates `image` (optionally inside roi = (x, y, w, h)) with the template(s) into out:
    // (h', w') or, for a stack, (K, h', w') float32, on the caller's stream.
    void run(const InArray& image, const OutArray& out, std::optional<RoiTuple> roi, std::uintptr_t stream) {
        const auto lock = lock_call(mutex_);
        const Call c = prepare(image, out, roi);
        DeviceGuard guard(device_);
        nb::gil_scoped_release unlocked;
        execute(c, as_stream(stream));
    }

    // The overhead benchmark's C++ baseline: host seconds for `calls` run()s of the same
    // arguments, checked once and queued from a C++ loop (no wait for the GPU at the end).
    double host_seconds(const InArray& image, const OutArray& out, std::optional<RoiTuple> roi, std::uintptr_t stream,
                        int calls) {
        const auto lock = lock_call(mutex_);
        const Call c = prepare(image, out, roi);
        DeviceGuard guard(device_);
        nb::gil_scoped_release unlocked;
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i) execute(c, as_stream(stream));
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }

    std::string name() const { return corr_->info().name; }
    std::string device() const { return gpu_ ? "cuda" : "cpu"; }
    int device_id() const { return device_; }
    std::string summary() const { return corr_->info().summary; }

private:
    static constexpr int kNothing = -2, kWholeStack = -1;

    struct Call {
        ImageView frame;
        NccProblem problem;
        MapView maps;
    };

    // Every check of run()'s arguments, with the GIL held.
    Call prepare(const InArray& image, const OutArray& out, const std::optional<RoiTuple>& roi) const {
        if (count_ == 0) throw nb::value_error("no template: call set_template first");
        const ImageView frame = image_view(image, "image");
        const Placement where = placement_of(image, "image");
        check_placement(where, "image");
        const Placement out_where = placement_of(out, "out");
        if (out_where.space != where.space || out_where.device != where.device)
            throw nb::value_error(("out is in " + placement_text(out_where) + " but image is in " +
                                   placement_text(where) + "; both must be on the same device")
                                      .c_str());
        NccProblem p = NccProblem::full_frame(frame.size(), templ_);
        if (roi) {
            const auto [x, y, w, h] = *roi;
            p.roi = {x, y, w, h};
        }
        p.templates = count_;
        if (std::string err = validate_problem(p); !err.empty()) throw nb::value_error(err.c_str());
        return {frame, p, map_view(out, p.out_size(), count_, stacked_, "out")};
    }

    // The kernel call(s), GIL released: one batched call, or one per template where the kernel
    // says no to batches.
    void execute(const Call& c, Stream s) {
        std::string why;
        if (corr_->supports(c.problem, &why)) {
            load(kWholeStack, s);
            corr_->run(c.frame, c.problem, c.maps, s);
            return;
        }
        NccProblem one = c.problem;
        one.templates = 1;
        std::string single_why;
        if (count_ == 1 || !corr_->supports(one, &single_why))
            throw std::invalid_argument("kernel '" + corr_->info().name +
                                        "' does not support this problem: " + (count_ == 1 ? why : single_why));
        const Size o = c.problem.out_size();
        for (int k = 0; k < count_; ++k) {
            load(k, s);
            corr_->run(c.frame, one, {c.maps.row(k * o.height), o.width, o.height, c.maps.pitch, c.maps.space}, s);
        }
    }

    void check_placement(const Placement& where, const char* what) const {
        if (!gpu_ && where.space != MemorySpace::kHost)
            throw nb::value_error((std::string("kernel '") + corr_->info().name + "' runs on the CPU but " + what +
                                   " is on " + placement_text(where) +
                                   "; use a CUDA kernel (or 'auto') for device arrays")
                                      .c_str());
        if (gpu_ && where.space != MemorySpace::kDevice)
            throw nb::value_error(
                (std::string("kernel '") + corr_->info().name + "' runs on the GPU but " + what +
                 " is in host memory; pass a CuPy array or a PyTorch CUDA tensor, or use a CPU kernel")
                    .c_str());
        if (gpu_ && where.device != device_)
            throw nb::value_error((std::string(what) + " is on cuda:" + std::to_string(where.device) +
                                   " but this correlator was made for cuda:" + std::to_string(device_))
                                      .c_str());
    }

    // Makes the kernel hold template k of the stack (or the whole stack).
    void load(int which, Stream s) {
        if (loaded_ == which) return;
        const std::size_t w = templ_.width;
        const int first = which == kWholeStack ? 0 : which;
        const int rows = which == kWholeStack ? templ_.height * count_ : templ_.height;
        corr_->set_template({host_.data() + static_cast<std::size_t>(first) * templ_.height * w, templ_.width, rows, w,
                             MemorySpace::kHost},
                            s);
        loaded_ = which;
    }

    std::mutex mutex_;  // every call: the kernel's workspaces and the loaded template are shared
    std::unique_ptr<Correlator> corr_;
    bool gpu_ = false;
    int device_ = -1;
    std::vector<std::uint8_t> host_;
    Size templ_;
    int count_ = 0;
    bool stacked_ = false;
    int loaded_ = kNothing;
};

// Peak search of a host map (find_peak) or a device map (CudaPeakFinder on the caller's
// stream; the result waits for it).
class PyPeakFinder {
public:
    Peak find(const InArray& map, int exclusion_radius, std::uintptr_t stream) {
        const MapView m = input_map_view(map, "map");
        const Placement where = placement_of(map, "map");
        PeakOptions opt;
        opt.exclusion_radius = exclusion_radius;
        Peak p;
        {
            const auto lock = lock_call(mutex_);
            nb::gil_scoped_release unlocked;
            p = search(m, where, opt, stream);
        }
        // Nothing above find_peak's start value -2 (an all-NaN map): no peak to report.
        if (!(p.score > -2.0f)) throw nb::value_error("map has no peak: every value is NaN (or <= -2)");
        return p;
    }

private:
    Peak search(const MapView& m, const Placement& where, const PeakOptions& opt, std::uintptr_t stream) {
        if (where.space == MemorySpace::kHost) return find_peak(m, opt);
        DeviceGuard guard(where.device);
        if (!gpu_ || gpu_device_ != where.device) {
            gpu_ = std::make_unique<CudaPeakFinder>();
            gpu_device_ = where.device;
        }
        gpu_->find(m, as_stream(stream), opt);
        return gpu_->get();
    }

    std::mutex mutex_;  // the GPU finder and its buffers
    std::unique_ptr<CudaPeakFinder> gpu_;
    int gpu_device_ = -1;
};

std::vector<std::tuple<std::string, std::string, bool, std::string>> kernel_list(bool variants) {
    std::vector<std::tuple<std::string, std::string, bool, std::string>> out;
    for (const auto* list : {&kernel_registry(), &kernel_variants()}) {
        if (list == &kernel_variants() && !variants) break;
        for (const KernelEntry& e : *list)
            out.emplace_back(e.name, e.device == Device::kCuda ? "cuda" : "cpu", e.available(), e.summary);
    }
    return out;
}

}  // namespace

void register_match(nb::module_& m) {
    m.def(
        "_resolve_kernel", [](const std::string& name, bool have_gpu) { return resolve_kernel(name, have_gpu); },
        nb::arg("name"), nb::arg("have_gpu"),
        "The kernel a name stands for: 'auto' is 'auto' with a usable GPU, else 'cpu_fast' (the registry's rule).");
    nb::class_<PyCorrelator>(m, "Correlator",
                             "One correlation kernel with its template and workspaces (sized once per shape).\n"
                             "Use corrtrack.Matcher or corrtrack.match_template rather than this class.")
        .def(nb::init<const std::string&, int>(), nb::arg("kernel"), nb::arg("device") = -1,
             "Creates kernel `kernel` (a name from kernels(), or a tuning variant) on CUDA device `device`.")
        .def("set_template", &PyCorrelator::set_template, nb::arg("templ"), nb::arg("stream") = 0,
             "Copies a uint8 template (h, w) or stack (K, h, w); a device template is read on `stream`.")
        .def("run", &PyCorrelator::run, nb::arg("image"), nb::arg("out"), nb::arg("roi") = nb::none(),
             nb::arg("stream") = 0,
             "Writes the valid-mode TM_CCOEFF_NORMED map(s) of `image` (uint8, 2-D) inside roi=(x, y, w, h)\n"
             "into `out` (float32, (h', w') or (K, h', w')), on CUDA stream `stream` for device arrays.")
        .def("host_seconds", &PyCorrelator::host_seconds, nb::arg("image"), nb::arg("out"), nb::arg("roi"),
             nb::arg("stream"), nb::arg("calls"),
             "Host seconds of `calls` run()s queued from a C++ loop (the binding-overhead benchmark's baseline).")
        .def_prop_ro("name", &PyCorrelator::name)
        .def_prop_ro("device", &PyCorrelator::device, "'cpu' or 'cuda'")
        .def_prop_ro("device_id", &PyCorrelator::device_id, "CUDA device ordinal, -1 for CPU kernels")
        .def_prop_ro("summary", &PyCorrelator::summary);

    nb::class_<Peak>(m, "Peak", "A map's peak: integer argmax, sub-pixel position, score and peak-to-sidelobe ratio.")
        .def_ro("x", &Peak::x, "column of the integer argmax (map coordinates)")
        .def_ro("y", &Peak::y, "row of the integer argmax")
        .def_ro("sub_x", &Peak::sub_x, "sub-pixel column: x plus the parabola vertex offset (|offset| <= 0.5)")
        .def_ro("sub_y", &Peak::sub_y, "sub-pixel row")
        .def_ro("score", &Peak::score, "map value at the argmax")
        .def_ro("second", &Peak::second, "best value outside the exclusion zone around the peak")
        .def_ro("psr", &Peak::psr, "peak-to-sidelobe ratio: (score - mean) / stddev outside the zone")
        .def("__repr__", [](const Peak& p) {
            char buf[200];
            std::snprintf(buf, sizeof buf,
                          "Peak(x=%d, y=%d, sub_x=%.4f, sub_y=%.4f, score=%.6f, second=%.6f, psr=%.3f)", p.x, p.y,
                          p.sub_x, p.sub_y, p.score, p.second, p.psr);
            return std::string(buf);
        });

    nb::class_<PyPeakFinder>(m, "PeakFinder", "Peak search on host maps (CPU) or device maps (CUDA).")
        .def(nb::init<>())
        .def("find", &PyPeakFinder::find, nb::arg("map"), nb::arg("exclusion_radius") = 0, nb::arg("stream") = 0,
             "Peak of a float32 2-D map; a device map is searched on `stream` and waited for.\n"
             "A map with no value above -2 (all NaN) raises ValueError.");

    m.def("_kernel_list", &kernel_list, nb::arg("variants") = false,
          "(name, device, available, summary) of every registered kernel (and tuning variant).");
    m.def("cuda_available", &cuda_available, "True when a usable CUDA GPU is present.");
    m.def("cuda_device_description", &cuda_device_description,
          "'NVIDIA H200 (sm_90, 132 SMs, CUDA driver 13.0)', or '' without a GPU.");
}

}  // namespace corrtrack::py
