// Timing and sample statistics shared by the tracker, the pipeline, the CLI, the bench and the
// GUI: host milliseconds since a steady-clock point, and the median and percentiles of a sample.
// Thread rules: stateless.
#pragma once

#include <chrono>
#include <vector>

namespace corrtrack {

// Host milliseconds from t0 to now (steady clock).
inline double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The p-th percentile (0..100) by linear interpolation between order statistics; 0 when empty.
double percentile(std::vector<double> v, double p);
// The median: the middle value, or the mean of the two middle values of an even count; 0 when
// empty.
double median(std::vector<double> v);

}  // namespace corrtrack
