// CUDA error checking for kernels/cuda: every runtime call goes through CORRTRACK_CUDA (and
// every cuFFT call through CORRTRACK_CUFFT) so a failure names the call, file and line.
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

// cuFFT reports a cufftResult; taken as int so this header needs no cufft.h.
[[noreturn]] inline void cufft_fail(int result, const char* call, const char* file, int line) {
    static const char* const kNames[] = {
        "CUFFT_SUCCESS", "CUFFT_INVALID_PLAN", "CUFFT_ALLOC_FAILED", "CUFFT_INVALID_TYPE",
        "CUFFT_INVALID_VALUE", "CUFFT_INTERNAL_ERROR", "CUFFT_EXEC_FAILED", "CUFFT_SETUP_FAILED",
        "CUFFT_INVALID_SIZE", "CUFFT_UNALIGNED_DATA", "CUFFT_INCOMPLETE_PARAMETER_LIST",
        "CUFFT_INVALID_DEVICE", "CUFFT_PARSE_ERROR", "CUFFT_NO_WORKSPACE", "CUFFT_NOT_IMPLEMENTED",
        "CUFFT_LICENSE_ERROR", "CUFFT_NOT_SUPPORTED", "CUFFT_MISSING_DEPENDENCY",
        "CUFFT_NVRTC_FAILURE", "CUFFT_NVJITLINK_FAILURE", "CUFFT_NVSHMEM_FAILURE"};
    const bool known = result >= 0 && result < static_cast<int>(sizeof kNames / sizeof kNames[0]);
    throw std::runtime_error(std::string("cuFFT error ") + (known ? kNames[result] : "unknown") + " (" +
                             std::to_string(result) + ") in " + call + " at " + file + ":" +
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

#define CORRTRACK_CUFFT(call)                                                        \
    do {                                                                             \
        const int corrtrack_fft_err_ = static_cast<int>(call);                       \
        if (corrtrack_fft_err_ != 0)                                                 \
            ::corrtrack::cufft_fail(corrtrack_fft_err_, #call, __FILE__, __LINE__);  \
    } while (0)
