// Video input through FFmpeg (libavformat/libavcodec/libswscale/libavdevice): files, image
// sequences (printf patterns such as img/%05d.jpg, or an OTB folder), V4L2 cameras and URLs;
// decoded on the CPU or by NVDEC (FFmpeg's CUDA hwaccel) into device memory.
// Thread rules: one thread owns a FrameSource (the decode thread); it is the only libav user.
// NVDEC frames may be consumed and released on another thread (see SourceOptions::decode).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "app/io/byte_reader.h"
#include "app/io/frame.h"

namespace corrtrack {

enum class SourceKind { kAuto, kFile, kImageSequence, kCamera, kUrl };

// kSoftware: libavcodec on the CPU. kNvdec: NVDEC where it can decode the input, else the CPU
// with a note saying why. kAuto: the same, quietly (a missing GPU is no news).
enum class DecodeMode { kSoftware, kNvdec, kAuto };
const char* to_string(DecodeMode mode);                            // "sw", "nvdec", "auto"
bool parse_decode_mode(const std::string& text, DecodeMode* out);  // false for anything else

struct SourceOptions {
    std::string input;
    SourceKind kind = SourceKind::kAuto;  // auto: /dev/video* -> camera, "scheme://" -> URL,
                                          // a '%' pattern or an OTB folder -> image sequence
    bool want_rgb = true;                 // also convert to RGB24 for display / annotation
    bool want_yuv = false;                // also fill Frame::yuv (the annotated video's input)
    double open_timeout_s = 10.0;         // opening any input gives up after this (0: never)
    double read_timeout_s = 5.0;          // a read that blocks longer ends with an error
                                          // (0: never)
    double sequence_fps = 30.0;           // frame rate assumed for image sequences
    std::string camera_size;              // "640x480" or empty for the camera's default
    double camera_fps = 0.0;              // 0: camera default
    std::string camera_format;            // "mjpeg", "yuyv", ... (camera_modes.h); empty:
                                          // the camera's default. A camera that refuses the
                                          // size, rate or format asked for fails open()

    // NVDEC (kNvdec, kAuto) serves video files and URLs whose codec has a CUDA hwaccel in this
    // FFmpeg (8-bit only), when a CUDA device is there; everything else decodes on the CPU.
    // A hardware frame leaves its NV12 Y plane in Frame::device (raw decoded values: no range
    // expansion, unlike the software path's GRAY8, which maps limited-range video to 0..255).
    // The decoder works in the CUDA runtime's primary context of cuda_stream's device (null:
    // open()'s thread's current device) and on cuda_stream: its output post-processing is queued there, so work the
    // consumer queues on the same stream sees finished pixels. A consumer on another stream
    // must wait for cuda_stream first. The consumer must queue its last read of a device
    // plane before it drops the Frame's owner (that unmaps the surface for reuse).
    DecodeMode decode = DecodeMode::kSoftware;
    Stream cuda_stream = nullptr;  // the consumer's stream; null: the legacy default
    bool want_host_luma = true;    // NVDEC: also copy the Y plane to Frame::luma (this waits
                                   // for cuda_stream); false leaves Frame::luma empty.
                                   // Software frames always carry host luma
    // Bytes from the caller instead of opening `input` (which then only names the input in
    // messages and suggests the container by its extension): fuzz targets, tests.
    std::shared_ptr<ByteReader> reader;
    // Frames of more pixels are refused by the decoder (a crafted header cannot make it
    // allocate gigabytes); 0: no limit. The default passes 16K x 16K.
    long long max_pixels = 16384LL * 16384;
    // Set (by a signal handler, say) to stop: a blocked open or read gives up within about
    // 100 ms and read() returns kError with end_reason kInterrupted.
    const std::atomic<bool>* stop = nullptr;
    int held_frames = 6;  // NVDEC: decoded frames the consumer may hold at once; the
                          // decoder keeps that many surfaces spare. Count every ring
                          // slot (a slot keeps its surface until it is refilled) and
                          // every Frame copy the consumer keeps besides
};

enum class ReadStatus { kFrame, kEnd, kError };

// Why the input ended. kDamaged: frames are missing or corrupt (decoding errors, a truncated
// file, a gap in an image sequence) but the rest were delivered; kFailed: nothing usable, or a
// failure that is not the input's content; kStalled: a live source, pipe or FIFO sent nothing
// for the read timeout; kInterrupted: SourceOptions::stop was set.
enum class EndReason { kNone, kClean, kDamaged, kFailed, kStalled, kInterrupted };

// What became of the input's frames; final once read() has returned kEnd or kError.
struct SourceReport {
    EndReason end = EndReason::kNone;
    long delivered = 0;         // frames read() returned
    long lost = 0;              // source frames that did not decode (mid-file damage)
    std::vector<long> lost_at;  // their source indices (the first 20)
    long missing_at_end = 0;    // frames the container declares beyond the last one read
    long concealed = 0;         // frames delivered with concealed decoding errors
    long resized = 0;           // frames scaled to the first frame's size
    std::string resize_note;    // the first resolution change, for the user ("" if none)
};

// What `input` reads from disk, for the checks that no output overwrites it: the file; an
// image pattern; for a folder the folder itself (its files: ground truth, attributes) plus the
// pattern or video it resolves to. Empty for cameras, URLs and pipes.
std::vector<std::string> input_paths(const std::string& input);

// Inputs: a file; a printf pattern (img/%05d.jpg: the first number present is found, the
// sequence runs to the first gap, sequence_fps stamps it); a folder holding img/ with numbered
// images (OTB layout), a video.mkv, or numbered images itself; /dev/videoN (V4L2); or a URL.
// Every open and read is bounded by an AVIOInterruptCB deadline (open_timeout_s, then
// read_timeout_s per read), so a dead camera or stream ends with kError, never a hang.
//
// End of input. Every frame that decodes is delivered; the status after the last one says
// whether the input was whole:
//   kEnd    the demuxer reached EOF cleanly, every packet became a frame and, for files, the
//           packets read match what the container declares (its frame count exactly; a
//           duration x fps count within the one frame its rounding may cost).
//   kError  no frame decoded at all; the demuxer failed with anything but EOF ("corrupt
//           after frame N"); a file ended early against its declared length ("ended early:
//           N of M frames read"); a file or image had packets that produced no frame ("lost")
//           or concealed damage; an image sequence has a gap with more images after it; a live
//           source, pipe or FIFO sent nothing for read_timeout_s; SourceOptions::stop. Live
//           streams ignore decoder errors (packet loss). report() says which (EndReason) and
//           counts what was lost.
// Frame.index is the frame's position in the source: the packets before it, whether they
// decoded or not (image sequences: file number - first number), so a lost frame leaves a gap
// and later frames keep matching the ground truth. Frame.pts is best_effort_timestamp minus
// the stream's start (first frame for live sources), or index / fps without timestamps.
// Resolution changes: every frame has the first frame's size; a later frame of another size
// (a new sequence header mid-stream, an image of another size) is scaled to it, so boxes stay
// in one coordinate system. Frame::decoded_size tells, and report() counts them.
// Pipes ("pipe:N", "-"), FIFOs and character devices other than cameras are read with poll()
// under read_timeout_s: a writer that never comes or stalls ends the input (kStalled).
// Buffers in Frame are resized, not reallocated, once the frame size is stable.
// The first open() installs a libav log callback that remembers the last error line per
// thread (to explain "Invalid data" to the user) and forwards everything to libav's default
// logger, so av_log_set_level still decides what is printed.
//
// NVDEC. The first frame decides, and open() decodes it, so decode_mode() and decode_note()
// are settled when open() returns: when the hardware decoder refuses the stream (profile,
// chroma format, bit depth, size) or fails before its first frame, the packets read so far are
// fed to a software decoder instead, so nothing is lost and the frames are those of a software
// decode.
// Each NVDEC frame keeps a decoder surface mapped through Frame::device.owner; holding more
// than held_frames frames at once starves the decoder (decoding errors, never a hang).
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

    virtual bool live() const = 0;  // cameras and network streams
    virtual Size size() const = 0;
    virtual double fps() const = 0;        // nominal rate (0 if unknown)
    virtual long frame_count() const = 0;  // -1 when unknown (live); from duration x fps
                                           // when the container has no count
    // "sample.mp4: h264 768x576 @ 10 fps, 120 frames"; live sources add ", live", NVDEC
    // decoding adds ", nvdec" at the end
    virtual std::string description() const = 0;
    // "nvdec" while NVDEC decodes, else "sw". decode_note() is empty or one line for the user,
    // e.g. why NVDEC was asked for but the CPU decodes.
    // Counts of lost, damaged and resized frames; final after the last read().
    virtual SourceReport report() const { return {}; }
    virtual std::string decode_mode() const { return "sw"; }
    virtual std::string decode_note() const { return {}; }
};

}  // namespace corrtrack
