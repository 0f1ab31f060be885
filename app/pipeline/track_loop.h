// The per-frame loop of `corrtrack track` and the end-to-end bench, over a FrameSession:
// frames come from the decode thread, are copied to the device (GPU path, pinned slots) one
// frame ahead of the tracker so that copy and kernels overlap, tracked, and handed to a
// callback in order.
// Thread rules: runs on the caller's thread, which drives the session and its tracker; the
// pipeline's decode thread is the only other thread and shares only the slot ring with it.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "app/io/frame.h"
#include "app/pipeline/frame_session.h"
#include "app/track/tracker.h"

namespace corrtrack {

struct TrackLoopOptions {
    bool realtime = false;         // pace to source timestamps; late frames are dropped and counted
    long max_frames = -1;          // stop after this many frames (-1: all)
    bool track = true;             // false: decode (and copy) only, the end-to-end baseline
    bool need_host_frame = false;  // the callback reads Frame::rgb/luma: keep slots until then
    // Once set (a signal), no further frame is taken; frames already taken are finished and
    // handed to the callback, then the loop returns 0. Pass the same flag as
    // SourceOptions::stop so that a blocked read gives up too.
    const std::atomic<bool>* stop = nullptr;
};

// What the callback learns about a frame; `frame` is null when its slot was already recycled
// (only without need_host_frame).
struct LoopFrame {
    long index = -1;  // position in the source (lost frames leave gaps)
    double pts = 0;
    Size size;
    Size decoded_size;  // differs from size when the source scaled a frame of another size
    double decode_ms = 0;
    std::chrono::steady_clock::time_point decode_start;
    const Frame* frame = nullptr;
    bool first = false;  // targets were initialised on it (results hold the given boxes)
};

struct TrackLoopStats {
    long frames = 0;
    long late_drops = 0;
    bool stopped = false;  // TrackLoopOptions::stop ended the loop
    double seconds = 0;
    double track_ms = 0;             // host time inside the tracker's update calls
    std::vector<double> latency_ms;  // decode start to box ready, one per frame
};

// Returns 0, or non-zero with *error set when a target cannot be initialised or the callback
// asked to stop with an error. The callback returns false to stop (its own error in *error).
// The input's own error is left in session.error() for the caller. The options' pacing
// replaces the session's.
using LoopCallback = std::function<bool(const LoopFrame&, std::vector<TrackResult>&, std::string* error)>;
int run_track_loop(FrameSession& session, const std::vector<BoxF>& boxes, const TrackLoopOptions& options,
                   const LoopCallback& on_frame, TrackLoopStats* stats, std::string* error);

}  // namespace corrtrack
