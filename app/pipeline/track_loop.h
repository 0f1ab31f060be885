// The per-frame loop of `corrtrack track` and the end-to-end bench, over a FrameSession:
// frames come from the decode thread, are copied to the device (GPU path, pinned slots) one
// frame ahead of the tracker so that copy and kernels overlap, tracked, and handed to a
// callback in order.
// Thread rules: runs on the caller's thread, which drives the session and its tracker; the
// pipeline's decode thread is the only other thread and shares only the slot ring with it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "app/io/frame.h"
#include "app/pipeline/frame_session.h"
#include "app/track/tracker.h"

namespace corrtrack {

struct TrackLoopOptions {
    // Handed to the session (realtime, max_frames, stop). Once stop is set, frames already
    // taken are still finished and handed to the callback, then the loop returns 0.
    SessionPacing pacing;
    bool track = true;             // false: decode (and copy) only, the end-to-end baseline
    bool need_host_frame = false;  // the callback reads Frame::rgb/luma: keep slots until then
};

// What the callback learns about a frame: the session's account of it, as the loop took it
// (`frame` is null when its slot was already recycled: only without need_host_frame).
struct LoopFrame : SessionFrame {
    bool first = false;  // targets were initialised on it (results hold the given boxes)
};

struct TrackLoopStats {
    long frames = 0;
    long late_drops = 0;
    bool stopped = false;  // TrackLoopOptions::pacing.stop ended the loop
    double seconds = 0;
    double track_ms = 0;             // host time inside the tracker's update calls
    std::vector<double> latency_ms;  // decode start to box ready, one per frame
};

// Returns 0, or non-zero with *error set when a target cannot be initialised or the callback
// asked to stop with an error. The callback returns false to stop (its own error in *error).
// The input's own error is left in session.error() for the caller. options.pacing replaces
// the session's.
using LoopCallback = std::function<bool(const LoopFrame&, std::vector<TrackResult>&, std::string* error)>;
int run_track_loop(FrameSession& session, const std::vector<BoxF>& boxes, const TrackLoopOptions& options,
                   const LoopCallback& on_frame, TrackLoopStats* stats, std::string* error);

}  // namespace corrtrack
