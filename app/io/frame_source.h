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
    double open_timeout_s = 10.0;         // opening any input gives up after this (0: never)
    double read_timeout_s = 5.0;          // a read that blocks longer ends with an error
                                          // (0: never)
    double sequence_fps = 30.0;           // frame rate assumed for image sequences
    std::string camera_size;              // "640x480" or empty for the camera's default
    double camera_fps = 0.0;              // 0: camera default
};

enum class ReadStatus { kFrame, kEnd, kError };

// Inputs: a file; a printf pattern (img/%05d.jpg: the first number present is found, the
// sequence runs to the first gap, sequence_fps stamps it); a folder holding img/ with numbered
// images (OTB layout), a video.mkv, or numbered images itself; /dev/videoN (V4L2); or a URL.
// Every open and read is bounded by an AVIOInterruptCB deadline (open_timeout_s, then
// read_timeout_s per read), so a dead camera or stream ends with kError, never a hang.
//
// End of input. Every frame that decodes is delivered; the status after the last one says
// whether the input was whole:
//   kEnd    the demuxer reached EOF cleanly and, for files, the frames decoded match what
//           the container declares (its frame count, or duration x fps) within 2 + 0.5%.
//   kError  no frame decoded at all; the demuxer failed with anything but EOF ("corrupt
//           after frame N"); a file ended early against its declared length ("ended early:
//           N of M frames decoded"); a file or image had packets the decoder rejected (the
//           frames around them are still delivered; for image sequences the index skips the
//           bad image so later indices keep matching file numbers) or concealed damage; an
//           image sequence has a gap with more images after it; a live source sent nothing
//           for read_timeout_s. Live streams ignore decoder errors (packet loss).
// Frame.index counts from 0 (image sequences: file number - first number, see above).
// Frame.pts is best_effort_timestamp minus the
// stream's start (first frame for live sources), or index / fps without timestamps.
// Buffers in Frame are resized, not reallocated, once the frame size is stable.
// The first open() installs a libav log callback that remembers the last error line per
// thread (to explain "Invalid data" to the user) and forwards everything to libav's default
// logger, so av_log_set_level still decides what is printed.
class FrameSource {
public:
    virtual ~FrameSource() = default;
    // nullptr on failure, with a message for the user in *error.
    static std::unique_ptr<FrameSource> open(const SourceOptions& options, std::string* error);

    // Decodes the next frame into out (reusing its buffers). kEnd at a clean end of input,
    // kError when the input is corrupt, truncated, or a live source stops answering; after
    // either, read() keeps returning the same status.
    virtual ReadStatus read(Frame& out) = 0;
    virtual const std::string& error() const = 0;

    virtual bool live() const = 0;          // cameras and network streams
    virtual Size size() const = 0;
    virtual double fps() const = 0;         // nominal rate (0 if unknown)
    virtual long frame_count() const = 0;   // -1 when unknown (live); from duration x fps
                                            // when the container has no count
    // "sample.mp4: h264 768x576 @ 10 fps, 120 frames"; live sources end in ", live"
    virtual std::string description() const = 0;
};

}  // namespace corrtrack
