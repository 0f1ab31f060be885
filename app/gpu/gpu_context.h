// The owner of the GPU resources a tracking thread works with: the compute stream (the search
// backend, its correlators, NVDEC's output, the GUI's interop sinks) and the copy stream (frame
// uploads), both non-blocking, made in the constructor and destroyed in the destructor. Every
// composition root (track, eval, bench, the GUI, the Python objects, tests) makes one first and
// hands it down; the users hold a reference and must be destroyed before it (their owners
// declare them after the context, or reset them explicitly). Without a CUDA GPU the context is
// still made: available() is false, both streams are null and the CPU path runs on.
// Thread rules: made and destroyed on one thread, before and after every user of its streams;
// its accessors are const and may be called from any thread. One thread queues work on one
// context's streams (a tracker, its session and its sinks): threads that track at once (the
// streams of `track`, eval's jobs) each get a context of their own.
#pragma once

#include <string>

#include "corrtrack/image.h"

namespace corrtrack {

enum class GpuUse {
    kIfPresent,  // the current CUDA device, when there is one
    kNone,       // no GPU even where there is one (the CPU path; tests)
};

class GpuContext {
public:
    // With a GPU: both streams on the current device (CUDA_VISIBLE_DEVICES picks it). Throws
    // std::runtime_error naming the call when a GPU is there but a stream cannot be made.
    explicit GpuContext(GpuUse use = GpuUse::kIfPresent);
    // Waits for the work queued on both streams, then destroys them.
    ~GpuContext();
    GpuContext(const GpuContext&) = delete;
    GpuContext& operator=(const GpuContext&) = delete;

    bool available() const { return available_; }
    Stream compute() const { return compute_; }               // null without a GPU
    Stream copy() const { return copy_; }                     // null without a GPU
    int device_ordinal() const { return ordinal_; }           // -1 without a GPU
    const std::string& device_name() const { return name_; }  // "" without a GPU
    // Blocks until the work queued on both streams so far is done (teardown, tests).
    void synchronize() const;

private:
    bool available_ = false;
    Stream compute_ = nullptr, copy_ = nullptr;
    int ordinal_ = -1;
    std::string name_;
};

}  // namespace corrtrack
