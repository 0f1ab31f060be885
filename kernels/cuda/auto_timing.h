// auto's timing of its candidate kernels (auto_timing.cu), in two forms:
// - time_candidates_on(): on the caller's stream, waiting for each run (the synchronous round:
//   CORRTRACK_AUTO_TIMING=sync, tests, the kernel bench);
// - queue_background_timing(): a copy of the frame is taken on the caller's stream (stream
//   ordered: no wait), and a worker thread times fresh instances of the candidates on its own
//   non-blocking stream; the caller meanwhile runs the rule-based choice. The caller's stream
//   is never synchronized.
// Thread rules: one worker thread per process, started on the first queued job, joined at exit;
// `done` callbacks run on it.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "corrtrack/correlator.h"

namespace corrtrack {

struct AutoTimingResult {
    std::vector<std::pair<float, std::string>> times;  // ms, kernel: fastest first
    std::string failures;                              // "name failed: why; ..."
    // "cuda_x 0.123 ms, cuda_y 0.456 ms[; failures]"
    std::string text() const;
};

// Returns the candidate ready to run this problem (its template set), or nullptr when it does
// not support it.
using PrepareCandidate = std::function<Correlator*(const std::string& name)>;

// One warm-up run, then the best of up to five timed runs of each candidate (a candidate this
// many times slower than the best so far is not repeated), on `stream`, waiting for each.
AutoTimingResult time_candidates_on(const std::vector<std::string>& names, const PrepareCandidate& prepare,
                                    ImageView frame, const NccProblem& p, MapView out, Stream stream);

// Queues a background round for this problem: copies `frame` (device memory) into a buffer of
// its own on `stream`, and on the worker times each of `names` with a fresh instance given
// `templ` (host, packed rows). `done` gets the result on the worker thread. False (nothing
// queued) where the copy cannot be made; the caller then times synchronously.
bool queue_background_timing(const std::vector<std::string>& names, ImageView frame, const NccProblem& p, MapView out,
                             std::vector<std::uint8_t> templ, Size templ_size, Stream stream,
                             std::function<void(const AutoTimingResult&)> done);

}  // namespace corrtrack
