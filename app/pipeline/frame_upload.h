// Copies decoded frames from their pinned host slots into a small ring of device frames on the
// GPU context's copy stream, so that copying frame n overlaps the kernels on frame n-1 (and the
// decode thread already works on frame n+1). Each copy records an event: the consumer's stream
// waits on it (no host wait), and the host slot goes back to the decoder once it has fired.
// Thread rules: one thread (the tracker's) drives an uploader and queues the copy stream's work.
// Construct only with a context that has a GPU; the context outlives the uploader.
#pragma once

#include <vector>

#include "app/gpu/gpu_context.h"
#include "app/io/frame.h"

namespace corrtrack {

class FrameUploader {
public:
    // depth: device frames in flight (>= 2: the one being copied and the one being tracked).
    explicit FrameUploader(const GpuContext& gpu, int depth = 3);
    ~FrameUploader();
    FrameUploader(const FrameUploader&) = delete;
    FrameUploader& operator=(const FrameUploader&) = delete;

    // Queues the copy of frame's host luma into the next device slot and returns the slot.
    // Waits (rarely) only if that slot's previous frame is still being read by a consumer.
    int upload(const Frame& frame);
    // True once the copy into `slot` has finished (the host slot may be recycled).
    bool copied(int slot) const;
    // The device frame in `slot`; `consumer` waits for its copy on the
    // device, not the host.
    ImageView device_view(int slot, Stream consumer);
    // Call after queuing the consumer's last work on the slot's frame: the copy into this
    // slot `depth` frames later waits for that point on the device.
    void done(int slot, Stream consumer);
    // Milliseconds the copy took (CUDA events); valid once copied(slot).
    double copy_ms(int slot) const;

private:
    struct Slot;
    std::vector<Slot> slots_;
    int next_ = 0;
    Stream stream_ = nullptr;  // the context's copy stream (not ours)
};

}  // namespace corrtrack
