// The shared per-frame session (CPU path; the GPU variants skip without a GPU): the loop over
// it gives the boxes of the old path (a FramePipeline drained by hand, the tracker fed each
// slot's luma), the GUI's pull-one-frame use gives the same, and frames, max_frames, the stop
// flag and realtime drops are counted exactly. Part of test_pipeline.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "app/pipeline/frame_ring.h"
#include "app/pipeline/frame_session.h"
#include "app/pipeline/track_loop.h"
#include "app/util/stats.h"
#include "corrtrack/correlator.h"
#include "tests/support/session_setup.h"
#include "tests/support/fake_clock.h"
#include "tests/support/read_source.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

struct Track {
    std::vector<long> index;
    std::vector<BoxF> box;   // target 0
    std::vector<BoxF> box1;  // target 1
    void add(long frame, const std::vector<TrackResult>& results) {
        index.push_back(frame);
        box.push_back(results.at(0).box);
        box1.push_back(results.at(1).box);
    }
};

void expect_same_boxes(const Track& a, const Track& b, double tol, const char* what) {
    ASSERT_EQ(a.index, b.index) << what;
    for (std::size_t i = 0; i < a.box.size(); ++i) {
        for (const auto& [x, y] : {std::pair{a.box[i], b.box[i]}, std::pair{a.box1[i], b.box1[i]}}) {
            EXPECT_NEAR(x.x, y.x, tol) << what << ", frame " << a.index[i];
            EXPECT_NEAR(x.y, y.y, tol) << what << ", frame " << a.index[i];
            EXPECT_NEAR(x.width, y.width, tol) << what << ", frame " << a.index[i];
            EXPECT_NEAR(x.height, y.height, tol) << what << ", frame " << a.index[i];
        }
    }
}

// What run_track_loop did before the session, on the CPU path: acquire, update on the slot's
// host luma, release.
Track old_path(const std::string& path, const std::string& kernel, const std::vector<BoxF>& boxes) {
    Track out;
    std::string error;
    const auto tracker = test::tracker_on(kernel, &error);
    EXPECT_TRUE(tracker) << error;
    if (!tracker) return out;
    auto source = open_source(path, &error, /*want_rgb=*/false);
    EXPECT_TRUE(source) << error;
    if (!source) return out;
    FramePipeline pipeline(std::move(source), 6);
    bool first = true;
    while (const Frame* f = pipeline.acquire()) {
        std::vector<TrackResult> results;
        if (first) {
            for (const BoxF& b : boxes)
                results.push_back(initial_result(tracker->add_target(f->luma_view(), b, &error), b));
            first = false;
        } else {
            results = tracker->update(f->luma_view());
        }
        out.add(f->index, results);
        pipeline.release(f);
    }
    EXPECT_EQ(pipeline.error(), "");
    return out;
}

// Auto decode and 6 slots, as the CLI opens its input.
std::unique_ptr<FrameSession> open_session(MultiTracker& tracker, const std::string& path, bool want_rgb = false) {
    return test::open_session(tracker, path, DecodeMode::kAuto, want_rgb, /*slots=*/6);
}

TEST(FrameSession, LoopAndPullOneFrameGiveTheOldPathsBoxes) {
    const WrittenClip clip("frame_session", small_spec(40));
    ASSERT_EQ(clip.truth.size(), 40u) << clip.error;
    std::string error;
    const std::vector<BoxF> boxes{to_box(clip.truth[0]), {200, 150, 40, 32}};
    const std::string kernel = "cpu_fast";
    const Track old = old_path(clip.path, kernel, boxes);
    ASSERT_EQ(old.index.size(), 40u);

    // The CLI's loop over the session.
    {
        const auto tracker = test::tracker_on(kernel, &error);
        ASSERT_TRUE(tracker) << error;
        auto session = open_session(*tracker, clip.path, /*want_rgb=*/true);
        ASSERT_TRUE(session);
        EXPECT_EQ(session->decode_mode(), "sw") << "auto with a CPU tracker decodes on the CPU";
        Track got;
        long firsts = 0, with_rgb = 0;
        auto on_frame = [&](const LoopFrame& f, std::vector<TrackResult>& results, std::string*) {
            EXPECT_EQ(results.size(), 2u);
            firsts += f.first;
            got.add(f.index, results);
            EXPECT_GT(f.decode_ms, 0.0);
            EXPECT_EQ(results[0].times.decode_ms, f.decode_ms) << "frame " << f.index;
            EXPECT_GT(results[0].times.latency_ms, 0.0) << "frame " << f.index;
            if (f.frame && f.frame->rgb.size() == static_cast<std::size_t>(clip.spec.width) * 3 * clip.spec.height)
                ++with_rgb;
            return true;
        };
        TrackLoopOptions lo;
        lo.need_host_frame = true;
        TrackLoopStats st;
        ASSERT_EQ(run_track_loop(*session, boxes, lo, on_frame, &st, &error), 0) << error;
        EXPECT_EQ(session->error(), "");
        EXPECT_EQ(st.frames, 40);
        EXPECT_EQ(session->taken(), 40);
        EXPECT_EQ(firsts, 1);
        EXPECT_EQ(with_rgb, 40) << "want_rgb and need_host_frame: every frame's RGB reaches the callback";
        EXPECT_EQ(st.late_drops, 0);
        EXPECT_EQ(session->dropped(), 0);
        EXPECT_FALSE(st.stopped);
        EXPECT_EQ(st.latency_ms.size(), 40u);
        expect_same_boxes(got, old, 1e-6, "loop over the session vs the old path");
    }

    // The GUI's use: one frame at a time, targets added on the current frame.
    {
        const auto tracker = test::tracker_on(kernel, &error);
        ASSERT_TRUE(tracker) << error;
        auto session = open_session(*tracker, clip.path);
        ASSERT_TRUE(session);
        EXPECT_FALSE(session->has_frame());
        EXPECT_EQ(session->frame().index, -1);
        ASSERT_TRUE(session->advance());
        EXPECT_EQ(session->frame().index, 0);
        Track got;
        got.index.push_back(0);
        for (const BoxF& b : boxes) EXPECT_GE(tracker->add_target(session->luma(false), b, &error), 0) << error;
        got.box.push_back(boxes[0]);
        got.box1.push_back(boxes[1]);
        while (session->advance()) {
            const std::vector<TrackResult>& r = session->track_current();
            ASSERT_EQ(r.size(), 2u);
            EXPECT_EQ(r[0].times.decode_ms, session->frame().decode_ms);
            got.add(session->frame().index, r);
        }
        EXPECT_EQ(session->error(), "");
        EXPECT_EQ(session->frame().index, 39) << "the last frame stays current at the end";
        EXPECT_EQ(session->taken(), 0) << "advance() is not paced and not counted as next()";
        expect_same_boxes(got, old, 1e-6, "pull-one-frame vs the old path");
        double worst = 0;
        for (std::size_t i = 0; i < got.box.size(); ++i)
            worst =
                std::max(worst, std::hypot(got.box[i].cx() - clip.truth[i].cx(), got.box[i].cy() - clip.truth[i].cy()));
        EXPECT_LT(worst, 1.0) << "the moving target's centre error";
    }

    if (!cuda_available()) {
        std::printf("no GPU: the session's device path (uploader, look-ahead) was not run\n");
        return;
    }
    // The GPU tracker on software frames: copied by the session's uploader, same boxes.
    const auto tracker = test::tracker_on("cuda_dp4a_ilp", &error);
    ASSERT_TRUE(tracker) << error;
    auto session = test::open_session(*tracker, clip.path, DecodeMode::kSoftware, /*want_rgb=*/false, /*slots=*/4);
    ASSERT_TRUE(session);
    ASSERT_TRUE(session->advance());
    for (const BoxF& b : boxes) EXPECT_GE(tracker->add_target(session->luma(true), b, &error), 0) << error;
    Track got{{0}, {boxes[0]}, {boxes[1]}};
    while (session->advance()) {
        const std::vector<TrackResult>& r = session->track_current();
        EXPECT_GT(r[0].times.upload_ms, 0.0) << "the session's copy is timed";
        got.add(session->frame().index, r);
    }
    expect_same_boxes(got, old, 1e-3, "GPU pull-one-frame vs the CPU old path");
}

TEST(FrameSession, MaxFramesAndTheStopFlagEndTheLoopAtExactFrames) {
    const WrittenClip clip("frame_session_limits", small_spec(40));
    ASSERT_EQ(clip.truth.size(), 40u) << clip.error;
    std::string error;
    const std::vector<BoxF> boxes{to_box(clip.truth[0])};
    TrackerOptions to;
    to.kernel = "cpu_fast";
    {
        MultiTracker tracker(to);
        auto session = open_session(tracker, clip.path);
        ASSERT_TRUE(session);
        std::vector<long> seen;
        auto on_frame = [&](const LoopFrame& f, std::vector<TrackResult>&, std::string*) {
            seen.push_back(f.index);
            return true;
        };
        TrackLoopOptions lo;
        lo.pacing.max_frames = 25;
        TrackLoopStats st;
        ASSERT_EQ(run_track_loop(*session, boxes, lo, on_frame, &st, &error), 0) << error;
        EXPECT_EQ(st.frames, 25);
        EXPECT_EQ(session->taken(), 25);
        ASSERT_EQ(seen.size(), 25u);
        EXPECT_EQ(seen.back(), 24);
        EXPECT_FALSE(st.stopped);
    }
    {
        MultiTracker tracker(to);
        std::atomic<bool> stop{false};
        SessionOptions so;
        so.source.input = clip.path;
        so.source.stop = &stop;
        so.decode = DecodeMode::kSoftware;
        auto session = FrameSession::open(tracker, so, &error);
        ASSERT_TRUE(session) << error;
        long last = -1;
        BoxF last_box;
        auto on_frame = [&](const LoopFrame& f, std::vector<TrackResult>& results, std::string*) {
            last = f.index;
            last_box = results[0].box;
            if (f.index == 9) stop = true;  // a signal during frame 9: it is finished, no more
            return true;
        };
        TrackLoopOptions lo;
        lo.pacing.stop = &stop;
        TrackLoopStats st;
        ASSERT_EQ(run_track_loop(*session, boxes, lo, on_frame, &st, &error), 0) << error;
        EXPECT_EQ(st.frames, 10);
        EXPECT_EQ(last, 9);
        EXPECT_TRUE(st.stopped);
        EXPECT_NEAR(last_box.cx(), clip.truth[9].cx(), 1.0);
        EXPECT_NEAR(last_box.cy(), clip.truth[9].cy(), 1.0);
    }
}

// Frames of a synthetic scene with chosen timestamps: pts 0 (due at once; the nominal rate is
// so low that no frame counts as late) except `late` frames, stamped long before the first.
class SceneSource : public FrameSource {
public:
    // Frames `pts_step` seconds apart (0: all due at once), those in `late` stamped far in the
    // past; decode times stamped from `clock` (null: the steady clock).
    SceneSource(const SyntheticClipSpec& spec, std::vector<long> late, double pts_step = 0,
                const PacingClock* clock = nullptr)
        : scene_(spec), late_(std::move(late)), pts_step_(pts_step), clock_(clock) {}
    ReadStatus read(Frame& out) override {
        if (next_ >= scene_.spec().frames) return ReadStatus::kEnd;
        out.decode_start = clock_ ? clock_->now() : std::chrono::steady_clock::now();
        scene_.render(static_cast<int>(next_), pixels_);
        out.index = next_;
        out.pts = std::find(late_.begin(), late_.end(), next_) != late_.end() ? -1000.0 : next_ * pts_step_;
        out.width = scene_.spec().width;
        out.height = scene_.spec().height;
        out.decoded_size = out.size();
        out.luma.resize(pixels_.size());
        std::copy(pixels_.begin(), pixels_.end(), out.luma.begin());
        out.decode_ms = 0.5;
        ++next_;
        return ReadStatus::kFrame;
    }
    const std::string& error() const override { return error_; }
    bool live() const override { return false; }
    Size size() const override { return {scene_.spec().width, scene_.spec().height}; }
    double fps() const override { return pts_step_ > 0 ? 1 / pts_step_ : 0.01; }  // else an interval of 100 s
    long frame_count() const override { return scene_.spec().frames; }
    std::string description() const override { return "scene"; }

private:
    SyntheticScene scene_;
    std::vector<long> late_;
    double pts_step_;
    const PacingClock* clock_;
    std::vector<std::uint8_t> pixels_;
    long next_ = 0;
    std::string error_;
};

TEST(FrameSession, RealtimeDropsExactlyTheLateFramesAndCountsThem) {
    SyntheticClipSpec spec;
    spec.frames = 30;
    const std::vector<long> late{10, 11, 12, 13, 14, 20};
    const auto truth = SyntheticScene(spec).boxes();
    TrackerOptions to;
    to.kernel = "cpu_fast";
    MultiTracker tracker(to);
    FrameSession session(tracker, std::make_unique<SceneSource>(spec, late), SessionOptions{});
    std::vector<long> seen;
    std::vector<BoxF> got;
    auto on_frame = [&](const LoopFrame& f, std::vector<TrackResult>& results, std::string*) {
        seen.push_back(f.index);
        got.push_back(results[0].box);
        EXPECT_EQ(results[0].times.decode_ms, 0.5);
        return true;
    };
    TrackLoopOptions lo;
    lo.pacing.realtime = true;
    TrackLoopStats st;
    std::string error;
    const std::vector<BoxF> boxes{{truth[0].x, truth[0].y, truth[0].w, truth[0].h}};
    ASSERT_EQ(run_track_loop(session, boxes, lo, on_frame, &st, &error), 0) << error;
    EXPECT_EQ(session.error(), "");
    EXPECT_EQ(st.late_drops, 6);
    EXPECT_EQ(session.late_drops(), 6);
    EXPECT_EQ(st.frames, 24);
    EXPECT_EQ(session.taken(), 24);
    std::vector<long> expected;
    for (long i = 0; i < 30; ++i)
        if (std::find(late.begin(), late.end(), i) == late.end()) expected.push_back(i);
    EXPECT_EQ(seen, expected) << "the late frames are the ones missing";
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 1; i < got.size(); ++i) {
        const TruthBox& t = truth[static_cast<std::size_t>(expected[i])];
        EXPECT_NEAR(got[i].cx(), t.cx(), 1.0) << "frame " << expected[i];
        EXPECT_NEAR(got[i].cy(), t.cy(), 1.0) << "frame " << expected[i];
    }
}

// Paced files are decoded ahead of time (the ring fills at once); their latency counts from
// when each frame is due, as a live source would have delivered it, not from its early decode.
// On a fake clock tracking takes no time, so every latency is exactly the decode time.
TEST(FrameSession, RealtimeLatencyCountsFromTheDueTime) {
    SyntheticClipSpec spec;
    spec.frames = 10;
    constexpr double kStep = 0.2;  // 5 fps: frame 9 is due 1.8 s after the start
    const auto truth = SyntheticScene(spec).boxes();
    MultiTracker tracker(test::options_on("cpu_fast"));
    SessionOptions so;
    so.slots = 4;
    test::FakeClock clock;
    FrameSession session(tracker, std::make_unique<SceneSource>(spec, std::vector<long>{}, kStep, &clock), so);
    std::vector<double> latency, since_decode, at_ms;
    auto on_frame = [&](const LoopFrame& f, std::vector<TrackResult>& results, std::string*) {
        latency.push_back(results[0].times.latency_ms);
        since_decode.push_back(std::chrono::duration<double, std::milli>(clock.now() - f.decode_start).count());
        at_ms.push_back(clock.elapsed_ms());
        return true;
    };
    TrackLoopOptions lo;
    lo.pacing.realtime = true;
    lo.pacing.clock = &clock;
    TrackLoopStats st;
    std::string error;
    const std::vector<BoxF> boxes{to_box(truth[0])};
    ASSERT_EQ(run_track_loop(session, boxes, lo, on_frame, &st, &error), 0) << error;
    ASSERT_EQ(latency.size(), 10u);
    EXPECT_EQ(st.late_drops, 0);
    for (std::size_t i = 0; i < latency.size(); ++i) {
        SCOPED_TRACE(i);
        EXPECT_NEAR(at_ms[i], 1000 * kStep * static_cast<double>(i), 1e-3) << "tracked when due";
        EXPECT_NEAR(latency[i], 0.5, 1e-9) << "the frame's decode time, nothing of its early decode";
        EXPECT_EQ(latency[i], st.latency_ms[i]);
        // Frame i was decoded by the time frame i-1 was due, at least a frame interval early.
        if (i >= 1) EXPECT_GE(since_decode[i], 1000 * kStep - 1e-3);
    }
}

// Tracking slower than real time: frames more than one interval late are dropped and counted.
// On a fake clock each frame takes exactly 77 ms at 25 fps (40 ms apart), so which frames go
// follows from the rule alone: frame n is due at n x 40 ms and is taken unless it is more
// than 40 ms late when the loop comes to it.
TEST(FrameSession, RealtimeDropsTheFramesSlowTrackingMakesLate) {
    SyntheticClipSpec spec;
    spec.frames = 40;
    const auto truth = SyntheticScene(spec).boxes();
    MultiTracker tracker(test::options_on("cpu_fast"));
    for (const double cost_ms : {0.0, 77.0}) {
        SCOPED_TRACE(cost_ms);
        test::FakeClock clock;
        FrameSession session(tracker, std::make_unique<SceneSource>(spec, std::vector<long>{}, 0.04, &clock),
                             SessionOptions{});
        std::vector<long> seen;
        auto on_frame = [&](const LoopFrame& f, std::vector<TrackResult>&, std::string*) {
            seen.push_back(f.index);
            clock.advance(std::chrono::duration<double, std::milli>(cost_ms));
            return true;
        };
        TrackLoopOptions lo;
        lo.pacing.realtime = true;
        lo.pacing.clock = &clock;
        TrackLoopStats st;
        std::string error;
        tracker.clear();
        ASSERT_EQ(run_track_loop(session, {to_box(truth[0])}, lo, on_frame, &st, &error), 0) << error;
        if (cost_ms == 0) {
            // Fast enough: every frame, each at its timestamp; the last one 1.56 s in.
            EXPECT_EQ(st.late_drops, 0);
            EXPECT_EQ(seen.size(), 40u);
            EXPECT_NEAR(clock.elapsed_ms(), 1560, 1e-3);
        } else {
            const std::vector<long> expected{0,  1,  3,  5,  7,  9,  11, 13, 15, 17, 19,
                                             21, 23, 25, 26, 28, 30, 32, 34, 36, 38};
            EXPECT_EQ(seen, expected);
            EXPECT_EQ(st.late_drops, 19);
            EXPECT_EQ(session.late_drops(), 19);
            EXPECT_EQ(st.frames + st.late_drops, 40) << "every frame a row or a counted drop";
            EXPECT_NEAR(clock.elapsed_ms(), 21 * 77, 1e-3) << "after frame 0 none is early: no waits";
        }
    }
}

// The GUI's seek: a fresh session decoded up to frame N without tracking; the current frame
// is N, its host luma is the decoded one, and targets start there.
TEST(FrameSession, SeekByReopeningDecodesUpToTheFrameWithoutTracking) {
    const WrittenClip clip("frame_session_seek", small_spec(30));
    ASSERT_EQ(clip.truth.size(), 30u) << clip.error;
    std::string error;
    TrackerOptions to;
    to.kernel = "cpu_fast";
    MultiTracker tracker(to);
    auto session = open_session(tracker, clip.path, /*want_rgb=*/true);
    ASSERT_TRUE(session);
    ASSERT_TRUE(session->advance());
    while (session->frame().index < 17 && session->advance()) {}
    ASSERT_EQ(session->frame().index, 17);
    const Frame& f = session->frame();
    EXPECT_EQ(f.rgb.size(), static_cast<std::size_t>(clip.spec.width) * 3 * clip.spec.height) << "host RGB for display";
    const ImageView v = session->luma(false);
    EXPECT_EQ(v.data, f.luma.data()) << "a host frame's own luma, not a copy";
    SyntheticScene scene(clip.spec);
    std::vector<std::uint8_t> clean;
    scene.render(17, clean, /*noise=*/false);
    EXPECT_LT(
        mean_abs_diff(f.luma.data(), clip.spec.width, clean.data(), clip.spec.width, clip.spec.width, clip.spec.height),
        3.0);
    const TruthBox& t = clip.truth[17];
    ASSERT_GE(tracker.add_target(v, {t.x, t.y, t.w, t.h}, &error), 0) << error;
    EXPECT_EQ(tracker.size(), 1);
    long frames = 0;
    while (session->advance()) {
        const std::vector<TrackResult>& r = session->track_current();
        const TruthBox& tt = clip.truth[static_cast<std::size_t>(session->frame().index)];
        EXPECT_NEAR(r[0].box.cx(), tt.cx(), 1.0) << "frame " << session->frame().index;
        EXPECT_NEAR(r[0].box.cy(), tt.cy(), 1.0) << "frame " << session->frame().index;
        ++frames;
    }
    EXPECT_EQ(frames, 12);
    EXPECT_EQ(session->frame().index, 29);
}

}  // namespace
}  // namespace corrtrack
