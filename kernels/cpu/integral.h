// Integral images (summed-area tables) of a roi and of its squares, for O(1) window sums.
// Thread rules: plain data; build() writes, the sum functions only read.
#pragma once

#include <cstdint>
#include <vector>

#include "corrtrack/image.h"

namespace corrtrack {

// (w+1) x (h+1) tables with a zero first row and column. 64-bit: the sum of squares of a
// 4K frame (3840*2160*255^2 = 5.4e11) needs more than 32 bits.
class IntegralImages {
public:
    void build(ImageView image);  // reuses its storage when the size repeats
    std::uint64_t sum(int x, int y, int w, int h) const { return box(sum_, x, y, w, h); }
    std::uint64_t sum_sq(int x, int y, int w, int h) const { return box(sum_sq_, x, y, w, h); }
    int width() const { return width_; }
    int height() const { return height_; }

private:
    std::uint64_t box(const std::vector<std::uint64_t>& t, int x, int y, int w, int h) const {
        const std::size_t s = static_cast<std::size_t>(width_) + 1;
        return t[(y + h) * s + (x + w)] - t[y * s + (x + w)] - t[(y + h) * s + x] + t[y * s + x];
    }
    int width_ = 0, height_ = 0;
    std::vector<std::uint64_t> sum_, sum_sq_;
};

// Exact template statistics: N, sum and sum of squares.
struct TemplateStats {
    std::int64_t n = 0, sum = 0, sum_sq = 0;
};
TemplateStats template_stats(ImageView templ);

}  // namespace corrtrack
