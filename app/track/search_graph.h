// One search pass replayed as a CUDA graph: each search's launches are captured (their
// arguments change every frame: windows, penalties, template sums) and the kept executable
// is updated in place, so the device gets one graph launch per search instead of one launch
// per kernel (on the device tool's H200 host a launch costs ~4.5 us of host time and the GPU
// idles between them; notes/PERF.md). A search whose capture fails runs uncaptured.
// Thread rules: owned by one GpuSearch and used on its thread. The capture runs on a stream of
// its own (the search's stream may be fed by another thread: NVDEC's decoder launches onto
// it), and the graph is launched on the search's stream.
#pragma once

#include <cuda_runtime.h>

#include <functional>

#include "corrtrack/image.h"

namespace corrtrack {

struct SearchGraphCounts {
    long launches = 0;        // searches that ran as one graph launch
    long instantiations = 0;  // a new executable: the first, or a changed set of launches
    long failures = 0;        // captures that failed: those searches ran uncaptured
};

class SearchGraph {
public:
    SearchGraph() = default;
    SearchGraph(const SearchGraph&) = delete;
    SearchGraph& operator=(const SearchGraph&) = delete;
    ~SearchGraph();

    // Captures what `enqueue` queues on the stream it is given (the capture stream) and launches
    // it on `stream` as one graph. Returns
    // false when the capture failed (nothing of it ran; the caller queues it again uncaptured);
    // an error outside the capture throws as every CUDA call does.
    bool launch(Stream stream, const std::function<void(Stream)>& enqueue, SearchGraphCounts& counts);

private:
    cudaGraphExec_t exec_ = nullptr;
    cudaStream_t capture_ = nullptr;
};

}  // namespace corrtrack
