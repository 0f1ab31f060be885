// The AVX2 numerator: vpmaddwd multiplies pairs of 16-bit pixels by pairs of 16-bit template
// values and adds each pair into a 32-bit lane, 8 lanes = 8 output columns. Pixels and
// template are 0..255, so products and pair sums are exact; the 32-bit lanes wrap only above
// the 2^32 that no SIT reaches (kMaxTemplatePixels). Same register block as the VNNI kernel:
// kAvx2Rows output rows x C chunks, each image row shuffled once per template column pair.
#include <immintrin.h>

#include "cpu/int8_numerator.h"

namespace corrtrack {
namespace {

#define CORRTRACK_AVX2 __attribute__((target("avx2")))

template <int R, int C>
CORRTRACK_AVX2 void avx2_block(const Int8Args& a, int y0, int x_begin, int x_end) {
    // From 16 loaded bytes (the same in both 128-bit halves), lane l gets pixels l and l + 1 as
    // two 16-bit words (-1 zeroes the high bytes).
    const __m256i idx = _mm256_setr_epi8(0, -1, 1, -1, 1, -1, 2, -1, 2, -1, 3, -1, 3, -1, 4, -1, 4, -1, 5, -1, 5, -1, 6,
                                         -1, 6, -1, 7, -1, 7, -1, 8, -1);
    const auto* pairs = static_cast<const std::int32_t*>(a.templ);
    const int pw = a.tw_padded / 2;
    const int rows = R + a.th - 1;
    for (int x0 = x_begin; x0 < x_end; x0 += 8 * C) {
        __m256i acc[R][C];
#pragma GCC unroll 8
        for (int rr = 0; rr < R; ++rr)
#pragma GCC unroll 8
            for (int c = 0; c < C; ++c) acc[rr][c] = _mm256_setzero_si256();
        for (int r = 0; r < rows; ++r) {
            const std::uint8_t* irow = a.image + static_cast<std::size_t>(y0 + r) * a.pitch + x0;
            const int rr_lo = r - a.th + 1 > 0 ? r - a.th + 1 : 0;
            const int rr_hi = r < R - 1 ? r : R - 1;
            for (int m = 0; m < pw; ++m) {
                __m256i px[C];
#pragma GCC unroll 8
                for (int c = 0; c < C; ++c)
                    px[c] = _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_loadu_si128(
                                                    reinterpret_cast<const __m128i*>(irow + 8 * c + 2 * m))),
                                                idx);
#pragma GCC unroll 8
                for (int rr = 0; rr < R; ++rr) {
                    if (rr < rr_lo || rr > rr_hi) continue;
                    const __m256i t = _mm256_set1_epi32(pairs[static_cast<std::size_t>(r - rr) * pw + m]);
#pragma GCC unroll 8
                    for (int c = 0; c < C; ++c) acc[rr][c] = _mm256_add_epi32(acc[rr][c], _mm256_madd_epi16(px[c], t));
                }
            }
        }
#pragma GCC unroll 8
        for (int rr = 0; rr < R; ++rr) {
            if (y0 + rr >= a.oh) break;
            std::uint32_t* dst = a.out + static_cast<std::size_t>(y0 + rr) * a.out_pitch + x0;
#pragma GCC unroll 8
            for (int c = 0; c < C; ++c) {
                const int left = a.ow - x0 - 8 * c;
                if (left <= 0) break;
                if (left >= 8) {
                    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 8 * c), acc[rr][c]);
                } else {
                    alignas(32) std::uint32_t lanes[8];
                    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc[rr][c]);
                    for (int i = 0; i < left; ++i) dst[8 * c + i] = lanes[i];
                }
            }
        }
    }
}

}  // namespace

void int8_rows_avx2(const Int8Args& a, int y_begin, int y_end, int x_begin, int x_end) {
    // Whole 16-column blocks, then an 8-column one.
    const int x_wide = x_begin + (x_end - x_begin) / 16 * 16;
    for (int y0 = y_begin; y0 < y_end; y0 += kAvx2Rows) {
        avx2_block<kAvx2Rows, 2>(a, y0, x_begin, x_wide);
        avx2_block<kAvx2Rows, 1>(a, y0, x_wide, x_end);
    }
}

}  // namespace corrtrack
