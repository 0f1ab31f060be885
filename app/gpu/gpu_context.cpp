#include "app/gpu/gpu_context.h"

#include <cuda_runtime.h>

#include "corrtrack/correlator.h"
#include "corrtrack/cuda_util.h"
#include "corrtrack/start_trace.h"

namespace corrtrack {
namespace {

// `priority`: CUDA's scale, where lower numbers are served first.
Stream new_stream(int priority) {
    cudaStream_t s = nullptr;
    CORRTRACK_CUDA(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority));
    return s;
}

void destroy_stream(Stream s) {
    if (!s) return;
    cudaStreamSynchronize(as_cuda(s));  // a broken context reports an error here: nothing to do
    cudaStreamDestroy(as_cuda(s));
}

// The process's first stream-ordered allocation and device copy (auto's first background
// round takes a copy of the frame, auto_timing.cu) cost 6-13 ms on an H100 where later ones
// cost 0.1-0.2 ms (bench/results/h100_2026-12-05c/first.txt): paid here, at start, not by the
// second frame's latency. Best effort: a failure here only leaves the cost where it was.
void warm_stream_ordered_allocator(Stream stream) {
    StartTraceScope trace("stream-ordered allocator warmed");
    const cudaStream_t s = as_cuda(stream);
    void* a = nullptr;
    void* b = nullptr;
    if (cudaMallocAsync(&a, 1 << 16, s) == cudaSuccess && cudaMallocAsync(&b, 1 << 16, s) == cudaSuccess)
        cudaMemcpy2DAsync(b, 256, a, 256, 256, 256, cudaMemcpyDeviceToDevice, s);
    if (b) cudaFreeAsync(b, s);
    if (a) cudaFreeAsync(a, s);
    cudaStreamSynchronize(s);
    cudaGetLastError();  // nothing here may leave an error for the next check
}

}  // namespace

GpuContext::GpuContext(GpuUse use) {
    if (use == GpuUse::kNone) return;
    StartTraceScope trace("gpu context (CUDA init)", "no CUDA GPU");
    if (!cuda_available()) return;
    int ordinal = 0;
    CORRTRACK_CUDA(cudaGetDevice(&ordinal));
    cudaDeviceProp prop{};
    CORRTRACK_CUDA(cudaGetDeviceProperties(&prop, ordinal));
    // The compute stream at the highest priority: auto's background timing rounds run at the
    // lowest (auto_timing.h), so the tracker's launches get the SMs first as blocks finish.
    int lowest = 0, highest = 0;
    CORRTRACK_CUDA(cudaDeviceGetStreamPriorityRange(&lowest, &highest));
    compute_ = new_stream(highest);
    try {
        copy_ = new_stream(0);
    } catch (...) {
        destroy_stream(compute_);
        throw;
    }
    warm_stream_ordered_allocator(compute_);
    available_ = true;
    ordinal_ = ordinal;
    name_ = prop.name;
    trace.set_detail(name_);
}

GpuContext::~GpuContext() {
    destroy_stream(copy_);
    destroy_stream(compute_);
}

void GpuContext::synchronize() const {
    if (copy_) CORRTRACK_CUDA(cudaStreamSynchronize(as_cuda(copy_)));
    if (compute_) CORRTRACK_CUDA(cudaStreamSynchronize(as_cuda(compute_)));
}

}  // namespace corrtrack
