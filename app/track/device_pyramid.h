// The GPU search's frame pyramid (HostPyramid's twin, bit for bit through launch_build_levels), built
// only where searches sample: a device frame is level 0 in place; of a host frame, only the
// rows that requests read are uploaded, as one band of rows that only grows, into a device
// buffer the caller owns; deeper levels are halved in the regions asked for and kept until the
// next reset().
// Thread rules: one thread; work is queued on the caller's stream and never waited for; the
// caller keeps the host frame and the buffers until the stream has passed the uploads.
#pragma once

#include <vector>

#include "app/track/device_search.h"
#include "corrtrack/cuda_util.h"

namespace corrtrack {

class DevicePyramid {
public:
    // What one call queued: rows of the host frame and the host time spent queueing them,
    // and level-building launches (each builds up to kMaxLevelsPerBuild levels).
    struct Uploads {
        long rows = 0;
        double ms = 0;
        int halvings = 0;
    };

    // A new frame. A device frame is level 0 in place; a host frame's rows are copied, as they
    // are needed, into `upload_to` (device memory for the frame's size with `upload_pitch`).
    void reset(ImageView frame, std::uint8_t* upload_to, std::size_t upload_pitch);
    // Every row of a host frame (nothing for a device frame).
    Uploads upload_frame(Stream stream);
    // Makes valid the regions of the levels that sampling `items` reads, each grown by
    // margins[i] (level pixels on each side; items past the end of `margins` get none).
    // whole_levels: every level down to the deepest that `items` use, whole (call
    // upload_frame() first).
    Uploads prepare(const std::vector<SampleItem>& items, const std::vector<Size>& margins, bool whole_levels,
                    Stream stream);
    // The levels for launch_sample_patches once the stream has passed prepare()'s work.
    const DeviceLevels& levels() const { return levels_; }

private:
    // Rows [begin, end) of level 0: an interval, empty when begin >= end.
    struct Span {
        int begin = 0, end = 0;
        bool empty() const { return begin >= end; }
    };
    // Each level's pixels in need[k] (level coordinates; clipped, at least one pixel) are on
    // the device once the stream passes what this queued: rows uploaded, regions halved.
    void build(Rect need[kMaxPyramidLevels], Stream stream);
    void upload_rows(Span rows, Stream stream);

    DeviceLevels levels_;
    ImageView host_frame_;  // the host frame of this frame (data null for a device frame)
    std::uint8_t* upload_to_ = nullptr;
    std::size_t upload_pitch_ = 0;
    Span uploaded_rows_;                   // the host frame's rows on the device
    Rect level_valid_[kMaxPyramidLevels];  // per level >= 1: the region halved this frame
    Size level_sizes_[kMaxPyramidLevels];
    DeviceBuffer<std::uint8_t> level_storage_[kMaxPyramidLevels];
    Uploads uploads_;                 // of the public call in progress
    std::vector<LevelBuild> builds_;  // reused per launch
};

}  // namespace corrtrack
