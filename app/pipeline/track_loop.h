// The per-frame loop shared by `corrtrack track` and the end-to-end bench: frames come from
// the decode thread, are copied to the device (GPU path, pinned slots) one frame ahead of the
// tracker so that copy and kernels overlap, tracked, and handed to a callback in order.
// Thread rules: runs on the caller's thread, which drives the tracker; the pipeline's decode
// thread is the only other thread and shares only the slot ring with it.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "app/io/frame.h"
#include "app/pipeline/frame_ring.h"
#include "app/track/tracker.h"

namespace corrtrack {

struct TrackLoopOptions {
    bool realtime = false;     // pace to source timestamps; late frames are dropped and counted
    long max_frames = -1;      // stop after this many frames (-1: all)
    bool track = true;         // false: decode (and copy) only, the end-to-end baseline
    bool need_host_frame = false;  // the callback reads Frame::rgb/luma: keep slots until then
    // Once set (a signal), no further frame is taken; frames already taken are finished and
    // handed to the callback, then the loop returns 0. Pass the same flag as
    // SourceOptions::stop so that a blocked read gives up too.
    const std::atomic<bool>* stop = nullptr;
};

// What the callback learns about a frame; `frame` is null when its slot was already recycled
// (only without need_host_frame).
struct LoopFrame {
    long index = -1;     // position in the source (lost frames leave gaps)
    double pts = 0;
    Size size;
    Size decoded_size;   // differs from size when the source scaled a frame of another size
    double decode_ms = 0;
    std::chrono::steady_clock::time_point decode_start;
    const Frame* frame = nullptr;
    bool first = false;  // targets were initialised on it (results hold the given boxes)
};

struct TrackLoopStats {
    long frames = 0;
    long late_drops = 0;
    bool stopped = false;      // TrackLoopOptions::stop ended the loop
    double seconds = 0;
    double track_ms = 0;       // host time inside the tracker's update calls
    std::vector<double> latency_ms;  // decode start to box ready, one per frame
};

// Returns 0, or non-zero with *error set when a target cannot be initialised or the callback
// asked to stop with an error. The callback returns false to stop (its own error in *error).
// The pipeline's own input error is left in pipeline.error() for the caller.
// Decoder settings that go with this tracker: NVDEC (when `decode` allows) on the tracker's
// CUDA stream, host luma only for a CPU tracker, and decoder surfaces for `slots` ring slots
// plus the one being refilled and one more held by the consumer.
void match_source_to_tracker(SourceOptions& so, const MultiTracker& tracker, DecodeMode decode, int slots);

using LoopCallback = std::function<bool(const LoopFrame&, std::vector<TrackResult>&, std::string* error)>;
int run_track_loop(FramePipeline& pipeline, MultiTracker& tracker, const std::vector<BoxF>& boxes,
                   const TrackLoopOptions& options, const LoopCallback& on_frame, TrackLoopStats* stats,
                   std::string* error);

}  // namespace corrtrack
