// Video input through FFmpeg (libavformat/libavcodec/libswscale/libavdevice): files, image
// sequences (printf patterns such as img/%05d.jpg, or an OTB folder), V4L2 cameras and URLs.
// Thread rules: one thread owns a FrameSource (the decode thread); it is the only libav user.
#pragma once

#include <memory>
#include <string>

#include "app/io/frame.h"

namespace corrtrack {

enum class SourceKind { kAuto, kFile, kImageSequence, kCamera, kUrl };

struct SourceOptions {
    std::string input;
    SourceKind kind = SourceKind::kAuto;  // auto: /dev/video* -> camera, "scheme://" -> URL,
                                          // a '%' pattern or an OTB folder -> image sequence
    bool want_rgb = true;                 // also convert to RGB24 for display / annotation
    double open_timeout_s = 10.0;         // opening a camera or URL gives up after this
    double read_timeout_s = 5.0;          // a read that blocks longer ends with an error
    double sequence_fps = 30.0;           // frame rate assumed for image sequences
    std::string camera_size;              // "640x480" or empty for the camera's default
    double camera_fps = 0.0;              // 0: camera default
};

enum class ReadStatus { kFrame, kEnd, kError };

class FrameSource {
public:
    virtual ~FrameSource() = default;
    // nullptr on failure, with a message for the user in *error.
    static std::unique_ptr<FrameSource> open(const SourceOptions& options, std::string* error);

    // Decodes the next frame into out (reusing its buffers). kEnd at a clean end of input,
    // kError when the input is corrupt, truncated, or a live source stops answering.
    virtual ReadStatus read(Frame& out) = 0;
    virtual const std::string& error() const = 0;

    virtual bool live() const = 0;          // cameras and network streams
    virtual Size size() const = 0;
    virtual double fps() const = 0;         // nominal rate (0 if unknown)
    virtual long frame_count() const = 0;   // -1 when unknown
    virtual std::string description() const = 0;  // "sample.mp4: h264 768x576 10 fps"
};

}  // namespace corrtrack
