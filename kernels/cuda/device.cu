// Run-time GPU detection: the app compiles CUDA always and asks here whether a device exists.
#include <mutex>
#include <string>

#include "corrtrack/correlator.h"
#include "corrtrack/cuda_util.h"
#include "cuda/cuda_kernels.h"

namespace corrtrack {

bool cuda_available() {
    static const bool available = [] {
        int count = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess) {
            cudaGetLastError();  // clear the sticky "no device" error
            return false;
        }
        return count > 0;
    }();
    return available;
}

bool cuda_kernels_available() { return cuda_available(); }

std::string cuda_device_description() {
    if (!cuda_available()) return {};
    int dev = 0, driver = 0;
    cudaDeviceProp prop{};
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) return {};
    cudaDriverGetVersion(&driver);
    return std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
           std::to_string(prop.multiProcessorCount) + " SMs, CUDA driver " + std::to_string(driver / 1000) + "." +
           std::to_string((driver % 1000) / 10) + ")";
}

}  // namespace corrtrack
