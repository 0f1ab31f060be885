// Pieces shared by the CLI commands: tracker flags, option checks, stage-time summaries (box
// parsing: app/io/box_file.h; statistics: app/util/stats.h, both included here).
// Thread rules: main thread only.
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/io/box_file.h"  // parse_box, read_box_file, ... (the commands' boxes)
#include "app/io/camera_modes.h"
#include "app/track/tracker.h"
#include "app/util/stats.h"  // median, percentile

namespace corrtrack {

// Adds --kernel, --search-factor, --max-template, --update, --blend-rate, --keyframe-interval,
// --update-min-score, --lost-score, --recover-score, --scales, --scale-step, ... Every numeric
// option carries its range check at its declaration (a value outside is a usage error, exit 2);
// a new option follows the same pattern.
void add_tracker_options(CLI::App& cmd, TrackerOptions& options);

// Adds --no-cache: auto neither reads nor writes its timing cache on disk (sets
// CORRTRACK_NO_CACHE=1). A process setting, not a tracker option: track, eval, gui and bench
// add it beside add_tracker_options.
void add_no_cache_option(CLI::App& cmd);

// Adds --camera-size WxH, --camera-fps N and --camera-format NAME (for /dev/videoN inputs);
// malformed or out-of-range values are usage errors that say what is accepted.
void add_camera_options(CLI::App& cmd, CameraRequest& request);
// A camera mode only means something for a camera: false + *error for another input.
bool check_camera_input(const std::string& input, const CameraRequest& request, std::string* error);

// Option value checks. finite_range: a finite number in [lo, hi]; CLI::Range alone lets NaN
// through (every comparison with NaN is false) and says nothing about inf.
CLI::Validator finite_range(double lo, double hi);
// A frame count: -1 (all) or 1..kMaxFrames; 0 would process nothing and is refused.
CLI::Validator frame_count();
// A numeric option checked as it is parsed (outside [lo, hi]: a usage error), its default
// shown in --help: CLI::Range for an integer, finite_range otherwise.
template <typename T, typename Bound>
CLI::Option* add_ranged_option(CLI::App& cmd, const std::string& flags, T& value, const std::string& help, Bound lo,
                               Bound hi) {
    CLI::Option* option = cmd.add_option(flags, value, help);
    if constexpr (std::is_integral_v<T>)
        option->check(CLI::Range(lo, hi));
    else
        option->check(finite_range(lo, hi));
    return option->capture_default_str();
}
// Bounds shared by every command that reads media.
constexpr double kMaxReadTimeoutS = 86400;  // a day: "wait for ever" in practice
constexpr long kMaxFrames = 1L << 40;

// Per-stage samples for the end-of-run summary.
struct StageSamples {
    std::vector<double> decode, upload, correlate, peak, render, latency;  // latency: decode start to box ready
    void add(const StageTimes& t);
    // "decode 1.20 / 2.10 ms, upload ..." (median / p95)
    std::string summary() const;
};

// Exit codes: usage problems (bad flag values, unknown kernel, an output that would overwrite
// an input) vs input/runtime failures (an input that cannot be read, a write error), a damaged
// input whose other frames were tracked (track; --allow-damaged makes it 0), and 128 + N for
// a run stopped by signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP) after writing its outputs.
constexpr int kExitUsage = 2;
constexpr int kExitInput = 1;
constexpr int kExitDamaged = 3;

}  // namespace corrtrack
