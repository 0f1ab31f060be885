// Runs the chosen correlation kernel on a host search patch and hands back the score map in
// host memory. For CUDA kernels it runs on its GPU context's compute stream, owns pinned
// staging and device buffers (sized once per shape) and waits on an event for the map, never
// on the whole device.
// Thread rules: one thread drives a Matcher, the thread that queues its context's work.
#pragma once

#include <memory>
#include <string>

#include "app/gpu/gpu_context.h"
#include "app/track/tracker.h"
#include "corrtrack/correlator.h"

namespace corrtrack {

class Matcher {
public:
    // `gpu` must outlive the matcher; a CUDA kernel needs one with a GPU.
    explicit Matcher(const GpuContext& gpu);
    ~Matcher();
    Matcher(const Matcher&) = delete;
    Matcher& operator=(const Matcher&) = delete;

    // False + *error when the name is unknown or the kernel cannot run here.
    bool set_kernel(const std::string& name, std::string* error);
    const std::string& kernel_name() const { return name_; }
    // The kernel actually running (differs from kernel_name() for "auto").
    std::string kernel_summary() const;

    // Host template, packed rows. Takes effect for the next match(). On the GPU it returns
    // once the stream is idle, so that match() times its own work only.
    void set_template(ImageView templ);
    // Correlates the template over the whole of `search` (host memory). The map stays valid
    // until the next call. Adds its time to times->upload_ms / correlate_ms.
    MapView match(ImageView search, StageTimes* times);

private:
    struct Gpu;
    const GpuContext& context_;
    std::string name_;
    std::unique_ptr<Correlator> kernel_;
    bool on_gpu_ = false;
    std::unique_ptr<Gpu> gpu_;
    Size templ_size_;
    std::vector<float> map_;
};

}  // namespace corrtrack
