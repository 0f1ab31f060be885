#include "app/track/resample.h"

#include <algorithm>
#include <cmath>

namespace corrtrack {
namespace {

inline int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

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
    for (int v = 0; v < out.height; ++v) {
        const double sy = oy + (v + 0.5) * s - 0.5;
        const int y0 = static_cast<int>(std::floor(sy));
        const float fy = static_cast<float>(sy - y0);
        const std::uint8_t* r0 = src.row(clampi(y0, 0, src.height - 1));
        const std::uint8_t* r1 = src.row(clampi(y0 + 1, 0, src.height - 1));
        std::uint8_t* d = dst + v * pitch;
        for (int u = 0; u < out.width; ++u) {
            const int xa = sc.bx0[u], xb = sc.bx1[u];
            const float fx = sc.bfx[u];
            const float top = r0[xa] + fx * (r0[xb] - r0[xa]);
            const float bottom = r1[xa] + fx * (r1[xb] - r1[xa]);
            d[u] = round_to_u8(top + fy * (bottom - top));
        }
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
    // Source column of every tap, clamped once (border replication).
    sc.col_index.resize(static_cast<std::size_t>(out.width) * span);
    for (int u = 0; u < out.width; ++u)
        for (int i = 0; i < span; ++i)
            sc.col_index[static_cast<std::size_t>(u) * span + i] = clampi(sc.col_first[u] + i, 0, src.width - 1);
    const int src_row0 = row_first.front();
    const int src_rows = row_first.back() + row_count.back() - src_row0;
    sc.rows.resize(static_cast<std::size_t>(src_rows) * out.width);
    for (int r = 0; r < src_rows; ++r) {
        const std::uint8_t* row = src.row(clampi(src_row0 + r, 0, src.height - 1));
        float* h = &sc.rows[static_cast<std::size_t>(r) * out.width];
        for (int u = 0; u < out.width; ++u) {
            const float* w = &sc.col_weights[static_cast<std::size_t>(u) * span];
            const int* idx = &sc.col_index[static_cast<std::size_t>(u) * span];
            float acc = 0;
            for (int i = 0; i < sc.col_count[u]; ++i) acc += w[i] * row[idx[i]];
            h[u] = acc;
        }
    }
    // Column sums a row of outputs at a time (each output still adds its taps in order).
    sc.acc.resize(out.width);
    for (int v = 0; v < out.height; ++v) {
        const float* w = &row_weights[static_cast<std::size_t>(v) * span];
        std::fill(sc.acc.begin(), sc.acc.end(), 0.0f);
        for (int j = 0; j < row_count[v]; ++j) {
            const float* h = &sc.rows[static_cast<std::size_t>(row_first[v] - src_row0 + j) * out.width];
            const float wj = w[j];
            for (int u = 0; u < out.width; ++u) sc.acc[u] += wj * h[u];
        }
        std::uint8_t* d = dst + v * pitch;
        for (int u = 0; u < out.width; ++u) d[u] = round_to_u8(sc.acc[u]);
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
