#include "app/pipeline/frame_upload.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace corrtrack {
namespace {

void check(cudaError_t err, const char* what) {
    if (err != cudaSuccess)
        throw std::runtime_error(std::string("CUDA error in ") + what + ": " + cudaGetErrorString(err));
}

}  // namespace

struct FrameUploader::Slot {
    std::uint8_t* data = nullptr;
    std::size_t pitch = 0;
    Size capacity, size;
    cudaEvent_t start = nullptr, copied = nullptr;
    cudaEvent_t consumed = nullptr;  // recorded on the consumer's stream after its last use
};

FrameUploader::FrameUploader(int depth) : slots_(static_cast<std::size_t>(std::max(depth, 2))) {
    cudaStream_t s = nullptr;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    stream_ = s;
    for (Slot& slot : slots_) {
        check(cudaEventCreate(&slot.start), "cudaEventCreate");
        check(cudaEventCreate(&slot.copied), "cudaEventCreate");
        check(cudaEventCreateWithFlags(&slot.consumed, cudaEventDisableTiming), "cudaEventCreate");
    }
}

FrameUploader::~FrameUploader() {
    cudaStreamSynchronize(static_cast<cudaStream_t>(stream_));
    for (Slot& slot : slots_) {
        cudaEventSynchronize(slot.consumed);
        cudaFree(slot.data);
        for (cudaEvent_t e : {slot.start, slot.copied, slot.consumed}) cudaEventDestroy(e);
    }
    cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}

int FrameUploader::upload(const Frame& frame) {
    const int index = next_;
    next_ = (next_ + 1) % static_cast<int>(slots_.size());
    Slot& slot = slots_[static_cast<std::size_t>(index)];
    const cudaStream_t s = static_cast<cudaStream_t>(stream_);
    // The copy stream must not overwrite a device frame a consumer still reads: it waits for
    // the consumer's mark on the device, never on the host.
    // (An event never recorded makes this a no-op.)
    check(cudaStreamWaitEvent(s, slot.consumed, 0), "cudaStreamWaitEvent");
    if (frame.width > slot.capacity.width || frame.height > slot.capacity.height) {
        // Only on the first frame or a size change: the ring is sized once per stream shape.
        check(cudaEventSynchronize(slot.consumed), "cudaEventSynchronize");
        cudaFree(slot.data);
        slot.data = nullptr;
        slot.capacity = {std::max(frame.width, slot.capacity.width), std::max(frame.height, slot.capacity.height)};
        check(cudaMallocPitch(reinterpret_cast<void**>(&slot.data), &slot.pitch, slot.capacity.width,
                              slot.capacity.height), "cudaMallocPitch");
    }
    slot.size = frame.size();
    check(cudaEventRecord(slot.start, s), "cudaEventRecord");
    check(cudaMemcpy2DAsync(slot.data, slot.pitch, frame.luma.data(), static_cast<std::size_t>(frame.width),
                            frame.width, frame.height, cudaMemcpyHostToDevice, s), "cudaMemcpy2DAsync");
    check(cudaEventRecord(slot.copied, s), "cudaEventRecord");
    return index;
}

bool FrameUploader::copied(int slot) const {
    return cudaEventQuery(slots_.at(static_cast<std::size_t>(slot)).copied) == cudaSuccess;
}

ImageView FrameUploader::device_view(int index, Stream consumer) {
    Slot& slot = slots_.at(static_cast<std::size_t>(index));
    const cudaStream_t c = static_cast<cudaStream_t>(consumer);
    check(cudaStreamWaitEvent(c, slot.copied, 0), "cudaStreamWaitEvent");
    return {slot.data, slot.size.width, slot.size.height, slot.pitch, MemorySpace::kDevice};
}

void FrameUploader::done(int index, Stream consumer) {
    check(cudaEventRecord(slots_.at(static_cast<std::size_t>(index)).consumed, static_cast<cudaStream_t>(consumer)),
          "cudaEventRecord");
}

double FrameUploader::copy_ms(int index) const {
    const Slot& slot = slots_.at(static_cast<std::size_t>(index));
    float ms = 0;
    check(cudaEventElapsedTime(&ms, slot.start, slot.copied), "cudaEventElapsedTime");
    return ms;
}

}  // namespace corrtrack
