#include "app/util/stats.h"

#include <algorithm>
#include <cstddef>
#include <utility>

namespace corrtrack {

double percentile(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const double pos = p / 100.0 * (v.size() - 1);
    const std::size_t i = static_cast<std::size_t>(pos);
    const double f = pos - i;
    return i + 1 < v.size() ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

double median(std::vector<double> v) { return percentile(std::move(v), 50.0); }

}  // namespace corrtrack
