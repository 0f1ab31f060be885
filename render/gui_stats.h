// `gui --stats PATH` (with --screenshot/--frames): the GUI loop timed at full speed, each
// iteration tracking a frame and drawing it as the interactive loop does, then one JSON summary
// (loop fps, frame/track/draw times, kernel, decode and interop paths, GL strings, A/B result).
// What it is for: measuring the whole window on a machine without a display (docs/gui.md).
// Thread rules: main thread only, like the loop it times.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace corrtrack {

class LoopStats {
public:
    // One loop iteration: time to get and track the frame, then to draw and swap it.
    void add(double track_ms, double draw_ms);
    // The iterations left out of the timing: the first ones pay for JIT, allocations and the
    // first texture uploads. min(10, n / 4).
    std::size_t warmup() const;
    // Timing fields (frames, drawn, warmup, measured, seconds, loop_fps, track_fps, frame_ms,
    // track_ms, draw_ms) merged over `fields` (what the controller reports).
    nlohmann::json summary(long frames_done, nlohmann::json fields) const;

private:
    std::vector<double> track_ms_, draw_ms_;
};

// Writes `j` to `path` ("-": stdout), one line; false (said on stderr) when it cannot.
bool write_stats(const std::string& path, const nlohmann::json& j);

}  // namespace corrtrack
