#include "app/cli/version.h"

#include "app/bench/machine_info.h"
#include "corrtrack/correlator.h"

#ifndef CORRTRACK_VERSION
#error "CORRTRACK_VERSION comes from project(VERSION) in CMakeLists.txt"
#endif
#ifndef CORRTRACK_REVISION
#define CORRTRACK_REVISION "unknown"
#endif

namespace corrtrack {

const char* corrtrack_version() { return CORRTRACK_VERSION; }
const char* corrtrack_revision() { return CORRTRACK_REVISION; }

std::string version_text() {
    std::string t = std::string("corrtrack ") + corrtrack_version() + "\n";
    t += std::string("revision: ") + corrtrack_revision() + "\n";
    // The runtime is linked statically, so its version is known even without a driver; a
    // bug report needs to know both that and whether a GPU was usable.
    const std::string runtime = bench::cuda_runtime_text();
    if (runtime == "none" || !cuda_available())
        t +=
            "cuda: no CUDA runtime/GPU" + (runtime == "none" ? std::string() : " (built with runtime " + runtime + ")");
    else
        t += "cuda: runtime " + runtime + ", " + cuda_device_description();
    t += "\nkernels:";
    for (const KernelEntry& e : kernel_registry())
        if (e.available()) t += std::string(" ") + e.name;
    return t + "\n";
}

}  // namespace corrtrack
