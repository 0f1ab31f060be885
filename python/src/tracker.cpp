// The tracker binding: MultiTracker (app/track/tracker.h) with its stable target ids, and the
// tracker options as keyword arguments (checked by the tracker's own validate()). Kept to
// this one file so that it follows the tracker's API alone.
// Thread rules: any Python thread may call any method; calls on one Tracker run one at a time
// (a mutex, taken after the GIL is released so that a waiting thread never blocks the others).
#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <string>
#include <tuple>
#include <vector>

#include "arrays.h"
#include "bindings.h"
#include "corrtrack/cuda_util.h"

namespace corrtrack::py {
namespace {

using BoxTuple = std::tuple<double, double, double, double>;

// name -> how to read it from Python into TrackerOptions, and its value as a Python object.
struct OptionField {
    std::function<void(TrackerOptions&, nb::handle)> set;
    std::function<nb::object(const TrackerOptions&)> get;
};

template <class T>
OptionField field(T TrackerOptions::*member) {
    return {[member](TrackerOptions& o, nb::handle v) { o.*member = nb::cast<T>(v); },
            [member](const TrackerOptions& o) { return nb::cast(o.*member); }};
}

const std::map<std::string, OptionField>& option_fields() {
    static const std::map<std::string, OptionField> fields = [] {
        std::map<std::string, OptionField> f = {
            {"kernel", field(&TrackerOptions::kernel)},
            {"scale_fit", field(&TrackerOptions::scale_fit)},
            {"update",
             {[](TrackerOptions& o, nb::handle v) {
                  const std::string s = nb::cast<std::string>(v);
                  if (!parse_update_policy(s, &o.update))
                      throw nb::value_error(("update must be 'none', 'keyframe' or 'blend', got '" + s + "'").c_str());
              },
              [](const TrackerOptions& o) { return nb::cast(std::string(to_string(o.update))); }}},
        };
        // The numeric options, keyed by field name, from the tracker's table (options.h).
        for (const TrackerOptionRange& r : tracker_option_ranges())
            f.emplace(r.field, r.real ? field(r.real) : field(r.integer));
        return f;
    }();
    return fields;
}

nb::dict options_dict(const TrackerOptions& o) {
    nb::dict d;
    for (const auto& [name, f] : option_fields()) d[name.c_str()] = f.get(o);
    return d;
}

struct PyTrackResult {
    long id = 0;
    TrackResult r;
};

class PyTracker {
public:
    explicit PyTracker(const TrackerOptions& options) : tracker_(options, gpu_) {
        if (const std::string bad = validate(options); !bad.empty()) throw nb::value_error(bad.c_str());
        // Resolve the kernel now: an unknown one fails here, and on_gpu() is known before add().
        std::string error;
        if (!tracker_.set_kernel(options.kernel, &error)) throw nb::value_error(error.c_str());
        on_gpu_ = tracker_.on_gpu();
        kernel_ = tracker_.kernel_name();
    }
    ~PyTracker() {
        if (ready_) cudaEventDestroy(ready_);
        if (done_) cudaEventDestroy(done_);
    }  // then tracker_, then gpu_ (declared first)

    long add(const InArray& frame, BoxTuple box, std::uintptr_t stream) {
        const ImageView view = checked_frame(frame);
        const auto [x, y, w, h] = box;
        std::string error;
        TargetId id;
        {
            nb::gil_scoped_release unlocked;
            const std::lock_guard<std::mutex> lock(mutex_);
            after_caller(view, stream);
            id = tracker_.add_target(view, BoxF{x, y, w, h}, &error);
            before_caller(view, stream);
        }
        if (id < 0) throw nb::value_error(error.c_str());
        return id;
    }

    std::vector<PyTrackResult> update(const InArray& frame, std::uintptr_t stream) {
        const ImageView view = checked_frame(frame);
        std::vector<PyTrackResult> out;
        nb::gil_scoped_release unlocked;
        const std::lock_guard<std::mutex> lock(mutex_);  // released before the GIL is taken back
        after_caller(view, stream);
        const std::vector<TrackResult>& results = tracker_.update(view);
        before_caller(view, stream);
        out.reserve(results.size());
        for (const TrackResult& r : results) out.push_back({r.id, r});
        return out;
    }

    void remove(long id) {
        bool removed;
        {
            nb::gil_scoped_release unlocked;
            const std::lock_guard<std::mutex> lock(mutex_);
            removed = tracker_.remove_target(static_cast<TargetId>(id));
        }
        if (!removed) throw nb::key_error(("no target with id " + std::to_string(id)).c_str());
    }

    void clear() {
        nb::gil_scoped_release unlocked;
        const std::lock_guard<std::mutex> lock(mutex_);
        tracker_.clear();
    }

    std::vector<long> ids() {
        nb::gil_scoped_release unlocked;
        const std::lock_guard<std::mutex> lock(mutex_);
        const std::vector<TargetId> ids = tracker_.ids();
        return {ids.begin(), ids.end()};
    }
    BoxTuple box(long id) {
        bool found;
        BoxF b;
        {
            nb::gil_scoped_release unlocked;
            const std::lock_guard<std::mutex> lock(mutex_);
            const std::vector<TargetId> ids = tracker_.ids();
            found = std::find(ids.begin(), ids.end(), static_cast<TargetId>(id)) != ids.end();
            if (found) b = tracker_.box(static_cast<TargetId>(id));
        }
        if (!found) throw nb::key_error(("no target with id " + std::to_string(id)).c_str());
        return {b.x, b.y, b.width, b.height};
    }
    bool on_gpu() const { return on_gpu_; }
    const std::string& kernel() const { return kernel_; }
    std::string kernel_summary() {
        return locked([this] { return tracker_.kernel_summary(); });
    }
    nb::dict options() {
        return options_dict(locked([this] { return tracker_.options(); }));
    }

private:
    // f() under the mutex, with the GIL released while waiting for it and while f runs.
    template <class F>
    auto locked(F f) -> decltype(f()) {
        nb::gil_scoped_release unlocked;
        const std::lock_guard<std::mutex> lock(mutex_);
        return f();
    }

    ImageView checked_frame(const InArray& frame) {
        const ImageView view = image_view(frame, "frame");
        if (view.space == MemorySpace::kDevice && !on_gpu_)
            throw nb::value_error(
                ("this tracker runs on the CPU (kernel " + kernel_ + ") and needs frames in host memory (NumPy)")
                    .c_str());
        return view;
    }
    // A device frame was written on the caller's stream: the tracker's stream waits for it.
    void after_caller(const ImageView& view, std::uintptr_t stream) {
        if (view.space != MemorySpace::kDevice) return;
        if (!ready_) CORRTRACK_CUDA(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming));
        CORRTRACK_CUDA(cudaEventRecord(ready_, as_cuda(as_stream(stream))));
        CORRTRACK_CUDA(cudaStreamWaitEvent(as_cuda(tracker_.stream()), ready_, 0));
    }
    // The tracker may still read the frame on its stream after returning (template updates are
    // sampled from it): work the caller queues next, reuse of the frame's memory included, waits.
    void before_caller(const ImageView& view, std::uintptr_t stream) {
        if (view.space != MemorySpace::kDevice) return;
        if (!done_) CORRTRACK_CUDA(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
        CORRTRACK_CUDA(cudaEventRecord(done_, as_cuda(tracker_.stream())));
        CORRTRACK_CUDA(cudaStreamWaitEvent(as_cuda(as_stream(stream)), done_, 0));
    }

    // The Python object is this tracker's composition root: its GPU context is made first and
    // destroyed last (members go in reverse order), after the tracker that uses its streams.
    const GpuContext gpu_;
    MultiTracker tracker_;
    cudaEvent_t ready_ = nullptr, done_ = nullptr;
    // Serializes every call that reads or changes tracker_ or the events: two threads'
    // update()s on one tracker corrupted its state (issue 28).
    std::mutex mutex_;
    bool on_gpu_ = false;  // fixed once the constructor resolved the kernel: read without the mutex
    std::string kernel_;
};

}  // namespace

TrackerOptions tracker_options_from(const nb::dict& options) {
    TrackerOptions o;
    for (const auto& [key, value] : options) {
        const std::string name = nb::cast<std::string>(key);
        const auto it = option_fields().find(name);
        if (it == option_fields().end()) {
            std::string known;
            for (const auto& [n, f] : option_fields()) known += (known.empty() ? "" : ", ") + n;
            throw nb::type_error(("unknown tracker option '" + name + "' (known: " + known + ")").c_str());
        }
        try {
            it->second.set(o, value);
        } catch (const nb::cast_error&) {
            throw nb::type_error(("tracker option '" + name + "' has the wrong type (" +
                                  nb::cast<std::string>(nb::str(nb::handle(value.type()).attr("__name__"))) + ")")
                                     .c_str());
        }
    }
    return o;
}

void register_tracker(nb::module_& m) {
    nb::class_<PyTrackResult>(m, "TrackResult", "One target's result on one frame.")
        .def_ro("id", &PyTrackResult::id, "the target's id (from Tracker.add)")
        .def_prop_ro(
            "box",
            [](const PyTrackResult& t) {
                return BoxTuple{t.r.box.x, t.r.box.y, t.r.box.width, t.r.box.height};
            },
            "(x, y, w, h): top-left corner and size in pixels, 0-based")
        .def_prop_ro(
            "centre", [](const PyTrackResult& t) { return std::make_tuple(t.r.sub_cx, t.r.sub_cy); },
            "(x, y): sub-pixel centre of the match")
        .def_prop_ro(
            "score", [](const PyTrackResult& t) { return t.r.score; }, "NCC at the peak")
        .def_prop_ro(
            "confidence", [](const PyTrackResult& t) { return t.r.confidence; },
            "peak-to-sidelobe ratio of the chosen map")
        .def_prop_ro(
            "lost", [](const PyTrackResult& t) { return t.r.lost; }, "the target is lost on this frame")
        .def_prop_ro(
            "redetected", [](const PyTrackResult& t) { return t.r.redetected; },
            "this frame searched the frame for the target (it was lost, or is re-found)")
        .def_prop_ro(
            "times_ms",
            [](const PyTrackResult& t) {
                nb::dict d;
                d["upload"] = t.r.times.upload_ms;
                d["correlate"] = t.r.times.correlate_ms;
                d["peak"] = t.r.times.peak_ms;
                return d;
            },
            "stage times of this update in ms: upload (copy + patch sampling), correlate, peak")
        .def("__repr__", [](const PyTrackResult& t) {
            char buf[240];
            std::snprintf(buf, sizeof buf,
                          "TrackResult(id=%ld, box=(%.2f, %.2f, %.2f, %.2f), centre=(%.3f, %.3f), score=%.4f, "
                          "confidence=%.2f, lost=%s)",
                          t.id, t.r.box.x, t.r.box.y, t.r.box.width, t.r.box.height, t.r.sub_cx, t.r.sub_cy, t.r.score,
                          t.r.confidence, t.r.lost ? "True" : "False");
            return std::string(buf);
        });

    nb::class_<PyTracker>(m, "Tracker",
                          "corrtrack's tracker (MultiTracker): use corrtrack.Tracker.\n"
                          "Thread-safe: calls on one Tracker from several threads run one at a time.")
        .def("__init__",
             [](PyTracker* self, const nb::kwargs& options) {
                 TrackerOptions o = tracker_options_from(options);
                 o.keep_maps = false;  // no heatmaps here: the GPU path skips their copy
                 new (self) PyTracker(o);
             })
        .def("add", &PyTracker::add, nb::arg("frame"), nb::arg("box"), nb::arg("stream") = 0)
        .def("update", &PyTracker::update, nb::arg("frame"), nb::arg("stream") = 0)
        .def("remove", &PyTracker::remove, nb::arg("id"))
        .def("clear", &PyTracker::clear)
        .def("box", &PyTracker::box, nb::arg("id"))
        .def_prop_ro("ids", &PyTracker::ids)
        .def_prop_ro("on_gpu", &PyTracker::on_gpu)
        .def_prop_ro("kernel", &PyTracker::kernel)
        .def_prop_ro("kernel_summary", &PyTracker::kernel_summary)
        .def_prop_ro("options", &PyTracker::options);

    m.def(
        "tracker_option_defaults", [] { return options_dict(TrackerOptions{}); },
        "The tracker options and their defaults (the CLI's tracker flags, with underscores).");
}

}  // namespace corrtrack::py
