// GPU peak search: the Peak that find_peak (peak.h) returns, computed from a map in device
// memory on the caller's stream, so that only the small result crosses to the host.
// Thread rules: one thread drives a finder. find() is asynchronous on the given stream and never
// synchronizes; get() waits for the last find(). A finder owns one workspace, so its find()
// calls must be ordered (one stream, or streams the caller orders); use one finder per stream.
// Construct only when cuda_available().
#pragma once

#include <memory>

#include "corrtrack/image.h"
#include "corrtrack/peak.h"

namespace corrtrack {

class CudaPeakFinder {
public:
    CudaPeakFinder();  // allocates the workspace once (sized by the GPU, not by the map)
    ~CudaPeakFinder();
    CudaPeakFinder(const CudaPeakFinder&) = delete;
    CudaPeakFinder& operator=(const CudaPeakFinder&) = delete;

    // Queues the search of `map` (device memory, float, pitch in floats) on `stream`: argmax
    // (the first maximum in row-major order), the parabolic sub-pixel fit, the second peak and
    // the PSR outside the exclusion zone, exactly as find_peak defines them.
    void find(const MapView& map, Stream stream, PeakOptions opt = {});
    // Waits for the last find() and returns its result (a default Peak before any find()).
    Peak get();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace corrtrack
