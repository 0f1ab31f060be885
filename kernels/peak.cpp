// Host peak search: argmax, separable parabolic sub-pixel fit, second peak and PSR.
#include "corrtrack/peak.h"

#include <algorithm>
#include <cmath>

namespace corrtrack {

Peak find_peak(const MapView& map, PeakOptions opt) {
    Peak pk;
    pk.score = -2.0f;
    for (int y = 0; y < map.height; ++y) {
        const float* r = map.row(y);
        for (int x = 0; x < map.width; ++x)
            if (r[x] > pk.score) {
                pk.score = r[x];
                pk.x = x;
                pk.y = y;
            }
    }
    pk.sub_x = static_cast<float>(pk.x);
    pk.sub_y = static_cast<float>(pk.y);
    if (pk.x > 0 && pk.x + 1 < map.width)
        pk.sub_x += parabolic_offset(map.row(pk.y)[pk.x - 1], pk.score, map.row(pk.y)[pk.x + 1]);
    if (pk.y > 0 && pk.y + 1 < map.height)
        pk.sub_y += parabolic_offset(map.row(pk.y - 1)[pk.x], pk.score, map.row(pk.y + 1)[pk.x]);

    const int radius =
        opt.exclusion_radius > 0 ? opt.exclusion_radius : std::max(2, std::min(map.width, map.height) / 8);
    double sum = 0, sum_sq = 0;
    long long count = 0;
    float second = -1.0f;
    for (int y = 0; y < map.height; ++y) {
        const float* r = map.row(y);
        const bool near_row = std::abs(y - pk.y) <= radius;
        for (int x = 0; x < map.width; ++x) {
            if (near_row && std::abs(x - pk.x) <= radius) continue;
            sum += r[x];
            sum_sq += static_cast<double>(r[x]) * r[x];
            second = std::max(second, r[x]);
            ++count;
        }
    }
    pk.second = count > 0 ? second : 0.0f;
    if (count > 1) {
        const double mean = sum / count;
        const double sd = std::sqrt(std::max(0.0, sum_sq / count - mean * mean));
        pk.psr = static_cast<float>((pk.score - mean) / std::max(sd, 1e-6));
    }
    return pk;
}

}  // namespace corrtrack
