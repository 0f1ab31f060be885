#include "cpu/ncc_epilogue.h"

#include <immintrin.h>

// GCC 12's AVX-512 conversion intrinsics pass _mm512_undefined_*() as their unused merge
// source, which -Wmaybe-uninitialized reports.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu/int8_numerator.h"
#include "corrtrack/work_pool.h"

namespace corrtrack {
namespace {

// Below this many positions the map is made on the calling thread (tracking windows).
constexpr long long kParallelPositions = 200000;

// ncc_from_sums over a row, in doubles so that it vectorises, with the same result bit for bit:
// every product (n * sii, si * si, n * sit, si * st) is an integer below 2^48, so each and
// their differences are exact in a double, as ncc_from_sums' int64 values converted are; the
// square root and the division then see the same operands, and min/max clamp as it does
// (r is finite wherever var_i > 0 keeps it).
struct RowArgs {
    const std::uint32_t *pre, *pre_sq, *sit;
    float* dst;
    int ow, tw;
    double n, st, var_t;
};

inline float ncc_one(const RowArgs& a, int x) {
    const double si = static_cast<double>(a.pre[x + a.tw] - a.pre[x]);
    const double sii = static_cast<double>(a.pre_sq[x + a.tw] - a.pre_sq[x]);
    const double var_i = a.n * sii - si * si;
    if (var_i <= 0) return 0.0f;
    double r = (a.n * static_cast<double>(a.sit[x]) - si * a.st) / std::sqrt(var_i * a.var_t);
    r = r > 1.0 ? 1.0 : (r < -1.0 ? -1.0 : r);
    return static_cast<float>(r);
}

void ncc_row_scalar(const RowArgs& a) {
    for (int x = 0; x < a.ow; ++x) a.dst[x] = ncc_one(a, x);
}

__attribute__((target("avx512f,avx512vl"))) void ncc_row_avx512(const RowArgs& a) {
    const __m512d n = _mm512_set1_pd(a.n), st = _mm512_set1_pd(a.st), var_t = _mm512_set1_pd(a.var_t);
    const __m512d one = _mm512_set1_pd(1.0), minus_one = _mm512_set1_pd(-1.0), zero = _mm512_setzero_pd();
#define LOAD8(p) _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))
    int x = 0;
    for (; x + 8 <= a.ow; x += 8) {
        const __m512d si = _mm512_cvtepu32_pd(_mm256_sub_epi32(LOAD8(a.pre + x + a.tw), LOAD8(a.pre + x)));
        const __m512d sii = _mm512_cvtepu32_pd(_mm256_sub_epi32(LOAD8(a.pre_sq + x + a.tw), LOAD8(a.pre_sq + x)));
        const __m512d var_i = _mm512_sub_pd(_mm512_mul_pd(n, sii), _mm512_mul_pd(si, si));
        const __m512d num =
            _mm512_sub_pd(_mm512_mul_pd(n, _mm512_cvtepu32_pd(LOAD8(a.sit + x))), _mm512_mul_pd(si, st));
        __m512d r = _mm512_div_pd(num, _mm512_sqrt_pd(_mm512_mul_pd(var_i, var_t)));
        r = _mm512_min_pd(_mm512_max_pd(r, minus_one), one);
        const __mmask8 keep = _mm512_cmp_pd_mask(var_i, zero, _CMP_GT_OQ);
        _mm256_storeu_ps(a.dst + x, _mm256_maskz_mov_ps(keep, _mm512_cvtpd_ps(r)));
    }
#undef LOAD8
    for (; x < a.ow; ++x) a.dst[x] = ncc_one(a, x);
}

__attribute__((target("avx2"))) void ncc_row_avx2(const RowArgs& a) {
    const __m256d n = _mm256_set1_pd(a.n), st = _mm256_set1_pd(a.st), var_t = _mm256_set1_pd(a.var_t);
    const __m256d one = _mm256_set1_pd(1.0), minus_one = _mm256_set1_pd(-1.0), zero = _mm256_setzero_pd();
    // Unsigned 32-bit to double: flip the top bit, convert as signed, add 2^31 back (exact).
    const __m128i top = _mm_set1_epi32(static_cast<int>(0x80000000u));
    const __m256d two31 = _mm256_set1_pd(2147483648.0);
#define U32(v) _mm256_add_pd(_mm256_cvtepi32_pd(_mm_xor_si128((v), top)), two31)
#define LOAD4(p) _mm_loadu_si128(reinterpret_cast<const __m128i*>(p))
    int x = 0;
    for (; x + 4 <= a.ow; x += 4) {
        const __m256d si = U32(_mm_sub_epi32(LOAD4(a.pre + x + a.tw), LOAD4(a.pre + x)));
        const __m256d sii = U32(_mm_sub_epi32(LOAD4(a.pre_sq + x + a.tw), LOAD4(a.pre_sq + x)));
        const __m256d var_i = _mm256_sub_pd(_mm256_mul_pd(n, sii), _mm256_mul_pd(si, si));
        const __m256d num = _mm256_sub_pd(_mm256_mul_pd(n, U32(LOAD4(a.sit + x))), _mm256_mul_pd(si, st));
        __m256d r = _mm256_div_pd(num, _mm256_sqrt_pd(_mm256_mul_pd(var_i, var_t)));
        r = _mm256_min_pd(_mm256_max_pd(r, minus_one), one);
        r = _mm256_and_pd(r, _mm256_cmp_pd(var_i, zero, _CMP_GT_OQ));  // +0.0 where var_i <= 0
        _mm_storeu_ps(a.dst + x, _mm256_cvtpd_ps(r));
    }
#undef U32
#undef LOAD4
    for (; x < a.ow; ++x) a.dst[x] = ncc_one(a, x);
}

// pre[x] = col[0] + ... + col[x - 1] (and pre_sq of sq), modulo 2^32, four columns at a time:
// a running sum's serial chain was most of the epilogue's own time. Integer sums, so the
// order of the additions does not change them.
void prefix_sums(const std::uint32_t* col, const std::uint32_t* sq, int w, std::uint32_t* pre, std::uint32_t* pre_sq) {
    pre[0] = pre_sq[0] = 0;
    __m128i run = _mm_setzero_si128(), run_sq = _mm_setzero_si128();  // the last sum, in every lane
    int x = 0;
    for (; x + 4 <= w; x += 4) {
        __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(col + x));
        __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(sq + x));
        a = _mm_add_epi32(a, _mm_slli_si128(a, 4));
        b = _mm_add_epi32(b, _mm_slli_si128(b, 4));
        a = _mm_add_epi32(a, _mm_slli_si128(a, 8));
        b = _mm_add_epi32(b, _mm_slli_si128(b, 8));
        a = _mm_add_epi32(a, run);
        b = _mm_add_epi32(b, run_sq);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(pre + x + 1), a);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(pre_sq + x + 1), b);
        run = _mm_shuffle_epi32(a, _MM_SHUFFLE(3, 3, 3, 3));
        run_sq = _mm_shuffle_epi32(b, _MM_SHUFFLE(3, 3, 3, 3));
    }
    for (; x < w; ++x) {
        pre[x + 1] = pre[x] + col[x];
        pre_sq[x + 1] = pre_sq[x] + sq[x];
    }
}

// Output rows [y_begin, y_end). Column sums over th rows fit 32 bits (256 * 255^2); prefix sums
// along a row may wrap, but a window's difference of two is below 2^32 (kMaxTemplatePixels), so
// the wrapped difference is exact.
void rows(ImageView image, Size t, const TemplateStats& ts, const std::uint32_t* sit, std::size_t sit_pitch,
          MapView out, int y_begin, int y_end, CpuIsa isa) {
    const int w = image.width, ow = image.width - t.width + 1;
    const std::int64_t var_t = ts.n * ts.sum_sq - ts.sum * ts.sum;
    thread_local std::vector<std::uint32_t> col_tls, sq_tls, pre_tls, pre_sq_tls;
    std::vector<std::uint32_t>&col = col_tls, &sq = sq_tls, &pre = pre_tls, &pre_sq = pre_sq_tls;
    col.assign(w, 0);
    sq.assign(w, 0);
    pre.resize(w + 1);
    pre_sq.resize(w + 1);
    for (int j = 0; j < t.height; ++j) {
        const std::uint8_t* p = image.row(y_begin + j);
        for (int x = 0; x < w; ++x) {
            col[x] += p[x];
            sq[x] += static_cast<std::uint32_t>(p[x]) * p[x];
        }
    }
    for (int y = y_begin; y < y_end; ++y) {
        if (y > y_begin) {
            const std::uint8_t* in = image.row(y + t.height - 1);
            const std::uint8_t* gone = image.row(y - 1);
            for (int x = 0; x < w; ++x) {
                col[x] += in[x] - gone[x];
                sq[x] += static_cast<std::uint32_t>(in[x]) * in[x] - static_cast<std::uint32_t>(gone[x]) * gone[x];
            }
        }
        prefix_sums(col.data(), sq.data(), w, pre.data(), pre_sq.data());
        float* dst = out.row(y);
        if (var_t <= 0) {
            std::fill(dst, dst + ow, 0.0f);  // a flat template scores 0 everywhere
            continue;
        }
        const RowArgs args{pre.data(),
                           pre_sq.data(),
                           sit + static_cast<std::size_t>(y) * sit_pitch,
                           dst,
                           ow,
                           t.width,
                           static_cast<double>(ts.n),
                           static_cast<double>(ts.sum),
                           static_cast<double>(var_t)};
        if (isa == CpuIsa::kVnni)
            ncc_row_avx512(args);
        else if (isa == CpuIsa::kAvx2)
            ncc_row_avx2(args);
        else
            ncc_row_scalar(args);
    }
}

}  // namespace

void ncc_epilogue(ImageView image, Size templ, const TemplateStats& ts, const std::uint32_t* sit, std::size_t sit_pitch,
                  MapView out) {
    const int ow = image.width - templ.width + 1, oh = image.height - templ.height + 1;
    // VNNI implies AVX-512 F and VL here; CORRTRACK_CPU_ISA caps this as it caps the numerators.
    const CpuIsa isa = cpu_isa_best();
    if (static_cast<long long>(ow) * oh < kParallelPositions) {
        rows(image, templ, ts, sit, sit_pitch, out, 0, oh, isa);
        return;
    }
    // Chunks of rows, a few per core: each starts its column sums afresh (th rows), and a core
    // another process takes holds up one chunk.
    const int chunk = std::max(16, (oh + 31) / 32);
    const int chunks = (oh + chunk - 1) / chunk;
    parallel_for(chunks, [&](int c) {
        rows(image, templ, ts, sit, sit_pitch, out, c * chunk, std::min(oh, (c + 1) * chunk), isa);
    });
}

}  // namespace corrtrack
