#include "app/gpu/gpu_context.h"

#include <cuda_runtime.h>

#include "corrtrack/correlator.h"
#include "corrtrack/cuda_util.h"

namespace corrtrack {
namespace {

Stream new_stream() {
    cudaStream_t s = nullptr;
    CORRTRACK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
}

void destroy_stream(Stream s) {
    if (!s) return;
    cudaStreamSynchronize(as_cuda(s));  // a broken context reports an error here: nothing to do
    cudaStreamDestroy(as_cuda(s));
}

}  // namespace

GpuContext::GpuContext(GpuUse use) {
    if (use == GpuUse::kNone || !cuda_available()) return;
    int ordinal = 0;
    CORRTRACK_CUDA(cudaGetDevice(&ordinal));
    cudaDeviceProp prop{};
    CORRTRACK_CUDA(cudaGetDeviceProperties(&prop, ordinal));
    compute_ = new_stream();
    try {
        copy_ = new_stream();
    } catch (...) {
        destroy_stream(compute_);
        throw;
    }
    available_ = true;
    ordinal_ = ordinal;
    name_ = prop.name;
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
