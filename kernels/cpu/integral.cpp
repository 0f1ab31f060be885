#include "cpu/integral.h"

namespace corrtrack {

void IntegralImages::build(ImageView image) {
    width_ = image.width;
    height_ = image.height;
    const std::size_t s = static_cast<std::size_t>(width_) + 1;
    sum_.assign(s * (height_ + 1), 0);
    sum_sq_.assign(s * (height_ + 1), 0);
    for (int y = 0; y < height_; ++y) {
        const std::uint8_t* src = image.row(y);
        std::uint64_t row_sum = 0, row_sq = 0;
        std::uint64_t* out = &sum_[(y + 1) * s];
        std::uint64_t* out_sq = &sum_sq_[(y + 1) * s];
        const std::uint64_t* above = &sum_[y * s];
        const std::uint64_t* above_sq = &sum_sq_[y * s];
        for (int x = 0; x < width_; ++x) {
            const std::uint32_t v = src[x];
            row_sum += v;
            row_sq += v * v;
            out[x + 1] = above[x + 1] + row_sum;
            out_sq[x + 1] = above_sq[x + 1] + row_sq;
        }
    }
}

TemplateStats template_stats(ImageView templ) {
    // 32-bit partial sums over runs that cannot overflow them (4096 * 255^2 < 2^32) let the
    // loop vectorize: a GPU tracker with 256 targets stacks 410 K template pixels a frame.
    constexpr int kRun = 4096;
    TemplateStats s;
    s.n = static_cast<std::int64_t>(templ.width) * templ.height;
    for (int y = 0; y < templ.height; ++y) {
        const std::uint8_t* p = templ.row(y);
        for (int x0 = 0; x0 < templ.width; x0 += kRun) {
            const int x1 = templ.width - x0 < kRun ? templ.width : x0 + kRun;
            std::uint32_t sum = 0, sum_sq = 0;
            for (int x = x0; x < x1; ++x) {
                sum += p[x];
                sum_sq += static_cast<std::uint32_t>(p[x]) * p[x];
            }
            s.sum += sum;
            s.sum_sq += sum_sq;
        }
    }
    return s;
}

}  // namespace corrtrack
