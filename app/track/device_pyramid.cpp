#include "app/track/device_pyramid.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>

#include "app/util/stats.h"

namespace corrtrack {

void DevicePyramid::reset(ImageView frame, std::uint8_t* upload_to, std::size_t upload_pitch) {
    for (Rect& r : level_valid_) r = {};
    uploaded_rows_ = {};
    Size level_size = frame.size();
    for (int k = 1; k < kMaxPyramidLevels; ++k) {
        level_size = pyramid_level_size(level_size, 1);
        levels_.level[k] = {};
        level_sizes_[k] = level_size;
    }
    if (frame.space == MemorySpace::kDevice) {
        host_frame_ = {};
        levels_.level[0] = frame;
        return;
    }
    host_frame_ = frame;
    upload_to_ = upload_to;
    upload_pitch_ = upload_pitch;
    levels_.level[0] = {upload_to, frame.width, frame.height, upload_pitch, MemorySpace::kDevice};
}

DevicePyramid::Uploads DevicePyramid::upload_frame(Stream stream) {
    uploads_ = {};
    if (host_frame_.data) upload_rows({0, host_frame_.height}, stream);
    return uploads_;
}

DevicePyramid::Uploads DevicePyramid::prepare(const std::vector<SampleItem>& items, const std::vector<Size>& margins,
                                              bool whole_levels, Stream stream) {
    uploads_ = {};
    if (whole_levels) {
        int deepest = 0;
        for (const SampleItem& it : items) deepest = std::max(deepest, it.level);
        for (int k = 1; k <= deepest; ++k)
            need_region(k, {0, 0, level_sizes_[k].width, level_sizes_[k].height}, stream);
        return uploads_;
    }
    for (std::size_t i = 0; i < items.size(); ++i) {
        const SampleItem& it = items[i];
        const Size lsize = it.level == 0 ? levels_.level[0].size() : level_sizes_[it.level];
        const LevelSample ls{it.level, it.ox, it.oy, it.scale};
        // A patch wholly outside gives an empty rectangle, which need_region clamps to the
        // border pixels that replication reads (as HostPyramid::level does).
        Rect r = level_region(ls, {it.width, it.height}, lsize);
        if (i < margins.size())
            r = {r.x - margins[i].width, r.y - margins[i].height, r.width + 2 * margins[i].width,
                 r.height + 2 * margins[i].height};
        need_region(it.level, r, stream);
    }
    return uploads_;
}

void DevicePyramid::upload_rows(Span rows, Stream stream) {
    const ImageView& f = host_frame_;
    rows.begin = std::clamp(rows.begin, 0, f.height);
    rows.end = std::clamp(rows.end, rows.begin, f.height);
    if (rows.empty()) return;
    Span& have = uploaded_rows_;
    auto copy = [&](int y0, int y1) {
        if (y0 >= y1) return;
        const auto t0 = std::chrono::steady_clock::now();
        CORRTRACK_CUDA(cudaMemcpy2DAsync(upload_to_ + static_cast<std::size_t>(y0) * upload_pitch_, upload_pitch_,
                                         f.row(y0), f.pitch, f.width, y1 - y0, cudaMemcpyHostToDevice,
                                         as_cuda(stream)));
        uploads_.rows += y1 - y0;
        uploads_.ms += ms_since(t0);
    };
    if (have.empty()) {
        copy(rows.begin, rows.end);
        have = rows;
        return;
    }
    // One band stays: what is missing above and below the band already there (a gap between
    // the two is filled too).
    const Span grown{std::min(have.begin, rows.begin), std::max(have.end, rows.end)};
    copy(grown.begin, have.begin);
    copy(have.end, grown.end);
    have = grown;
}

void DevicePyramid::need_region(int k, Rect need, Stream stream) {
    const Size size = k == 0 ? levels_.level[0].size() : level_sizes_[k];
    if (size.width <= 0 || size.height <= 0) return;
    need = clip_to_level(need, size);
    if (k == 0) {
        if (host_frame_.data) upload_rows({need.y, need.y + need.height}, stream);
        return;
    }
    const Rect grow = region_to_build(level_valid_[k], need);
    if (grow.width <= 0) return;  // halved already
    need_region(k - 1, {2 * grow.x, 2 * grow.y, 2 * grow.width, 2 * grow.height}, stream);
    if (!levels_.level[k].data) {
        const std::size_t pitch = (static_cast<std::size_t>(size.width) + 63) / 64 * 64;
        std::uint8_t* dst = level_storage_[k].ensure(pitch * size.height);
        levels_.level[k] = {dst, size.width, size.height, pitch, MemorySpace::kDevice};
    }
    const ImageView& lv = levels_.level[k];
    launch_halve(levels_.level[k - 1], level_storage_[k].get(), lv.pitch, grow, stream);
    level_valid_[k] = grow;
}

}  // namespace corrtrack
