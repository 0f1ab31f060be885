#include "app/pipeline/frame_upload.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "corrtrack/cuda_util.h"
#include "corrtrack/start_trace.h"

namespace corrtrack {

struct FrameUploader::Slot {
    std::uint8_t* data = nullptr;
    std::size_t pitch = 0;
    Size capacity, size;
    cudaEvent_t start = nullptr, copied = nullptr;
    cudaEvent_t consumed = nullptr;  // recorded on the consumer's stream after its last use
};

FrameUploader::FrameUploader(const GpuContext& gpu, int depth)
    : slots_(static_cast<std::size_t>(std::max(depth, 2))), stream_(gpu.copy()) {
    if (!gpu.available()) throw std::logic_error("FrameUploader needs a GPU context with a GPU");
    for (Slot& slot : slots_) {
        CORRTRACK_CUDA(cudaEventCreate(&slot.start));
        CORRTRACK_CUDA(cudaEventCreate(&slot.copied));
        CORRTRACK_CUDA(cudaEventCreateWithFlags(&slot.consumed, cudaEventDisableTiming));
    }
}

FrameUploader::~FrameUploader() {
    cudaStreamSynchronize(as_cuda(stream_));  // queued copies still target our slots
    for (Slot& slot : slots_) {
        cudaEventSynchronize(slot.consumed);
        cudaFree(slot.data);
        for (cudaEvent_t e : {slot.start, slot.copied, slot.consumed}) cudaEventDestroy(e);
    }
}

int FrameUploader::upload(const Frame& frame) {
    const int index = next_;
    next_ = (next_ + 1) % static_cast<int>(slots_.size());
    Slot& slot = slots_[static_cast<std::size_t>(index)];
    const auto s = as_cuda(stream_);
    // The copy stream must not overwrite a device frame a consumer still reads: it waits for
    // the consumer's mark on the device, never on the host.
    // (An event never recorded makes this a no-op.)
    CORRTRACK_CUDA(cudaStreamWaitEvent(s, slot.consumed, 0));
    if (frame.width > slot.capacity.width || frame.height > slot.capacity.height) {
        // Only on the first frame or a size change: the ring is sized once per stream shape.
        CORRTRACK_CUDA(cudaEventSynchronize(slot.consumed));
        cudaFree(slot.data);
        slot.data = nullptr;
        slot.capacity = {std::max(frame.width, slot.capacity.width), std::max(frame.height, slot.capacity.height)};
        CORRTRACK_CUDA(cudaMallocPitch(reinterpret_cast<void**>(&slot.data), &slot.pitch, slot.capacity.width,
                                       slot.capacity.height));
        // The slots never used yet get theirs now too: one start-up cost, not one on each of
        // the next frames.
        StartTraceScope trace("frame ring device slots",
                              std::to_string(frame.width) + "x" + std::to_string(frame.height));
        for (Slot& other : slots_) {
            if (other.data) continue;
            other.capacity = slot.capacity;
            CORRTRACK_CUDA(cudaMallocPitch(reinterpret_cast<void**>(&other.data), &other.pitch, other.capacity.width,
                                           other.capacity.height));
        }
    }
    slot.size = frame.size();
    CORRTRACK_CUDA(cudaEventRecord(slot.start, s));
    CORRTRACK_CUDA(cudaMemcpy2DAsync(slot.data, slot.pitch, frame.luma.data(), static_cast<std::size_t>(frame.width),
                                     frame.width, frame.height, cudaMemcpyHostToDevice, s));
    CORRTRACK_CUDA(cudaEventRecord(slot.copied, s));
    return index;
}

bool FrameUploader::copied(int slot) const {
    return cudaEventQuery(slots_.at(static_cast<std::size_t>(slot)).copied) == cudaSuccess;
}

ImageView FrameUploader::device_view(int index, Stream consumer) {
    Slot& slot = slots_.at(static_cast<std::size_t>(index));
    CORRTRACK_CUDA(cudaStreamWaitEvent(as_cuda(consumer), slot.copied, 0));
    return {slot.data, slot.size.width, slot.size.height, slot.pitch, MemorySpace::kDevice};
}

void FrameUploader::done(int index, Stream consumer) {
    CORRTRACK_CUDA(cudaEventRecord(slots_.at(static_cast<std::size_t>(index)).consumed, as_cuda(consumer)));
}

double FrameUploader::copy_ms(int index) const {
    const Slot& slot = slots_.at(static_cast<std::size_t>(index));
    float ms = 0;
    CORRTRACK_CUDA(cudaEventElapsedTime(&ms, slot.start, slot.copied));
    return ms;
}

}  // namespace corrtrack
