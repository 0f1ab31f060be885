// VideoSource: frames from the FFmpeg decode thread (app/pipeline FramePipeline: files, image
// sequences, OTB folders, cameras, URLs) as 8-bit luma, copied into arrays the Python layer
// allocates: NumPy from host luma, CuPy / PyTorch from NVDEC surfaces (device to device) or
// from decoded host frames (one upload).
// Thread rules: any Python thread may call any method. next/copy_to/release run one at a time
// (a mutex, taken with the GIL released); close() from another thread stops the decode thread
// first, so that a next() waiting for a frame returns None, then tears down. The decode thread
// is the pipeline's own.
#include <cuda_runtime.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "app/gpu/gpu_context.h"
#include "app/pipeline/frame_ring.h"
#include "arrays.h"
#include "bindings.h"
#include "corrtrack/cuda_util.h"

namespace corrtrack::py {
namespace {

[[noreturn]] void raise_os_error(const std::string& msg) {
    PyErr_SetString(PyExc_OSError, msg.c_str());
    throw nb::python_error();
}

using FrameInfo = std::tuple<long, double, int, int>;  // index, pts (s), width, height

class PyVideoSource {
public:
    PyVideoSource(const std::string& input, const std::string& decode, bool device_output, double read_timeout,
                  int slots) {
        DecodeMode mode;
        if (!parse_decode_mode(decode, &mode))
            throw nb::value_error(("decode must be 'sw', 'nvdec' or 'auto', got '" + decode + "'").c_str());
        if (slots < 2 || slots > 64) throw nb::value_error("slots must be 2..64");
        if (!(read_timeout >= 0)) throw nb::value_error("read_timeout must be >= 0 seconds (0: wait for ever)");
        SourceOptions so;
        so.input = input;
        so.want_rgb = false;
        so.read_timeout_s = read_timeout;
        so.held_frames = slots + 2;
        so.stop = &stop_reading_;  // close() makes a blocked open or read give up at once
        if (device_output) {
            if (!cuda_available()) throw std::runtime_error("device arrays need a CUDA GPU and none was found");
            // NVDEC posts its output on the context's compute stream; our copies of its surfaces
            // follow it there.
            gpu_ = std::make_unique<GpuContext>();
            stream_ = gpu_->compute();
            so.decode = mode;
            so.cuda_stream = stream_;
            so.want_host_luma = false;
        } else {
            // NumPy frames: NVDEC only when asked for (its frames then come back to the host).
            so.decode = mode == DecodeMode::kAuto ? DecodeMode::kSoftware : mode;
            so.want_host_luma = true;
        }
        std::string error;
        std::unique_ptr<FrameSource> source;
        {
            nb::gil_scoped_release unlocked;
            source = FrameSource::open(so, &error);
        }
        if (!source) {
            gpu_.reset();
            stream_ = nullptr;
            raise_os_error(error);
        }
        decode_mode_ = source->decode_mode();
        decode_note_ = source->decode_note();
        pipeline_ = std::make_unique<FramePipeline>(std::move(source), slots);
    }
    ~PyVideoSource() { close(); }

    // Waits for the next frame (keeping it until release()); None at the end of the input, and
    // when close() ran (or runs meanwhile, from another thread). An input that ended in error
    // raises OSError once every decoded frame was delivered.
    std::optional<FrameInfo> next() {
        const Frame* f = nullptr;
        bool closed_before = false, closed_meanwhile = false;
        std::string error;
        {
            nb::gil_scoped_release unlocked;
            const std::lock_guard<std::mutex> lock(call_mutex_);  // released before the GIL is taken back
            closed_before = !pipeline_ || closing_.load();
            if (!closed_before) {
                release_locked();
                f = current_ = pipeline_->acquire();  // nullptr at once when close() stops the pipeline
                closed_meanwhile = closing_.load();
                if (!f) error = pipeline_->error();
            }
        }
        if (closed_before) throw nb::value_error("the video source is closed");
        if (closed_meanwhile) return std::nullopt;  // the iteration in this thread ends; close() tears down
        if (!f) {
            if (!error.empty()) raise_os_error(error);
            return std::nullopt;
        }
        return FrameInfo{f->index, f->pts, f->width, f->height};
    }

    // Copies the current frame's luma into `out` (uint8 (height, width), host or device); a
    // device copy is ordered before the caller's later work on `stream`.
    void copy_to(const OutArray& out, std::uintptr_t stream) {
        const ImageView dst_view = image_view(out, "out");
        const Placement where = placement_of(out, "out");
        nb::gil_scoped_release unlocked;
        const std::lock_guard<std::mutex> lock(call_mutex_);  // released before the GIL is taken back
        if (!pipeline_ || closing_.load()) throw std::invalid_argument("the video source is closed");
        if (!current_) throw std::invalid_argument("no current frame: call next() first");
        const Frame& f = *current_;
        if (dst_view.width != f.width || dst_view.height != f.height)
            throw std::invalid_argument("out must be " + std::to_string(f.height) + "x" + std::to_string(f.width) +
                                        " (height x width)");
        auto* dst = const_cast<std::uint8_t*>(dst_view.data);
        const ImageView src = f.luma_view();
        if (dst_view.space == MemorySpace::kHost && src.space == MemorySpace::kHost) {
            for (int y = 0; y < f.height; ++y) std::memcpy(dst + y * dst_view.pitch, src.row(y), f.width);
            return;
        }
        if (!stream_) throw std::invalid_argument("this source makes NumPy frames; open it with a device output");
        DeviceGuard guard(where.device);
        const cudaMemcpyKind kind =
            dst_view.space == MemorySpace::kHost
                ? cudaMemcpyDeviceToHost
                : (src.space == MemorySpace::kHost ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToDevice);
        CORRTRACK_CUDA(
            cudaMemcpy2DAsync(dst, dst_view.pitch, src.data, src.pitch, f.width, f.height, kind, as_cuda(stream_)));
        if (!copied_) CORRTRACK_CUDA(cudaEventCreateWithFlags(&copied_, cudaEventDisableTiming));
        CORRTRACK_CUDA(cudaEventRecord(copied_, as_cuda(stream_)));
        CORRTRACK_CUDA(cudaStreamWaitEvent(as_cuda(as_stream(stream)), copied_, 0));
        // A host slot goes back to the decoder on release(): the upload must have read it. (An
        // NVDEC surface only needs the copy queued before the frame is dropped.)
        if (src.space == MemorySpace::kHost || kind == cudaMemcpyDeviceToHost)
            CORRTRACK_CUDA(cudaEventSynchronize(copied_));
    }

    void release() {
        nb::gil_scoped_release unlocked;
        const std::lock_guard<std::mutex> lock(call_mutex_);
        release_locked();
    }

    // Any thread, any number of times. Stops the decode thread without waiting for a next()
    // in another thread (that one returns None), then tears down once no call is running.
    void close() {
        if (torn_down_.load()) return;  // closed already: not even the GIL is let go (destructor)
        nb::gil_scoped_release unlocked;
        const std::lock_guard<std::mutex> life(life_mutex_);  // one close() at a time
        if (!pipeline_) return;
        closing_.store(true);
        stop_reading_.store(true);
        pipeline_->stop();  // the read gives up within about 100 ms; a waiting acquire() returns nullptr
        const std::lock_guard<std::mutex> lock(call_mutex_);
        release_locked();
        pipeline_.reset();
        if (copied_) cudaEventDestroy(copied_);
        copied_ = nullptr;
        // Last: the decoder that posted on the compute stream, and our copies, are gone.
        stream_ = nullptr;
        gpu_.reset();
        torn_down_.store(true);
    }

    bool closed() const { return closing_.load(); }
    // A property of the pipeline, read while close() cannot destroy it.
    template <class F>
    auto with_pipeline(F f) -> decltype(f(std::declval<const FramePipeline&>())) {
        {
            nb::gil_scoped_release unlocked;
            const std::lock_guard<std::mutex> life(life_mutex_);
            if (pipeline_) return f(*pipeline_);
        }
        throw nb::value_error("the video source is closed");
    }
    const std::string& decode_mode() const { return decode_mode_; }
    const std::string& decode_note() const { return decode_note_; }

private:
    void release_locked() {
        if (current_ && pipeline_) pipeline_->release(current_);
        current_ = nullptr;
    }

    // call_mutex_ serializes next/copy_to/release (current_, the copies); life_mutex_ guards
    // pipeline_'s lifetime for close() and the properties. close() takes life_mutex_, then
    // call_mutex_; nothing takes them the other way round, and neither is waited for with the
    // GIL held.
    std::mutex call_mutex_, life_mutex_;
    std::atomic<bool> closing_{false}, torn_down_{false};
    std::atomic<bool> stop_reading_{false};  // SourceOptions::stop: outlives the pipeline (declared first)
    std::unique_ptr<GpuContext> gpu_;        // device output only; close() destroys it after the pipeline
    std::unique_ptr<FramePipeline> pipeline_;
    const Frame* current_ = nullptr;
    Stream stream_ = nullptr;  // gpu_'s compute stream
    cudaEvent_t copied_ = nullptr;
    std::string decode_mode_, decode_note_;
};

}  // namespace

void register_video(nb::module_& m) {
    nb::class_<PyVideoSource>(m, "VideoSource",
                              "FFmpeg decode thread: use corrtrack.VideoSource.\n"
                              "Thread-safe: next/copy_to/release run one at a time; close() from another thread "
                              "makes a waiting next() return None.")
        .def(nb::init<const std::string&, const std::string&, bool, double, int>(), nb::arg("input"),
             nb::arg("decode") = "auto", nb::arg("device_output") = false, nb::arg("read_timeout") = 5.0,
             nb::arg("slots") = 4)
        .def("next", &PyVideoSource::next)
        .def("copy_to", &PyVideoSource::copy_to, nb::arg("out"), nb::arg("stream") = 0)
        .def("release", &PyVideoSource::release)
        .def("close", &PyVideoSource::close)
        .def_prop_ro("closed", &PyVideoSource::closed)
        .def_prop_ro("size",
                     [](PyVideoSource& s) {
                         const Size z = s.with_pipeline([](const FramePipeline& p) { return p.size(); });
                         return std::make_tuple(z.width, z.height);
                     })
        .def_prop_ro("fps",
                     [](PyVideoSource& s) { return s.with_pipeline([](const FramePipeline& p) { return p.fps(); }); })
        .def_prop_ro(
            "frame_count",
            [](PyVideoSource& s) { return s.with_pipeline([](const FramePipeline& p) { return p.frame_count(); }); })
        .def_prop_ro("live",
                     [](PyVideoSource& s) { return s.with_pipeline([](const FramePipeline& p) { return p.live(); }); })
        .def_prop_ro(
            "dropped",
            [](PyVideoSource& s) { return s.with_pipeline([](const FramePipeline& p) { return p.dropped(); }); })
        .def_prop_ro(
            "description",
            [](PyVideoSource& s) { return s.with_pipeline([](const FramePipeline& p) { return p.description(); }); })
        .def_prop_ro("decode_mode", &PyVideoSource::decode_mode)
        .def_prop_ro("decode_note", &PyVideoSource::decode_note);
}

}  // namespace corrtrack::py
