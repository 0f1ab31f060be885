// `corrtrack bench --e2e CLIP[,CLIP]`: the whole pipeline (decode thread, pinned slots, copy,
// track) timed end to end, software decode and NVDEC, each against decoding alone.
// Thread rules: runs on the main thread; each pass builds and tears down its own pipeline.
#pragma once

#include <string>
#include <vector>

namespace corrtrack {

struct E2eOptions {
    std::vector<std::string> clips;
    std::vector<std::string> boxes;  // x,y,w,h per target; empty: one 64x64 box in the middle
    std::string kernel = "auto";
    long frames = -1;  // per pass (-1: the whole clip)
    int repeats = 3;   // passes per configuration; the median fps is reported
    std::string json;
    bool quiet = false;
};

int run_e2e_bench(const E2eOptions& options);

}  // namespace corrtrack
