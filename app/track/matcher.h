// Runs the chosen correlation kernel on a host search patch and hands back the score map in
// host memory. For CUDA kernels it owns the stream, pinned staging and device buffers
// (sized once per shape) and waits on an event for the map, never on the whole device.
// Thread rules: one thread drives a Matcher.
#pragma once

#include <memory>
#include <string>

#include "app/track/tracker.h"
#include "corrtrack/correlator.h"

namespace corrtrack {

class Matcher {
public:
    Matcher();
    ~Matcher();
    Matcher(const Matcher&) = delete;
    Matcher& operator=(const Matcher&) = delete;

    // False + *error when the name is unknown or the kernel cannot run here.
    bool set_kernel(const std::string& name, std::string* error);
    const std::string& kernel_name() const { return name_; }
    // The kernel actually running (differs from kernel_name() for "auto").
    std::string kernel_summary() const;

    // Host template, packed rows. Takes effect for the next match().
    void set_template(ImageView templ);
    // Correlates the template over the whole of `search` (host memory). The map stays valid
    // until the next call. Adds its time to times->upload_ms / correlate_ms.
    MapView match(ImageView search, StageTimes* times);

private:
    struct Gpu;
    std::string name_;
    std::unique_ptr<Correlator> kernel_;
    bool on_gpu_ = false;
    std::unique_ptr<Gpu> gpu_;
    Size templ_size_;
    std::vector<float> map_;
};

}  // namespace corrtrack
