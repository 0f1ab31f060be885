// The AVX-512 VNNI numerator, the CPU twin of cuda_dp4a_ilp: vpdpbusd multiplies 4 unsigned
// template bytes by 4 signed image bytes and adds them into a 32-bit lane, 16 lanes = 16 output
// columns. The image is read as I - 128 (a signed byte, exact), so the sum lacks
// 128 * sum(T), a constant added at the end: no window sums are needed here.
// Register block: kVnniRows output rows x C chunks of 16 columns. Each image row is permuted
// into the 16 overlapping 4-byte groups once (vpermb) and used by every output row of the block
// that it meets (a Toeplitz reuse, as cuda_mma does with its template matrix).
#include <immintrin.h>

// GCC 12's vpermb intrinsic passes _mm512_undefined_epi32() as its unused merge source, which
// -Wmaybe-uninitialized reports.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "cpu/int8_numerator.h"

namespace corrtrack {
namespace {

#define CORRTRACK_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni,avx512vbmi")))

template <int R, int C>
CORRTRACK_VNNI void vnni_block(const Int8Args& a, int y0, int x_begin, int x_end) {
    // Lane l of a permuted load holds bytes l..l+3 of it: the 4 pixels that output column l
    // multiplies by template columns m..m+3.
    alignas(64) std::uint8_t idx_bytes[64];
    for (int l = 0; l < 16; ++l)
        for (int q = 0; q < 4; ++q) idx_bytes[4 * l + q] = static_cast<std::uint8_t>(l + q);
    const __m512i idx = _mm512_load_si512(idx_bytes);
    const auto* templ = static_cast<const std::uint8_t*>(a.templ);
    const int rows = R + a.th - 1;
    const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));  // I - 128 as a signed byte
    const __m512i bias = _mm512_set1_epi32(static_cast<int>(a.bias));
    for (int x0 = x_begin; x0 < x_end; x0 += 16 * C) {
        __m512i acc[R][C];
#pragma GCC unroll 8
        for (int rr = 0; rr < R; ++rr)
#pragma GCC unroll 8
            for (int c = 0; c < C; ++c) acc[rr][c] = _mm512_setzero_si512();
        for (int r = 0; r < rows; ++r) {
            const std::uint8_t* irow = a.image + static_cast<std::size_t>(y0 + r) * a.pitch + x0;
            // Output row rr of the block meets this image row at template row r - rr.
            const int rr_lo = r - a.th + 1 > 0 ? r - a.th + 1 : 0;
            const int rr_hi = r < R - 1 ? r : R - 1;
            for (int m = 0; m < a.tw_padded; m += 4) {
                __m512i px[C];
#pragma GCC unroll 8
                for (int c = 0; c < C; ++c)
                    px[c] = _mm512_xor_si512(_mm512_permutexvar_epi8(idx, _mm512_loadu_si512(irow + 16 * c + m)), flip);
#pragma GCC unroll 8
                for (int rr = 0; rr < R; ++rr) {
                    if (rr < rr_lo || rr > rr_hi) continue;
                    std::int32_t t4;
                    __builtin_memcpy(&t4, templ + static_cast<std::size_t>(r - rr) * a.tw_padded + m, 4);
                    const __m512i t = _mm512_set1_epi32(t4);
#pragma GCC unroll 8
                    for (int c = 0; c < C; ++c) acc[rr][c] = _mm512_dpbusd_epi32(acc[rr][c], t, px[c]);
                }
            }
        }
#pragma GCC unroll 8
        for (int rr = 0; rr < R; ++rr) {
            if (y0 + rr >= a.oh) break;
            std::uint32_t* dst = a.out + static_cast<std::size_t>(y0 + rr) * a.out_pitch + x0;
#pragma GCC unroll 8
            for (int c = 0; c < C; ++c) {
                const int left = a.ow - x0 - 16 * c;
                if (left <= 0) break;
                const __mmask16 keep = left >= 16 ? 0xffff : static_cast<__mmask16>((1u << left) - 1);
                _mm512_mask_storeu_epi32(dst + 16 * c, keep, _mm512_add_epi32(acc[rr][c], bias));
            }
        }
    }
}

}  // namespace

void int8_rows_vnni(const Int8Args& a, int y_begin, int y_end, int x_begin, int x_end) {
    // Whole 64-column blocks, then 16-column ones: a tracking window's 49 or 65 output columns
    // would otherwise compute up to twice what they keep.
    const int x_wide = x_begin + (x_end - x_begin) / 64 * 64;
    for (int y0 = y_begin; y0 < y_end; y0 += kVnniRows) {
        vnni_block<kVnniRows, 4>(a, y0, x_begin, x_wide);
        vnni_block<kVnniRows, 1>(a, y0, x_wide, x_end);
    }
}

}  // namespace corrtrack
