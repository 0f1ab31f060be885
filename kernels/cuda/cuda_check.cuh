// Old name of the error checks, which now live in the public corrtrack/cuda_util.h. Kept only
// while app/track/device_search.cu still includes it (through a per-source include path in
// app/CMakeLists.txt); delete it when that file includes corrtrack/cuda_util.h.
// Thread rules: stateless.
#pragma once

#include "corrtrack/cuda_util.h"
