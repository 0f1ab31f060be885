// Encoded video output through libavcodec/libavformat (H.264 via libx264 when present,
// else MPEG-4 Part 2), used for annotated results and by tests to make synthetic clips.
// Thread rules: one thread owns a VideoWriter.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "app/util/colour.h"
#include "corrtrack/image.h"

namespace corrtrack {

// Encoder speed against compression at the same quality (crf): x264 presets ultrafast /
// veryfast / medium, NVENC presets p1 / p4 / p7.
enum class VideoQuality { kFast, kBalanced, kBest };
const char* to_string(VideoQuality q);  // "fast", "balanced", "best"
bool parse_video_quality(const std::string& text, VideoQuality* out);

struct VideoWriterOptions {
    double fps = 25.0;
    int crf = 20;       // quality for x264 (lower is better); 0 is lossless
    std::string codec;  // empty: libx264 if available, else mpeg4; for an image pattern
                        // the extension's codec (png, mjpeg)
    VideoQuality quality = VideoQuality::kBalanced;
    // Try h264_nvenc first (codec empty, crf > 0, a video container, a CUDA GPU); when it does
    // not open (no NVENC on this GPU, no driver library) the software encoder runs and
    // encoder_note() says why.
    bool hardware = false;
    // The format of the frames write_yuv420() will get. Where the encoder takes YUV 4:2:0 (not
    // lossless x264) the file is tagged with it and those frames go in as they are; unset:
    // limited-range BT.601, as write_rgb() converts.
    std::optional<YuvFormat> yuv;
};

// Encoding choices:
//   h264_nvenc (options.hardware): preset p1/p4/p7, constant quality (cq = crf + 3), yuv420p.
//   libx264: preset by options.quality (ultrafast / veryfast / medium); yuv420p limited range
//            (or options.yuv's range and matrix),
//            except crf 0: yuv444p full range, so
//            grey and colour survive bit-exactly (High 4:4:4 Predictive, which lossless x264
//            needs anyway; not every hardware player decodes it).
//   mpeg4 / mjpeg: fixed quantiser 2 + crf/5 (crf 0 -> 2, near transparent). png: lossless.
//   A pixel format with subsampled chroma (yuv420p) needs even sizes: an odd width or height
//   is padded by one column/row repeating the last one, so such a file reads back one pixel
//   wider/taller than written. Other formats keep the size.
//   An image pattern ("out/%05d.png", image2 muxer) writes one numbered file per frame from 1.
//   .mp4/.mov get the index at the front (faststart). Frame k has pts k / fps.

class VideoWriter {
public:
    virtual ~VideoWriter() = default;
    // Whether FFmpeg knows a container for this file name (before a run: a usage error).
    static bool check_path(const std::string& path, std::string* error);
    // The container follows the file name (.mp4, .mkv, .avi). nullptr + *error on failure.
    static std::unique_ptr<VideoWriter> open(const std::string& path, Size size, const VideoWriterOptions& options,
                                             std::string* error);
    // rgb: packed RGB24 rows, `pitch` bytes apart. Frames get consecutive timestamps.
    virtual bool write_rgb(const std::uint8_t* rgb, std::size_t pitch, std::string* error) = 0;
    // Packed YUV 4:2:0 (Y, then U, then V: yuv420_bytes in app/io/frame.h) in `format`: copied
    // straight in when that is the file's format, else converted.
    virtual bool write_yuv420(const std::uint8_t* yuv, YuvFormat format, std::string* error) = 0;
    // Grey input (replicated to RGB), for synthetic test clips.
    virtual bool write_gray(const std::uint8_t* gray, std::size_t pitch, std::string* error) = 0;
    // Flushes the encoder and writes the trailer; also done by the destructor if not called.
    virtual bool close(std::string* error) = 0;
    // "libx264 superfast", "h264_nvenc p1", "mpeg4", "png"
    virtual std::string encoder() const = 0;
    // Empty, or why the hardware encoder asked for is not the one running.
    virtual std::string encoder_note() const { return {}; }
};

}  // namespace corrtrack
