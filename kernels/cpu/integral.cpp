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
    TemplateStats s;
    s.n = static_cast<std::int64_t>(templ.width) * templ.height;
    for (int y = 0; y < templ.height; ++y)
        for (int x = 0; x < templ.width; ++x) {
            const std::int64_t v = templ.row(y)[x];
            s.sum += v;
            s.sum_sq += v * v;
        }
    return s;
}

}  // namespace corrtrack
