// CUDA error checking for kernels/cuda: every runtime call goes through CORRTRACK_CUDA so
// a failure names the call, file and line.
// Thread rules: stateless.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace corrtrack {

[[noreturn]] inline void cuda_fail(cudaError_t err, const char* call, const char* file, int line) {
    throw std::runtime_error(std::string("CUDA error ") + cudaGetErrorName(err) + " (" +
                             cudaGetErrorString(err) + ") in " + call + " at " + file + ":" +
                             std::to_string(line));
}

}  // namespace corrtrack

#define CORRTRACK_CUDA(call)                                                         \
    do {                                                                             \
        const cudaError_t corrtrack_err_ = (call);                                   \
        if (corrtrack_err_ != cudaSuccess)                                           \
            ::corrtrack::cuda_fail(corrtrack_err_, #call, __FILE__, __LINE__);       \
    } while (0)

// After a launch: catches bad configurations at once (asynchronous faults surface later).
#define CORRTRACK_CUDA_LAUNCHED() CORRTRACK_CUDA(cudaGetLastError())
