// The CPU and GPU search backends' constructors, and the host's motion-penalised peak
// (device_search.cu computes the same on the GPU).
// Thread rules: see search.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/track/search.h"

namespace corrtrack {

// `kernel` names a CPU kernel (cpu_fast, cpu_ref, cpu_opencv).
std::unique_ptr<SearchBackend> make_cpu_search(const std::string& kernel, std::string* error);
// `kernel` names a CUDA kernel or auto; the backend runs on gpu.compute() (nullptr + *error
// when the context has no GPU).
std::unique_ptr<SearchBackend> make_gpu_search(const std::string& kernel, const GpuContext& gpu, std::string* error);

// find_peak on the map minus the motion penalty (zero at the centre, `weight` at the edge),
// with score and sub-pixel offset from the raw map: a distractor must beat the target by
// more than its distance costs.
struct PenaltyScratch {
    std::vector<float> map;              // the penalised map
    std::vector<double> column_penalty;  // each column's share of the penalty (before the weight)
};
RankedPeak penalised_peak(const MapView& map, double weight, PenaltyScratch& scratch);

// Fills hit's rival fields from `map` (size.width packed columns): its best local maximum at
// least apart.width or apart.height from hit.peak, and map's value at hit.peak.
void find_rival(const float* map, Size size, RankedPeak& hit, Size apart);

}  // namespace corrtrack
