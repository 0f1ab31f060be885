// The one formula every kernel uses to turn exact integer window sums into an NCC score.
// Thread rules: pure functions, callable from host and device code.
#pragma once

#include <cstdint>
#include <cmath>

#if defined(__CUDACC__)
#define CORRTRACK_HD __host__ __device__ inline
#else
#define CORRTRACK_HD inline
#endif

namespace corrtrack {

// Largest template a kernel has to handle: 256x256 keeps SII and SIT of one window below
// 2^32 (65536 * 255^2 = 4.26e9), so every kernel may accumulate them in unsigned 32 bits.
constexpr int kMaxTemplateSide = 256;
constexpr long long kMaxTemplatePixels = 65536;

// TM_CCOEFF_NORMED from exact sums. All products below stay inside int64
// (n * sii <= 65536 * 4.26e9 = 2.8e14), so the variances and the numerator are exact and a
// flat window or template is recognised exactly (zero variance), never by an epsilon.
CORRTRACK_HD float ncc_from_sums(std::int64_t n, std::int64_t si, std::int64_t sii, std::int64_t sit, std::int64_t st,
                                 std::int64_t stt) {
    const std::int64_t var_i = n * sii - si * si;
    const std::int64_t var_t = n * stt - st * st;
    if (var_i <= 0 || var_t <= 0) return 0.0f;
    const std::int64_t num = n * sit - si * st;
    double r = static_cast<double>(num) / sqrt(static_cast<double>(var_i) * static_cast<double>(var_t));
    r = r > 1.0 ? 1.0 : (r < -1.0 ? -1.0 : r);
    return static_cast<float>(r);
}

}  // namespace corrtrack
