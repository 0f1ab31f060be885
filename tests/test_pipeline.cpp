// FramePipeline: files deliver every frame once and in order, live sources keep the newest
// frames and count drops, and stopping never hangs.
// Thread rules: each test drives the consumer side from its own thread (plus helper threads
// where a test needs a blocked consumer).
#include <gtest/gtest.h>

extern "C" {
#include <libavutil/log.h>
}

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "app/pipeline/frame_ring.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

const bool kQuietLibav = [] {
    av_log_set_level(std::getenv("CORRTRACK_TEST_AV_LOG") ? AV_LOG_INFO : AV_LOG_QUIET);
    return true;
}();

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Frames whose every luma byte is index & 255, so a consumer can tell a frame that was
// overwritten while it held it.
class FakeSource : public FrameSource {
public:
    FakeSource(bool live, long frames, milliseconds period, long error_after = -1)
        : live_(live), frames_(frames), period_(period), error_after_(error_after) {}

    ReadStatus read(Frame& out) override {
        if (error_after_ >= 0 && next_ == error_after_) {
            error_ = "fake source failed";
            return ReadStatus::kError;
        }
        if (frames_ >= 0 && next_ >= frames_) return ReadStatus::kEnd;
        std::this_thread::sleep_for(period_);
        out.index = next_;
        out.pts = next_ * 0.01;
        out.width = 64;
        out.height = 48;
        out.luma.assign(64 * 48, static_cast<std::uint8_t>(next_ & 255));
        ++next_;
        produced_.store(next_);
        return ReadStatus::kFrame;
    }
    const std::string& error() const override { return error_; }
    bool live() const override { return live_; }
    Size size() const override { return {64, 48}; }
    double fps() const override { return 100.0; }
    long frame_count() const override { return live_ ? -1 : frames_; }
    std::string description() const override { return "fake"; }

    // Frames produced so far; readable from the consumer thread.
    static std::atomic<long> produced_;

private:
    bool live_;
    long frames_;  // -1: endless
    milliseconds period_;
    long error_after_;
    long next_ = 0;
    std::string error_;
};
std::atomic<long> FakeSource::produced_{0};

bool frame_is_intact(const Frame& f) {
    for (std::uint8_t v : f.luma)
        if (v != static_cast<std::uint8_t>(f.index & 255)) return false;
    return true;
}

std::unique_ptr<FrameSource> open_clip(const std::string& path, std::string* error) {
    SourceOptions o;
    o.input = path;
    return FrameSource::open(o, error);
}

TEST(Pipeline, FileDeliversEveryFrameOnceInOrderToASlowConsumer) {
    TempDir dir("pipeline");
    SyntheticClipSpec spec;
    spec.frames = 40;
    std::string error;
    ASSERT_EQ(write_synthetic_clip(dir.file("clip.mkv"), spec, &error).size(), 40u) << error;
    auto source = open_clip(dir.file("clip.mkv"), &error);
    ASSERT_TRUE(source) << error;

    SyntheticScene scene(spec);
    std::vector<std::uint8_t> truth;
    FramePipeline pipeline(std::move(source), 3);
    EXPECT_FALSE(pipeline.live());
    EXPECT_EQ(pipeline.size(), (Size{320, 240}));
    EXPECT_DOUBLE_EQ(pipeline.fps(), 25.0);
    EXPECT_EQ(pipeline.frame_count(), 40);
    EXPECT_EQ(pipeline.description(), "clip.mkv: h264 320x240 @ 25 fps, 40 frames");
    long expected = 0;
    while (const Frame* f = pipeline.acquire()) {
        EXPECT_EQ(f->index, expected);
        std::this_thread::sleep_for(milliseconds(expected % 5 == 0 ? 25 : 2));
        // The slot is ours until release: the decoder must not have written into it.
        scene.render(static_cast<int>(f->index), truth);
        EXPECT_EQ(mean_abs_diff(f->luma.data(), 320, truth.data(), 320, 320, 240), 0.0) << "frame " << f->index;
        pipeline.release(f);
        ++expected;
    }
    EXPECT_EQ(expected, 40);
    EXPECT_EQ(pipeline.dropped(), 0);
    EXPECT_EQ(pipeline.error(), "");
    EXPECT_EQ(pipeline.acquire(), nullptr) << "the end stays the end";
}

TEST(Pipeline, NonLiveSourceBlocksInsteadOfDropping) {
    FakeSource::produced_ = 0;
    FramePipeline pipeline(std::make_unique<FakeSource>(false, 60, milliseconds(0)), 2);
    long expected = 0;
    while (const Frame* f = pipeline.acquire()) {
        EXPECT_EQ(f->index, expected++);
        EXPECT_TRUE(frame_is_intact(*f));
        // The decoder can be at most one frame (its own slot) ahead of us.
        EXPECT_LE(FakeSource::produced_.load(), f->index + 2);
        std::this_thread::sleep_for(milliseconds(3));
        pipeline.release(f);
    }
    EXPECT_EQ(expected, 60);
    EXPECT_EQ(pipeline.dropped(), 0);
}

TEST(Pipeline, LiveSourceKeepsTheNewestFramesAndCountsDrops) {
    FakeSource::produced_ = 0;
    const long total = 300;
    const int slots = 3;
    FramePipeline pipeline(std::make_unique<FakeSource>(true, total, milliseconds(1)), slots);
    EXPECT_TRUE(pipeline.live());
    long delivered = 0, last = -1;
    bool all_intact = true;
    while (const Frame* f = pipeline.acquire()) {
        EXPECT_GT(f->index, last) << "indices must strictly increase";
        // Fresh: only frames decoded after this one (at most slots - 2 waiting, plus the
        // one being decoded, plus scheduling slack on a busy machine) are newer.
        EXPECT_LE(FakeSource::produced_.load() - 1 - f->index, slots + 8);
        last = f->index;
        all_intact &= frame_is_intact(*f);
        ++delivered;
        std::this_thread::sleep_for(milliseconds(10));
        pipeline.release(f);
    }
    EXPECT_TRUE(all_intact);
    EXPECT_EQ(pipeline.error(), "");
    EXPECT_EQ(last, total - 1) << "the newest frame is never the one dropped";
    EXPECT_GT(pipeline.dropped(), total / 2);
    EXPECT_EQ(delivered + pipeline.dropped(), total) << "each frame delivered or dropped";
}

TEST(Pipeline, LiveSourceWithAFastConsumerDropsNothing) {
    FramePipeline pipeline(std::make_unique<FakeSource>(true, 50, milliseconds(3)), 4);
    long delivered = 0;
    while (const Frame* f = pipeline.acquire()) {
        EXPECT_EQ(f->index, delivered++);
        pipeline.release(f);
    }
    EXPECT_EQ(delivered, 50);
    EXPECT_EQ(pipeline.dropped(), 0);
}

TEST(Pipeline, ErrorsReachTheConsumerAfterTheGoodFrames) {
    FramePipeline pipeline(std::make_unique<FakeSource>(false, 100, milliseconds(0), 5), 4);
    long delivered = 0;
    while (const Frame* f = pipeline.acquire()) {
        ++delivered;
        pipeline.release(f);
    }
    EXPECT_EQ(delivered, 5);
    EXPECT_EQ(pipeline.error(), "fake source failed");
}

TEST(Pipeline, MissingSourceEndsAtOnceWithAnError) {
    FramePipeline pipeline(nullptr, 4);
    EXPECT_EQ(pipeline.acquire(), nullptr);
    EXPECT_FALSE(pipeline.error().empty());
}

TEST(Pipeline, EarlyStopWhileTheDecoderWaitsForASlot) {
    TempDir dir("pipeline");
    SyntheticClipSpec spec;
    spec.frames = 30;
    std::string error;
    ASSERT_FALSE(write_synthetic_clip(dir.file("clip.mkv"), spec, &error).empty()) << error;
    auto source = open_clip(dir.file("clip.mkv"), &error);
    ASSERT_TRUE(source) << error;
    auto pipeline = std::make_unique<FramePipeline>(std::move(source), 2);
    const Frame* held = pipeline->acquire();  // never released
    ASSERT_NE(held, nullptr);
    std::this_thread::sleep_for(milliseconds(200));  // the decoder fills the other slot, waits
    const auto t0 = Clock::now();
    pipeline.reset();
    EXPECT_LT(seconds_since(t0), 1.0);  // immediate, with slack for a loaded machine
}

TEST(Pipeline, EndlessSourceStopsPromptly) {
    auto pipeline = std::make_unique<FramePipeline>(std::make_unique<FakeSource>(false, -1, milliseconds(0)), 4);
    for (int i = 0; i < 10; ++i) {
        const Frame* f = pipeline->acquire();
        ASSERT_NE(f, nullptr);
        pipeline->release(f);
    }
    const auto t0 = Clock::now();
    pipeline->stop();
    EXPECT_LT(seconds_since(t0), 1.0);
    EXPECT_EQ(pipeline->acquire(), nullptr);
    pipeline.reset();  // a second stop from the destructor
}

TEST(Pipeline, StopWakesAConsumerWaitingForASlowSource) {
    FramePipeline pipeline(std::make_unique<FakeSource>(true, -1, milliseconds(300)), 3);
    std::atomic<bool> got_null{false};
    std::thread consumer([&] {
        // The first frame arrives after 300 ms; stop comes before that.
        const Frame* f = pipeline.acquire();
        got_null = f == nullptr;
    });
    std::this_thread::sleep_for(milliseconds(50));
    const auto t0 = Clock::now();
    pipeline.stop();
    consumer.join();
    EXPECT_TRUE(got_null.load());
    EXPECT_LT(seconds_since(t0), 2.0) << "one read of the source (300 ms) at most";
}

}  // namespace
}  // namespace corrtrack

// The track loop over the real pipeline: a generated clip, every frame once, one result per
// target, latency measured, and nothing dropped for a file.
#include "app/pipeline/track_loop.h"
#include "corrtrack/correlator.h"

namespace corrtrack {
namespace {

struct LoopRun {
    long callbacks = 0, firsts = 0, dropped = 0;
    std::string decode_mode, error;
    std::vector<std::pair<double, double>> centres;  // target 0
    std::vector<double> latency;
    int launches = 0;
};

LoopRun run_loop(const std::string& path, const std::string& kernel, DecodeMode decode,
                 const std::vector<BoxF>& boxes) {
    LoopRun out;
    TrackerOptions to;
    to.kernel = kernel;
    MultiTracker tracker(to);
    EXPECT_TRUE(tracker.set_kernel(kernel, &out.error)) << out.error;
    SessionOptions so;
    so.source.input = path;
    so.decode = decode;
    so.slots = 6;
    auto session = FrameSession::open(tracker, so, &out.error);
    EXPECT_TRUE(session) << out.error;
    if (!session) return out;
    out.decode_mode = session->decode_mode();
    const FramePipeline& pipeline = session->pipeline();
    long expected_index = 0;
    auto on_frame = [&](const LoopFrame& f, std::vector<TrackResult>& results, std::string*) {
        EXPECT_EQ(f.index, expected_index++);
        EXPECT_EQ(results.size(), boxes.size());
        out.firsts += f.first;
        ++out.callbacks;
        out.centres.emplace_back(results[0].sub_cx, results[0].sub_cy);
        return true;
    };
    TrackLoopStats st;
    EXPECT_EQ(run_track_loop(*session, boxes, TrackLoopOptions{}, on_frame, &st, &out.error), 0) << out.error;
    EXPECT_EQ(pipeline.error(), "");
    EXPECT_EQ(st.frames, out.callbacks);
    out.latency = st.latency_ms;
    out.dropped = pipeline.dropped();
    out.launches = tracker.last_correlation_launches();
    return out;
}

TEST(TrackLoop, EveryFrameGetsOneResultPerTargetAndFilesDropNothing) {
    TempDir dir("track_loop");
    SyntheticClipSpec spec;
    spec.frames = 40;
    std::string error;
    const auto truth = write_synthetic_clip(dir.file("clip.mkv"), spec, &error);
    ASSERT_EQ(truth.size(), 40u) << error;
    const std::vector<BoxF> boxes{{truth[0].x, truth[0].y, truth[0].w, truth[0].h}, {200, 150, 40, 32}};
    const LoopRun cpu = run_loop(dir.file("clip.mkv"), "cpu_fast", DecodeMode::kSoftware, boxes);
    EXPECT_EQ(cpu.callbacks, 40);
    EXPECT_EQ(cpu.firsts, 1);
    EXPECT_EQ(cpu.dropped, 0);
    ASSERT_EQ(cpu.latency.size(), 40u);
    for (double ms : cpu.latency) EXPECT_GT(ms, 0.0);
    double worst = 0;
    for (std::size_t i = 1; i < cpu.centres.size(); ++i)
        worst =
            std::max(worst, std::hypot(cpu.centres[i].first - truth[i].cx(), cpu.centres[i].second - truth[i].cy()));
    EXPECT_LT(worst, 1.0) << "the moving target's centre error";
    if (!cuda_available()) {
        std::printf("no GPU: the device path (pinned slots, copy stream, look-ahead) was not run\n");
        return;
    }
    // The GPU path: pinned slots copied one frame ahead, the same track as the CPU.
    const LoopRun gpu = run_loop(dir.file("clip.mkv"), "cuda_dp4a_ilp", DecodeMode::kSoftware, boxes);
    EXPECT_EQ(gpu.callbacks, 40);
    EXPECT_EQ(gpu.dropped, 0);
    ASSERT_EQ(gpu.centres.size(), cpu.centres.size());
    for (std::size_t i = 0; i < gpu.centres.size(); ++i) {
        EXPECT_NEAR(gpu.centres[i].first, cpu.centres[i].first, 1e-3) << "frame " << i;
        EXPECT_NEAR(gpu.centres[i].second, cpu.centres[i].second, 1e-3) << "frame " << i;
    }
}

// NVDEC against software decode of the same limited-range H.264 clip: both give the tracker
// the raw Y plane, so the boxes are the same to the bit.
TEST(TrackLoop, NvdecAndSoftwareDecodeTrackTheSameBoxes) {
    if (!cuda_available()) GTEST_SKIP() << "no GPU: NVDEC not tested";
    TempDir dir("track_loop_nvdec");
    SyntheticClipSpec spec;
    spec.frames = 60;
    spec.crf = 18;  // lossy High profile: x264's lossless mode is a profile NVDEC cannot decode
    spec.codec = "libx264";
    std::string error;
    const auto truth = write_synthetic_clip(dir.file("clip.mp4"), spec, &error);
    ASSERT_EQ(truth.size(), 60u) << error;
    const std::vector<BoxF> boxes{{truth[0].x, truth[0].y, truth[0].w, truth[0].h}};
    const LoopRun sw = run_loop(dir.file("clip.mp4"), "auto", DecodeMode::kSoftware, boxes);
    const LoopRun hw = run_loop(dir.file("clip.mp4"), "auto", DecodeMode::kNvdec, boxes);
    if (hw.decode_mode != "nvdec") GTEST_SKIP() << "NVDEC unavailable in this FFmpeg or on this GPU";
    EXPECT_EQ(sw.decode_mode, "sw");
    ASSERT_EQ(hw.callbacks, 60);
    ASSERT_EQ(sw.callbacks, 60);
    double worst = 0;
    for (std::size_t i = 0; i < sw.centres.size(); ++i) {
        const double d =
            std::hypot(sw.centres[i].first - hw.centres[i].first, sw.centres[i].second - hw.centres[i].second);
        worst = std::max(worst, d);
        EXPECT_EQ(d, 0.0) << "frame " << i;
    }
    std::printf("NVDEC vs software decode: centres within %.4f px over %ld frames\n", worst, hw.callbacks);
}

}  // namespace
}  // namespace corrtrack

// The shared per-frame session (CPU path; the GPU variants skip without a GPU): the loop over
// it gives the boxes of the old path (a FramePipeline drained by hand, the tracker fed each
// slot's luma), the GUI's pull-one-frame use gives the same, and frames, max_frames, the stop
// flag and realtime drops are counted exactly.
#include <algorithm>

#include "app/pipeline/frame_session.h"

namespace corrtrack {
namespace {

struct Track {
    std::vector<long> index;
    std::vector<BoxF> box;   // target 0
    std::vector<BoxF> box1;  // target 1
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
    TrackerOptions to;
    to.kernel = kernel;
    MultiTracker tracker(to);
    std::string error;
    EXPECT_TRUE(tracker.set_kernel(kernel, &error)) << error;
    SourceOptions so;
    so.input = path;
    so.want_rgb = false;
    auto source = FrameSource::open(so, &error);
    EXPECT_TRUE(source) << error;
    if (!source) return out;
    FramePipeline pipeline(std::move(source), 6);
    bool first = true;
    while (const Frame* f = pipeline.acquire()) {
        std::vector<TrackResult> results;
        if (first) {
            for (const BoxF& b : boxes)
                results.push_back(initial_result(tracker.add_target(f->luma_view(), b, &error), b));
            first = false;
        } else {
            results = tracker.update(f->luma_view());
        }
        out.index.push_back(f->index);
        out.box.push_back(results.at(0).box);
        out.box1.push_back(results.at(1).box);
        pipeline.release(f);
    }
    EXPECT_EQ(pipeline.error(), "");
    return out;
}

std::unique_ptr<FrameSession> open_session(MultiTracker& tracker, const std::string& path, bool want_rgb = false) {
    SessionOptions so;
    so.source.input = path;
    so.decode = DecodeMode::kAuto;
    so.want_rgb = want_rgb;
    so.slots = 6;
    std::string error;
    auto session = FrameSession::open(tracker, so, &error);
    EXPECT_TRUE(session) << error;
    return session;
}

TEST(FrameSession, LoopAndPullOneFrameGiveTheOldPathsBoxes) {
    TempDir dir("frame_session");
    SyntheticClipSpec spec;
    spec.frames = 40;
    std::string error;
    const auto truth = write_synthetic_clip(dir.file("clip.mkv"), spec, &error);
    ASSERT_EQ(truth.size(), 40u) << error;
    const std::vector<BoxF> boxes{{truth[0].x, truth[0].y, truth[0].w, truth[0].h}, {200, 150, 40, 32}};
    const std::string kernel = "cpu_fast";
    const Track old = old_path(dir.file("clip.mkv"), kernel, boxes);
    ASSERT_EQ(old.index.size(), 40u);

    // The CLI's loop over the session.
    {
        TrackerOptions to;
        to.kernel = kernel;
        MultiTracker tracker(to);
        ASSERT_TRUE(tracker.set_kernel(kernel, &error)) << error;
        auto session = open_session(tracker, dir.file("clip.mkv"), /*want_rgb=*/true);
        ASSERT_TRUE(session);
        EXPECT_EQ(session->decode_mode(), "sw") << "auto with a CPU tracker decodes on the CPU";
        Track got;
        long firsts = 0, with_rgb = 0;
        auto on_frame = [&](const LoopFrame& f, std::vector<TrackResult>& results, std::string*) {
            EXPECT_EQ(results.size(), 2u);
            firsts += f.first;
            got.index.push_back(f.index);
            got.box.push_back(results[0].box);
            got.box1.push_back(results[1].box);
            EXPECT_GT(f.decode_ms, 0.0);
            EXPECT_EQ(results[0].times.decode_ms, f.decode_ms) << "frame " << f.index;
            EXPECT_GT(results[0].times.latency_ms, 0.0) << "frame " << f.index;
            if (f.frame && f.frame->rgb.size() == static_cast<std::size_t>(spec.width) * 3 * spec.height) ++with_rgb;
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
        TrackerOptions to;
        to.kernel = kernel;
        MultiTracker tracker(to);
        ASSERT_TRUE(tracker.set_kernel(kernel, &error)) << error;
        auto session = open_session(tracker, dir.file("clip.mkv"));
        ASSERT_TRUE(session);
        EXPECT_FALSE(session->has_frame());
        EXPECT_EQ(session->frame().index, -1);
        ASSERT_TRUE(session->advance());
        EXPECT_EQ(session->frame().index, 0);
        Track got;
        got.index.push_back(0);
        for (const BoxF& b : boxes) EXPECT_GE(tracker.add_target(session->luma(false), b, &error), 0) << error;
        got.box.push_back(boxes[0]);
        got.box1.push_back(boxes[1]);
        while (session->advance()) {
            const std::vector<TrackResult>& r = session->track_current();
            ASSERT_EQ(r.size(), 2u);
            EXPECT_EQ(r[0].times.decode_ms, session->frame().decode_ms);
            got.index.push_back(session->frame().index);
            got.box.push_back(r[0].box);
            got.box1.push_back(r[1].box);
        }
        EXPECT_EQ(session->error(), "");
        EXPECT_EQ(session->frame().index, 39) << "the last frame stays current at the end";
        EXPECT_EQ(session->taken(), 0) << "advance() is not paced and not counted as next()";
        expect_same_boxes(got, old, 1e-6, "pull-one-frame vs the old path");
        double worst = 0;
        for (std::size_t i = 0; i < got.box.size(); ++i)
            worst = std::max(worst, std::hypot(got.box[i].cx() - truth[i].cx(), got.box[i].cy() - truth[i].cy()));
        EXPECT_LT(worst, 1.0) << "the moving target's centre error";
    }

    if (!cuda_available()) {
        std::printf("no GPU: the session's device path (uploader, look-ahead) was not run\n");
        return;
    }
    // The GPU tracker on software frames: copied by the session's uploader, same boxes.
    TrackerOptions to;
    to.kernel = "cuda_dp4a_ilp";
    MultiTracker tracker(to);
    ASSERT_TRUE(tracker.set_kernel(to.kernel, &error)) << error;
    SessionOptions so;
    so.source.input = dir.file("clip.mkv");
    so.decode = DecodeMode::kSoftware;
    auto session = FrameSession::open(tracker, so, &error);
    ASSERT_TRUE(session) << error;
    ASSERT_TRUE(session->advance());
    for (const BoxF& b : boxes) EXPECT_GE(tracker.add_target(session->luma(true), b, &error), 0) << error;
    Track got{{0}, {boxes[0]}, {boxes[1]}};
    while (session->advance()) {
        const std::vector<TrackResult>& r = session->track_current();
        EXPECT_GT(r[0].times.upload_ms, 0.0) << "the session's copy is timed";
        got.index.push_back(session->frame().index);
        got.box.push_back(r[0].box);
        got.box1.push_back(r[1].box);
    }
    expect_same_boxes(got, old, 1e-3, "GPU pull-one-frame vs the CPU old path");
}

TEST(FrameSession, MaxFramesAndTheStopFlagEndTheLoopAtExactFrames) {
    TempDir dir("frame_session_limits");
    SyntheticClipSpec spec;
    spec.frames = 40;
    std::string error;
    const auto truth = write_synthetic_clip(dir.file("clip.mkv"), spec, &error);
    ASSERT_EQ(truth.size(), 40u) << error;
    const std::vector<BoxF> boxes{{truth[0].x, truth[0].y, truth[0].w, truth[0].h}};
    TrackerOptions to;
    to.kernel = "cpu_fast";
    {
        MultiTracker tracker(to);
        auto session = open_session(tracker, dir.file("clip.mkv"));
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
        so.source.input = dir.file("clip.mkv");
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
        EXPECT_NEAR(last_box.cx(), truth[9].cx(), 1.0);
        EXPECT_NEAR(last_box.cy(), truth[9].cy(), 1.0);
    }
}

// Frames of a synthetic scene with chosen timestamps: pts 0 (due at once; the nominal rate is
// so low that no frame counts as late) except `late` frames, stamped long before the first.
class SceneSource : public FrameSource {
public:
    SceneSource(const SyntheticClipSpec& spec, std::vector<long> late) : scene_(spec), late_(std::move(late)) {}
    ReadStatus read(Frame& out) override {
        if (next_ >= scene_.spec().frames) return ReadStatus::kEnd;
        out.decode_start = std::chrono::steady_clock::now();
        scene_.render(static_cast<int>(next_), pixels_);
        out.index = next_;
        out.pts = std::find(late_.begin(), late_.end(), next_) != late_.end() ? -1000.0 : 0.0;
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
    double fps() const override { return 0.01; }  // an interval of 100 s
    long frame_count() const override { return scene_.spec().frames; }
    std::string description() const override { return "scene"; }

private:
    SyntheticScene scene_;
    std::vector<long> late_;
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

// The GUI's seek: a fresh session decoded up to frame N without tracking; the current frame
// is N, its host luma is the decoded one, and targets start there.
TEST(FrameSession, SeekByReopeningDecodesUpToTheFrameWithoutTracking) {
    TempDir dir("frame_session_seek");
    SyntheticClipSpec spec;
    spec.frames = 30;
    std::string error;
    const auto truth = write_synthetic_clip(dir.file("clip.mkv"), spec, &error);
    ASSERT_EQ(truth.size(), 30u) << error;
    TrackerOptions to;
    to.kernel = "cpu_fast";
    MultiTracker tracker(to);
    auto session = open_session(tracker, dir.file("clip.mkv"), /*want_rgb=*/true);
    ASSERT_TRUE(session);
    ASSERT_TRUE(session->advance());
    while (session->frame().index < 17 && session->advance()) {}
    ASSERT_EQ(session->frame().index, 17);
    const Frame& f = session->frame();
    EXPECT_EQ(f.rgb.size(), static_cast<std::size_t>(spec.width) * 3 * spec.height) << "host RGB for display";
    const ImageView v = session->luma(false);
    EXPECT_EQ(v.data, f.luma.data()) << "a host frame's own luma, not a copy";
    SyntheticScene scene(spec);
    std::vector<std::uint8_t> clean;
    scene.render(17, clean, /*noise=*/false);
    EXPECT_LT(mean_abs_diff(f.luma.data(), spec.width, clean.data(), spec.width, spec.width, spec.height), 3.0);
    const TruthBox& t = truth[17];
    ASSERT_GE(tracker.add_target(v, {t.x, t.y, t.w, t.h}, &error), 0) << error;
    EXPECT_EQ(tracker.size(), 1);
    long frames = 0;
    while (session->advance()) {
        const std::vector<TrackResult>& r = session->track_current();
        const TruthBox& tt = truth[static_cast<std::size_t>(session->frame().index)];
        EXPECT_NEAR(r[0].box.cx(), tt.cx(), 1.0) << "frame " << session->frame().index;
        EXPECT_NEAR(r[0].box.cy(), tt.cy(), 1.0) << "frame " << session->frame().index;
        ++frames;
    }
    EXPECT_EQ(frames, 12);
    EXPECT_EQ(session->frame().index, 29);
}

}  // namespace
}  // namespace corrtrack
