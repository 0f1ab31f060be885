// `corrtrack bench --e2e CLIP --streams N[,N...]`: N copies of the clip tracked in one process
// as `corrtrack track --input CLIP ... --input CLIP ...` runs them (run_stream_set: a thread,
// decode thread, tracker and CUDA stream per stream, NVDEC places shared by --nvdec-streams),
// against FFmpeg's decode-only ceiling in the same run: N sessions decoding the clip at once,
// nothing else, each on the decoder its stream had.
// Thread rules: called on the main thread; each pass starts and joins its own threads.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/bench/e2e_bench.h"
#include "app/bench/e2e_clip.h"

namespace corrtrack {

void print_streams_header(const E2eOptions& options);
// One row per stream count and decoder of options.decoders (printed, and returned as a JSON
// array); a pass that fails prints why and sets *rc to 1. kernel: the resolved name.
nlohmann::json run_streams_rows(const E2eClip& clip, const std::vector<BoxF>& boxes, const E2eOptions& options,
                                const std::string& kernel, int* rc);

}  // namespace corrtrack
