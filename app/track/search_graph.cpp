#include "app/track/search_graph.h"

#include <exception>

#include "corrtrack/cuda_util.h"
#include "corrtrack/start_trace.h"

namespace corrtrack {

SearchGraph::~SearchGraph() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (capture_) cudaStreamDestroy(capture_);
}

bool SearchGraph::launch(Stream stream, const std::function<void(Stream)>& enqueue, SearchGraphCounts& counts) {
    const cudaStream_t s = as_cuda(stream);
    if (!capture_) CORRTRACK_CUDA(cudaStreamCreateWithFlags(&capture_, cudaStreamNonBlocking));
    // Thread-local: another thread's unsafe calls (cudaMalloc, a sync) do not break it, ours do.
    CORRTRACK_CUDA(cudaStreamBeginCapture(capture_, cudaStreamCaptureModeThreadLocal));
    bool queued = true;
    try {
        enqueue(capture_);
    } catch (const std::exception&) {
        queued = false;  // a call refused under capture (or a real error, which the uncaptured run repeats)
    }
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(capture_, &graph);
    if (!queued || ended != cudaSuccess || !graph) {
        if (graph) cudaGraphDestroy(graph);
        cudaGetLastError();  // capture errors are not sticky: clear the last one
        ++counts.failures;
        return false;
    }
    // The same launches with new arguments update the executable in place (a few us); a
    // different set of launches (a kernel switch, a grown batch) needs a new one.
    bool updated = false;
    if (exec_) {
        cudaGraphExecUpdateResultInfo info{};
        updated = cudaGraphExecUpdate(exec_, graph, &info) == cudaSuccess;
        if (!updated) {
            cudaGetLastError();
            CORRTRACK_CUDA(cudaGraphExecDestroy(exec_));
            exec_ = nullptr;
        }
    }
    if (!updated) {
        StartTraceScope trace("cuda graph instantiate",
                              "a search's launches (a new set: first, kernel switch, growth)");
        const cudaError_t made = cudaGraphInstantiate(&exec_, graph, 0);
        if (made != cudaSuccess) {
            exec_ = nullptr;
            cudaGraphDestroy(graph);
            cudaGetLastError();
            ++counts.failures;
            return false;
        }
        ++counts.instantiations;
    }
    cudaGraphDestroy(graph);
    CORRTRACK_CUDA(cudaGraphLaunch(exec_, s));
    ++counts.launches;
    return true;
}

}  // namespace corrtrack
