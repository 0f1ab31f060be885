#include "app/pipeline/track_loop.h"

#include <deque>
#include <memory>
#include <thread>

#include "app/pipeline/frame_upload.h"

namespace corrtrack {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

struct Pending {
    LoopFrame info;
    const Frame* frame = nullptr;  // the slot, until released
    int device_slot = -1;          // FrameUploader slot, or -1 (CPU path, NVDEC frames)
};

}  // namespace

void match_source_to_tracker(SourceOptions& so, const MultiTracker& tracker, DecodeMode decode, int slots) {
    so.decode = decode;
    so.cuda_stream = tracker.stream();
    so.want_host_luma = !tracker.on_gpu();
    so.held_frames = slots + 2;
}

int run_track_loop(FramePipeline& pipeline, MultiTracker& tracker, const std::vector<BoxF>& boxes,
                   const TrackLoopOptions& o, const LoopCallback& on_frame, TrackLoopStats* stats,
                   std::string* error) {
    TrackLoopStats local;
    TrackLoopStats& st = stats ? *stats : local;
    st = TrackLoopStats{};
    // GPU path with host frames: one frame of look-ahead, so frame n's copy runs while the
    // tracker works on frame n-1.
    std::unique_ptr<FrameUploader> uploader;
    if (tracker.on_gpu()) uploader = std::make_unique<FrameUploader>(3);
    std::deque<Pending> pending;
    std::vector<TrackResult> results;
    const auto t_start = Clock::now();
    double first_pts = -1;
    const double interval = pipeline.fps() > 0 ? 1.0 / pipeline.fps() : 0.04;
    bool initialised = false;
    int rc = 0;

    auto recycle_copied = [&] {
        // A slot goes back to the decoder as soon as its copy event has fired, unless the
        // callback still needs the host frame.
        if (o.need_host_frame) return;
        for (Pending& p : pending)
            if (p.frame && p.device_slot >= 0 && uploader->copied(p.device_slot)) {
                pipeline.release(p.frame);
                p.frame = nullptr;
            }
    };
    auto process = [&](Pending& p) -> bool {
        ImageView view;
        if (p.device_slot >= 0)
            view = uploader->device_view(p.device_slot, tracker.stream());
        else
            view = p.frame->luma_view();
        const auto t0 = Clock::now();
        if (!initialised) {
            results.assign(boxes.size(), TrackResult{});
            if (o.track) {
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
            p.info.first = true;
            initialised = true;
        } else if (o.track) {
            results = tracker.update(view);
            st.track_ms += ms_between(t0, Clock::now());
        }
        const auto ready = Clock::now();
        if (p.device_slot >= 0) {
            uploader->done(p.device_slot, tracker.stream());
            // The tracker waited on its results, which came after the copy: the event is done.
            const double copy_ms = uploader->copy_ms(p.device_slot);
            for (TrackResult& r : results) r.times.upload_ms += copy_ms;
        }
        const double latency = ms_between(p.info.decode_start, ready);
        st.latency_ms.push_back(latency);
        for (TrackResult& r : results) {
            r.times.decode_ms = p.info.decode_ms;
            r.times.latency_ms = latency;
        }
        p.info.frame = p.frame;
        std::string why;
        const bool go_on = on_frame(p.info, results, &why);
        if (p.frame) pipeline.release(p.frame);
        p.frame = nullptr;
        ++st.frames;
        if (!go_on && !why.empty()) {
            if (error) *error = why;
            rc = 1;
        }
        return go_on;
    };

    bool stop = false;
    long taken = 0;
    while (!stop) {
        if (o.stop && o.stop->load()) {
            st.stopped = true;
            break;
        }
        const Frame* f = pipeline.acquire();
        if (!f) {
            st.stopped = o.stop && o.stop->load();
            break;
        }
        if (o.max_frames >= 0 && taken >= o.max_frames) {
            pipeline.release(f);
            break;
        }
        if (o.realtime) {
            // Frame n is due at start + (pts_n - pts_0); one more than an interval late is dropped.
            if (first_pts < 0) first_pts = f->pts;
            const auto due = t_start + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(f->pts - first_pts));
            const auto now = Clock::now();
            if (taken > 0 && now - due > std::chrono::duration<double>(interval)) {
                ++st.late_drops;
                pipeline.release(f);
                continue;
            }
            if (due > now) std::this_thread::sleep_until(due);
        }
        ++taken;
        Pending p;
        p.info = {f->index, f->pts, f->size(), f->decoded_size, f->decode_ms, f->decode_start, nullptr, false};
        p.frame = f;
        if (uploader && f->has_host_luma()) p.device_slot = uploader->upload(*f);
        pending.push_back(p);
        // Only copied frames gain from the look-ahead; NVDEC frames are on the device already.
        const std::size_t lookahead = p.device_slot >= 0 && !o.realtime ? 1 : 0;
        recycle_copied();
        while (pending.size() > lookahead && !stop) {
            if (!process(pending.front())) stop = true;
            pending.pop_front();
        }
        if (rc) break;
    }
    while (!pending.empty()) {
        if (!stop && !rc && !process(pending.front())) stop = true;
        if (pending.front().frame) pipeline.release(pending.front().frame);
        pending.pop_front();
    }
    st.seconds = std::chrono::duration<double>(Clock::now() - t_start).count();
    return rc;
}

}  // namespace corrtrack
