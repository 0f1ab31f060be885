// The bench's settings (what `corrtrack bench` takes on its command line, registered in
// app/cli/bench_command.cpp), the limits that bound them, and the parsing helpers the plan is
// read with (lists, sizes, kernel names).
// Thread rules: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/bench/cases.h"
#include "corrtrack/correlator.h"

namespace corrtrack::bench {

struct BenchOptions {
    std::string kernels;
    // Defaults: the timed cases of the shared case list (cases.h).
    std::string sizes = default_sizes_text();          // 640x480,1920x1080,3840x2160
    std::string templates = default_templates_text();  // 8,16,32,64,128,48x24
    std::string modes = default_modes_text();          // full,window
    int runs = 20;
    int warmup = 3;
    double max_seconds = 2.0;
    double max_total_seconds = 0.0;
    double hang_seconds = 0.0;  // 0: max(60, 30 x max_seconds)
    std::string csv, plot, json;
    std::uint32_t seed = 1;
    double peak_gmacs = 0.0;
    // Roofline peaks (roofline.h); 0: the GPU's own (CPU rows: none).
    double peak_bw_gbps = 0.0, peak_tmacs = 0.0;
    double cpu_peak_bw_gbps = 0.0, cpu_peak_tmacs = 0.0;
    std::vector<std::string> ratio_to;
    bool variants = false;  // also time the tuning variants (kernel_variants())
    bool quiet = false;
    int batch = 0;  // window cases: also time this many targets batched vs separately (0: off)
};

// GPU medians need enough samples to be stable; CPU kernels may time fewer to fit the budget.
constexpr int kMinGpuRuns = 20;
constexpr int kMinCpuRuns = 5;
// Baselines every row is compared with (time_baseline / time_kernel).
inline const char* const kBaselines[] = {"cuda_shared", "cuda_fft"};
// --batch at most this many targets (one correlator each for the separate calls).
constexpr int kMaxBatch = 1024;
// Frames up to 16384 a side and 8192x8192 pixels: a float map of the largest is 256 MiB.
constexpr int kMaxFrameSide = 16384;
constexpr long long kMaxFrameArea = 8192LL * 8192;

std::string trim(const std::string& s);
// Comma-separated items, trimmed, empty ones dropped.
std::vector<std::string> split_list(const std::string& text);
// A positive decimal of at most 6 digits.
bool parse_int(const std::string& s, int* v);
// "WxH", or "N" for N x N when square_ok.
bool parse_size(const std::string& text, bool square_ok, Size* out);
// "OPTION: unknown kernel 'NAME' (known: ...)", with a hint for cpu_opencv.
std::string unknown_kernel_message(const std::string& name, const char* option);

}  // namespace corrtrack::bench
