#include "app/track/resample.h"

#include <algorithm>
#include <cmath>

#include "app/track/clones.h"

#if CORRTRACK_HAVE_AVX2_PATH
#include <immintrin.h>
#endif

namespace corrtrack {
namespace {

inline int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// round_to_u8 without branches, so that the row loops vectorize: the same byte for every v
// these samplers make (a weighted mean of bytes, far inside int's range): truncation, half up,
// clamped.
inline std::uint8_t round_mean(float v) {
    int r = static_cast<int>(v);
    r += v - static_cast<float>(r) >= 0.5f ? 1 : 0;
    r = r < 0 ? 0 : r;
    r = r > 255 ? 255 : r;
    return static_cast<std::uint8_t>(r);
}

// The row loops below take restrict pointers: a byte store could alias any float (char
// aliasing), which would keep them scalar. This file builds at -O3 (app/CMakeLists.txt).
void blend_rows(const float* __restrict top, const float* __restrict bottom, float fy, std::uint8_t* __restrict d,
                int n) {
    for (int u = 0; u < n; ++u) d[u] = round_mean(top[u] + fy * (bottom[u] - top[u]));
}

void add_row(float* __restrict acc, const float* __restrict h, float w, int n) {
    for (int u = 0; u < n; ++u) acc[u] += w * h[u];
}

void round_row(const float* __restrict acc, std::uint8_t* __restrict d, int n) {
    for (int u = 0; u < n; ++u) d[u] = round_mean(acc[u]);
}

// One source row (as floats, `row`) filtered at every output column, tap by tap across the
// columns (weights and source columns tap-major, zero weights past a column's own taps): each
// column still adds its taps in order, and adding 0 x a pixel leaves a sum unchanged, so the
// values are a per-column loop's. The AVX2 form gathers eight columns' pixels at once (no FMA:
// the same multiply, then add).
void area_row_portable(const float* __restrict row, const float* __restrict weights, const int* __restrict index,
                       int taps, int n, float* __restrict h) {
    for (int u = 0; u < n; ++u) h[u] = 0.0f;
    for (int i = 0; i < taps; ++i) {
        const float* w = weights + static_cast<std::size_t>(i) * n;
        const int* idx = index + static_cast<std::size_t>(i) * n;
        for (int u = 0; u < n; ++u) h[u] += w[u] * row[idx[u]];
    }
}

#if CORRTRACK_HAVE_AVX2_PATH
__attribute__((target("avx2"))) void area_row_avx2(const float* row, const float* weights, const int* index, int taps,
                                                   int n, float* h) {
    int u = 0;
    for (; u + 8 <= n; u += 8) {
        __m256 acc = _mm256_setzero_ps();
        for (int i = 0; i < taps; ++i) {
            const std::size_t at = static_cast<std::size_t>(i) * n + u;
            const __m256i idx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(index + at));
            const __m256 px = _mm256_i32gather_ps(row, idx, 4);
            acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_loadu_ps(weights + at), px));
        }
        _mm256_storeu_ps(h + u, acc);
    }
    for (; u < n; ++u) {
        float acc = 0.0f;
        for (int i = 0; i < taps; ++i) {
            const std::size_t at = static_cast<std::size_t>(i) * n + u;
            acc += weights[at] * row[index[at]];
        }
        h[u] = acc;
    }
}
#endif

void area_row(const float* row, const float* weights, const int* index, int taps, int n, float* h) {
#if CORRTRACK_HAVE_AVX2_PATH
    static const bool avx2 = __builtin_cpu_supports("avx2");
    if (avx2) return area_row_avx2(row, weights, index, taps, n, h);
#endif
    area_row_portable(row, weights, index, taps, n, h);
}

void bytes_to_floats(const std::uint8_t* __restrict src, int n, float* __restrict dst) {
    for (int x = 0; x < n; ++x) dst[x] = src[x];
}

void copy_integer(ImageView src, int ox, int oy, Size out, std::uint8_t* dst, std::size_t pitch) {
    for (int v = 0; v < out.height; ++v) {
        const std::uint8_t* row = src.row(clampi(oy + v, 0, src.height - 1));
        std::uint8_t* d = dst + v * pitch;
        const int first = clampi(-ox, 0, out.width);            // columns left of the frame
        const int last = clampi(src.width - ox, 0, out.width);  // first column past it
        for (int u = 0; u < first; ++u) d[u] = row[0];
        if (last > first) std::copy(row + ox + first, row + ox + last, d + first);
        for (int u = std::max(first, last); u < out.width; ++u) d[u] = row[src.width - 1];
    }
}

// Source row y filtered horizontally at the output columns, as bilinear() needs it: the same
// float expression per pixel as a direct 2x2 interpolation, so the result is bit for bit the
// same (and the device sampler's, device_search.cu).
void bilinear_row(const std::uint8_t* r, const ResampleScratch& sc, int n, float* h) {
    for (int u = 0; u < n; ++u) {
        const int xa = sc.bx0[u], xb = sc.bx1[u];
        h[u] = r[xa] + sc.bfx[u] * (r[xb] - r[xa]);
    }
}

void bilinear(ImageView src, double ox, double oy, double s, Size out, std::uint8_t* dst, std::size_t pitch,
              ResampleScratch& sc) {
    // The column positions are the same for every row: computed once.
    sc.bx0.resize(out.width);
    sc.bx1.resize(out.width);
    sc.bfx.resize(out.width);
    for (int u = 0; u < out.width; ++u) {
        const double sx = ox + (u + 0.5) * s - 0.5;
        const int x0 = static_cast<int>(std::floor(sx));
        sc.bfx[u] = static_cast<float>(sx - x0);
        sc.bx0[u] = clampi(x0, 0, src.width - 1);
        sc.bx1[u] = clampi(x0 + 1, 0, src.width - 1);
    }
    // At scale <= 1.25 successive output rows mostly share a source row: each source row is
    // filtered once into one of two row slots (most output rows filter one row, not two), and
    // the vertical blend runs over contiguous floats.
    const std::size_t w = static_cast<std::size_t>(out.width);
    sc.rows.resize(2 * w);
    int held[2] = {-1, -1};  // the source row in each slot
    auto filtered = [&](int y, int keep) -> const float* {
        for (int k = 0; k < 2; ++k)
            if (held[k] == y) return &sc.rows[k * w];
        const int k = held[0] == keep ? 1 : 0;  // never evict the row the caller also needs
        held[k] = y;
        bilinear_row(src.row(y), sc, out.width, &sc.rows[k * w]);
        return &sc.rows[k * w];
    };
    for (int v = 0; v < out.height; ++v) {
        const double sy = oy + (v + 0.5) * s - 0.5;
        const int y0 = static_cast<int>(std::floor(sy));
        const float fy = static_cast<float>(sy - y0);
        const int ya = clampi(y0, 0, src.height - 1), yb = clampi(y0 + 1, 0, src.height - 1);
        const float* top = filtered(ya, yb);
        const float* bottom = filtered(yb, ya);
        blend_rows(top, bottom, fy, dst + v * pitch, out.width);
    }
}

// Overlap weights of each output cell [o + k*s, o + (k+1)*s) with source cells [i, i+1),
// normalised to sum 1.
void area_weights(double o, double s, int n, std::vector<int>& first, std::vector<int>& count,
                  std::vector<float>& weights) {
    const int span = static_cast<int>(std::ceil(s)) + 2;
    first.resize(n);
    count.resize(n);
    weights.assign(static_cast<std::size_t>(n) * span, 0.0f);  // keeps capacity
    for (int k = 0; k < n; ++k) {
        const double a = o + k * s, b = a + s;
        const int i0 = static_cast<int>(std::floor(a));
        const int i1 = std::min(static_cast<int>(std::ceil(b)), i0 + span);
        first[k] = i0;
        count[k] = i1 - i0;
        for (int i = i0; i < i1; ++i)
            weights[static_cast<std::size_t>(k) * span + (i - i0)] =
                static_cast<float>((std::min<double>(b, i + 1) - std::max<double>(a, i)) / s);
    }
}

void area(ImageView src, double ox, double oy, double s, Size out, std::uint8_t* dst, std::size_t pitch,
          ResampleScratch& sc) {
    const int span = static_cast<int>(std::ceil(s)) + 2;
    std::vector<int>& row_first = sc.row_first;
    std::vector<int>& row_count = sc.row_count;
    std::vector<float>& row_weights = sc.row_weights;
    area_weights(ox, s, out.width, sc.col_first, sc.col_count, sc.col_weights);
    area_weights(oy, s, out.height, row_first, row_count, row_weights);
    // Source column and weight of every tap, tap-major (area_row), the column clamped once
    // (border replication) and counted from the first column read; area_weights leaves the
    // weights past a column's count at zero. Taps past every column's count are skipped.
    const std::size_t w = static_cast<std::size_t>(out.width);
    const int taps = *std::max_element(sc.col_count.begin(), sc.col_count.end());
    const int lo = clampi(sc.col_first.front(), 0, src.width - 1);
    const int hi = clampi(sc.col_first.back() + taps - 1, 0, src.width - 1);
    sc.col_index.resize(w * taps);
    sc.col_weights_by_tap.resize(w * taps);
    for (int u = 0; u < out.width; ++u)
        for (int i = 0; i < taps; ++i) {
            sc.col_index[i * w + u] = clampi(sc.col_first[u] + i, 0, src.width - 1) - lo;
            sc.col_weights_by_tap[i * w + u] = sc.col_weights[u * span + i];
        }
    const int src_row0 = row_first.front();
    const int src_rows = row_first.back() + row_count.back() - src_row0;
    sc.rows.resize(static_cast<std::size_t>(src_rows) * out.width);
    sc.source_row.resize(static_cast<std::size_t>(hi - lo + 1));
    for (int r = 0; r < src_rows; ++r) {
        bytes_to_floats(src.row(clampi(src_row0 + r, 0, src.height - 1)) + lo, hi - lo + 1, sc.source_row.data());
        area_row(sc.source_row.data(), sc.col_weights_by_tap.data(), sc.col_index.data(), taps, out.width,
                 &sc.rows[r * w]);
    }
    // Column sums a row of outputs at a time (each output still adds its taps in order).
    sc.acc.resize(out.width);
    for (int v = 0; v < out.height; ++v) {
        const float* w = &row_weights[static_cast<std::size_t>(v) * span];
        std::fill(sc.acc.begin(), sc.acc.end(), 0.0f);
        for (int j = 0; j < row_count[v]; ++j) {
            const float* h = &sc.rows[static_cast<std::size_t>(row_first[v] - src_row0 + j) * out.width];
            add_row(sc.acc.data(), h, w[j], out.width);
        }
        round_row(sc.acc.data(), dst + v * pitch, out.width);
    }
}

}  // namespace

void sample_patch(ImageView src, double ox, double oy, double scale, Size out_size, std::uint8_t* out,
                  std::size_t out_pitch, ResampleScratch& scratch) {
    if (out_size.width <= 0 || out_size.height <= 0) return;
    const bool integer_origin = ox == std::floor(ox) && oy == std::floor(oy);
    if (scale == 1.0 && integer_origin)
        copy_integer(src, static_cast<int>(ox), static_cast<int>(oy), out_size, out, out_pitch);
    else if (scale <= 1.25)
        bilinear(src, ox, oy, scale, out_size, out, out_pitch, scratch);
    else
        area(src, ox, oy, scale, out_size, out, out_pitch, scratch);
}

}  // namespace corrtrack
