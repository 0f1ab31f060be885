// Pieces shared by the CLI commands: tracker flags, box parsing, stage-time summaries.
// Thread rules: main thread only.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app/track/tracker.h"

namespace corrtrack {

// Adds --kernel, --search-factor, --max-template, --update, --blend-rate, --keyframe-interval,
// --update-min-score, --lost-score, --recover-score, --scales, --scale-step.
void add_tracker_options(CLI::App& cmd, TrackerOptions& options);

// "x,y,w,h" (commas, spaces or tabs). False + *error when malformed.
bool parse_box(const std::string& text, BoxF* box, std::string* error);

// "<input minus extension>.box" next to the input when that file exists (how the bundled
// sample carries its default target), else "".
std::string default_box_file(const std::string& input);
// One x,y,w,h per line, '#' starts a comment. False + *error when unreadable, malformed or empty.
bool read_box_file(const std::string& path, std::vector<BoxF>* boxes, std::string* error);

// Median and 95th percentile of a sample (0 when empty).
double median(std::vector<double> v);
double percentile(std::vector<double> v, double p);

// Per-stage samples for the end-of-run summary.
struct StageSamples {
    std::vector<double> decode, upload, correlate, peak, render, latency;  // latency: decode start to box ready
    void add(const StageTimes& t);
    // "decode 1.20 / 2.10 ms, upload ..." (median / p95)
    std::string summary() const;
};

// Exit codes: usage problems (bad flag values, unknown kernel) vs input/runtime failures.
constexpr int kExitUsage = 2;
constexpr int kExitInput = 1;

}  // namespace corrtrack
