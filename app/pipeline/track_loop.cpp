#include "app/pipeline/track_loop.h"

#include <chrono>
#include <deque>

namespace corrtrack {

int run_track_loop(FrameSession& session, const std::vector<BoxF>& boxes, const TrackLoopOptions& o,
                   const LoopCallback& on_frame, TrackLoopStats* stats, std::string* error) {
    TrackLoopStats local;
    TrackLoopStats& st = stats ? *stats : local;
    st = TrackLoopStats{};
    MultiTracker& tracker = session.tracker();
    session.set_pacing(o.pacing);
    const long drops_before = session.late_drops();
    const double track_ms_before = session.track_ms();
    // GPU path with host frames: one frame of look-ahead, so frame n's copy runs while the
    // tracker works on frame n-1.
    std::deque<SessionFrame> pending;
    std::vector<TrackResult> results;
    const auto t_start = std::chrono::steady_clock::now();
    bool initialised = false;
    int rc = 0;

    auto recycle_copied = [&] {
        // A slot goes back to the decoder as soon as its copy event has fired, unless the
        // callback still needs the host frame, or the tracker's colour cue reads its chroma.
        if (o.need_host_frame || tracker.options().colour > 0) return;
        for (SessionFrame& p : pending)
            if (p.frame && session.copied(p)) session.release(p);
    };
    auto process = [&](SessionFrame& p) -> bool {
        LoopFrame info;
        if (!initialised) {
            results.assign(boxes.size(), TrackResult{});
            if (o.track) {
                const FrameView view = session.tracker_view(p);
                for (std::size_t i = 0; i < boxes.size(); ++i) {
                    std::string why;
                    const TargetId id = tracker.add_target(view, boxes[i], &why);
                    if (id < 0) {
                        if (error) *error = "target " + std::to_string(i) + ": " + why;
                        rc = 1;
                        return false;
                    }
                    results[i] = initial_result(id, boxes[i]);
                }
            }
            info.first = true;
            initialised = true;
        } else if (o.track) {
            results = session.track(p);
        }
        st.latency_ms.push_back(session.finish(p, results));
        static_cast<SessionFrame&>(info) = p;
        std::string why;
        const bool go_on = on_frame(info, results, &why);
        session.release(p);
        ++st.frames;
        if (!go_on && !why.empty()) {
            if (error) *error = why;
            rc = 1;
        }
        return go_on;
    };

    bool stop = false;
    SessionFrame f;
    while (!stop && session.next(&f)) {
        pending.push_back(f);
        // Only copied frames gain from the look-ahead; NVDEC frames are on the device already.
        const std::size_t lookahead = f.device_slot >= 0 && !o.pacing.realtime ? 1 : 0;
        recycle_copied();
        while (pending.size() > lookahead && !stop) {
            if (!process(pending.front())) stop = true;
            pending.pop_front();
        }
        if (rc) break;
    }
    while (!pending.empty()) {
        if (!stop && !rc && !process(pending.front())) stop = true;
        session.release(pending.front());
        pending.pop_front();
    }
    st.stopped = session.stopped();
    st.late_drops = session.late_drops() - drops_before;
    st.track_ms = session.track_ms() - track_ms_before;
    st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    return rc;
}

}  // namespace corrtrack
