// `corrtrack bench --e2e CLIP[,CLIP]`: the whole pipeline (decode thread, pinned slots, copy,
// track) timed end to end, software decode and NVDEC, each against decoding alone; with
// --targets, many targets on a grid or crowded (--layout; e2e_bench.cpp); with --streams, many copies of the clip in
// one process against N decode-only sessions (e2e_streams.cpp).
// Thread rules: runs on the main thread; each pass builds and tears down its own pipeline
// (--streams passes start a thread per stream, as `corrtrack track` does).
#pragma once

#include <string>
#include <vector>

#include "app/bench/target_grid.h"
#include "app/cli/nvdec_share.h"
#include "app/io/frame_source.h"
#include "app/track/types.h"

namespace corrtrack {

struct E2eOptions {
    std::vector<std::string> clips;
    std::vector<std::string> boxes;  // x,y,w,h per target; empty: one 64x64 box in the middle
    std::string kernel = "auto";
    long frames = -1;  // per pass (-1: the whole clip)
    int repeats = 3;   // passes per configuration; the median fps is reported
    // Decoders to time: the decode-vs-track table and --targets take sw and nvdec from it,
    // --streams all three.
    std::vector<DecodeMode> decoders = {DecodeMode::kSoftware, DecodeMode::kNvdec, DecodeMode::kAuto};
    std::vector<int> targets;                   // --targets: one pass per count, that many boxes on a grid
    Size target_size{40, 40};                   // --target-size
    TargetLayout layout = TargetLayout::kGrid;  // --layout: where the --targets boxes go
    std::vector<int> streams;                   // --streams: one pass per count, that many copies of the clip
    bool realtime = false;                      // --realtime: --streams passes paced at the clip's timestamps
    bool targets_only = false;                  // --targets-only: no decode-vs-track table first
    int nvdec_streams = kDefaultNvdecStreams;   // --nvdec-streams, for --streams with auto
    double nvdec_rate = kDefaultNvdecMpixPerS;  // --nvdec-rate, for --streams --realtime with auto
    std::string json;
    bool quiet = false;
};

constexpr int kMaxE2eTargets = 4096;
constexpr int kMaxE2eStreams = 256;

int run_e2e_bench(const E2eOptions& options);

}  // namespace corrtrack
