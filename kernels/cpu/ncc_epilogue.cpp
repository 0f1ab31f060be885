#include "cpu/ncc_epilogue.h"

#include <algorithm>
#include <vector>

#include "corrtrack/ncc_math.h"
#include "cpu/work_pool.h"

namespace corrtrack {
namespace {

// Below this many positions the map is made on the calling thread (tracking windows).
constexpr long long kParallelPositions = 200000;

// Output rows [y_begin, y_end). Column sums over th rows fit 32 bits (256 * 255^2); prefix sums
// along a row may wrap, but a window's difference of two is below 2^32 (kMaxTemplatePixels), so
// the wrapped difference is exact.
void rows(ImageView image, Size t, const TemplateStats& ts, const std::uint32_t* sit, std::size_t sit_pitch,
          MapView out, int y_begin, int y_end) {
    const int w = image.width, ow = image.width - t.width + 1;
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
        pre[0] = pre_sq[0] = 0;
        for (int x = 0; x < w; ++x) {
            pre[x + 1] = pre[x] + col[x];
            pre_sq[x + 1] = pre_sq[x] + sq[x];
        }
        const std::uint32_t* s = sit + static_cast<std::size_t>(y) * sit_pitch;
        float* dst = out.row(y);
        for (int x = 0; x < ow; ++x)
            dst[x] = ncc_from_sums(ts.n, pre[x + t.width] - pre[x], pre_sq[x + t.width] - pre_sq[x], s[x], ts.sum,
                                   ts.sum_sq);
    }
}

}  // namespace

void ncc_epilogue(ImageView image, Size templ, const TemplateStats& ts, const std::uint32_t* sit, std::size_t sit_pitch,
                  MapView out) {
    const int ow = image.width - templ.width + 1, oh = image.height - templ.height + 1;
    if (static_cast<long long>(ow) * oh < kParallelPositions) {
        rows(image, templ, ts, sit, sit_pitch, out, 0, oh);
        return;
    }
    // Chunks of rows, a few per core: each starts its column sums afresh (th rows), and a core
    // another process takes holds up one chunk.
    const int chunk = std::max(16, (oh + 31) / 32);
    const int chunks = (oh + chunk - 1) / chunk;
    parallel_for(chunks,
                 [&](int c) { rows(image, templ, ts, sit, sit_pitch, out, c * chunk, std::min(oh, (c + 1) * chunk)); });
}

}  // namespace corrtrack
