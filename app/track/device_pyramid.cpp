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
    Rect need[kMaxPyramidLevels] = {};
    if (whole_levels) {
        int deepest = 0;
        for (const SampleItem& it : items) deepest = std::max(deepest, it.level);
        for (int k = 1; k <= deepest; ++k) need[k] = {0, 0, level_sizes_[k].width, level_sizes_[k].height};
        build(need, stream);
        return uploads_;
    }
    for (std::size_t i = 0; i < items.size(); ++i) {
        const SampleItem& it = items[i];
        const Size lsize = it.level == 0 ? levels_.level[0].size() : level_sizes_[it.level];
        if (lsize.width <= 0 || lsize.height <= 0) continue;
        const LevelSample ls{it.level, it.ox, it.oy, it.scale};
        // A patch wholly outside gives an empty rectangle, which clip_to_level turns into the
        // border pixels that replication reads (as HostPyramid::level does).
        Rect r = level_region(ls, {it.width, it.height}, lsize);
        if (i < margins.size())
            r = {r.x - margins[i].width, r.y - margins[i].height, r.width + 2 * margins[i].width,
                 r.height + 2 * margins[i].height};
        need[it.level] = bounding_box(need[it.level], clip_to_level(r, lsize));
    }
    build(need, stream);
    return uploads_;
}

// Every level's need at once, so that a call costs at most one row upload and one halving
// launch per level however many items read it (a launch is several us of host time).
void DevicePyramid::build(Rect need[kMaxPyramidLevels], Stream stream) {
    Rect grow[kMaxPyramidLevels] = {};
    for (int k = kMaxPyramidLevels - 1; k >= 1; --k) {
        const Size size = level_sizes_[k];
        if (need[k].width <= 0 || size.width <= 0 || size.height <= 0) continue;
        grow[k] = region_to_build(level_valid_[k], clip_to_level(need[k], size));
        if (grow[k].width > 0)
            need[k - 1] =
                bounding_box(need[k - 1], {2 * grow[k].x, 2 * grow[k].y, 2 * grow[k].width, 2 * grow[k].height});
    }
    const Size base = levels_.level[0].size();
    if (need[0].width > 0 && host_frame_.data && base.width > 0 && base.height > 0) {
        const Rect rows = clip_to_level(need[0], base);
        upload_rows({rows.y, rows.y + rows.height}, stream);
    }
    // The grown levels in launches of up to kMaxLevelsPerBuild consecutive levels, each from
    // the level above its first (valid by then: built earlier this frame or in the launch
    // before, on the same stream). A usual search grows levels 1..3 at most: one launch.
    for (int k = 1; k < kMaxPyramidLevels;) {
        if (grow[k].width <= 0) {
            ++k;
            continue;
        }
        const int base = k - 1;
        builds_.clear();
        for (; k < kMaxPyramidLevels && k - base <= kMaxLevelsPerBuild; ++k) {
            if (grow[k].width <= 0) continue;
            if (!levels_.level[k].data) {
                const Size size = level_sizes_[k];
                const std::size_t pitch = (static_cast<std::size_t>(size.width) + 63) / 64 * 64;
                std::uint8_t* dst = level_storage_[k].ensure(pitch * size.height);
                levels_.level[k] = {dst, size.width, size.height, pitch, MemorySpace::kDevice};
            }
            builds_.push_back({level_storage_[k].get(), levels_.level[k].pitch, grow[k], k - base});
            level_valid_[k] = grow[k];
        }
        launch_build_levels(levels_.level[base], builds_, stream);
        ++uploads_.halvings;
    }
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

}  // namespace corrtrack
