// The median run of a few repeats, for the end-to-end bench's passes and ceilings.
// Thread rules: a plain function template; run_once runs on the calling thread.
#pragma once

#include <algorithm>
#include <vector>

namespace corrtrack {

// Runs run_once() `repeats` times (at least once) and returns the median-fps run, its other
// figures with it and every run's fps in fps_runs; the first run that fails (!ok) is returned
// at once. The result type needs `ok`, `fps` and `fps_runs`.
template <typename Run>
auto median_of_runs(int repeats, const Run& run_once) {
    using Result = decltype(run_once());
    std::vector<Result> runs;
    for (int r = 0; r < std::max(1, repeats); ++r) {
        runs.push_back(run_once());
        if (!runs.back().ok) return runs.back();
    }
    std::vector<double> fps;
    for (const Result& p : runs) fps.push_back(p.fps);
    std::sort(runs.begin(), runs.end(), [](const Result& a, const Result& b) { return a.fps < b.fps; });
    Result mid = runs[runs.size() / 2];
    mid.fps_runs = fps;
    return mid;
}

}  // namespace corrtrack
