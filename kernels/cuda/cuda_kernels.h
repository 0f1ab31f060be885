// Factories of the CUDA kernels, for the registry. Declared here so that the registry
// needs no CUDA headers.
// Thread rules: see correlator.h.
#pragma once

#include <memory>

#include "corrtrack/correlator.h"

namespace corrtrack {

bool cuda_kernels_available();  // == cuda_available(); the registry's availability check

}  // namespace corrtrack
