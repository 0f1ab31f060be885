// Reading a FrameSource to the end the way the tests check inputs and outputs: every frame (or
// just the count), the last timestamp and size, and how it ended.
// Thread rules: plain functions.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/io/frame_source.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {

struct ReadAll {
    std::vector<Frame> frames;  // only when kept
    long count = 0;
    double last_pts = -1;
    Size last_size;  // of the last frame read
    ReadStatus status = ReadStatus::kError;
    std::string error;
};

ReadAll read_all(FrameSource& source, bool keep_frames = true);

std::unique_ptr<FrameSource> open_source(const std::string& input, std::string* error, bool want_rgb = true);

// Opens `input` and reads it to the end without keeping frames: a written output read back.
// A file that does not open ends in kError with the reason in .error and no frames.
ReadAll read_file(const std::string& input);

// The raw Y value a limited-range (MPEG) YUV clip stores for grey v: luma is the Y plane as
// decoded, not expanded back to 0..255 (the video writer's rounding).
inline std::uint8_t limited_y(std::uint8_t v) { return static_cast<std::uint8_t>(16 + (v * 219 + 127) / 255); }

enum class Range { kFull, kLimited };

// Mean |decoded - truth| over the truth's size (a padded decode may be larger); a limited-range
// clip is compared with its raw Y values.
double luma_error(const Frame& f, const SyntheticScene& scene, Range range = Range::kFull);

// Options for reading `input` with a decode mode; NVDEC frames are post-processed on `stream`.
SourceOptions decode_options(const std::string& input, DecodeMode mode, bool want_rgb, bool want_host_luma,
                             Stream stream = nullptr);

}  // namespace corrtrack
