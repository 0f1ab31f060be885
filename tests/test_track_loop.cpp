// The track loop over the real pipeline: a generated clip, every frame once, one result per
// target, latency measured, and nothing dropped for a file; on a GPU, NVDEC against software
// decode. Part of test_pipeline.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "app/pipeline/track_loop.h"
#include "corrtrack/correlator.h"
#include "tests/support/session_setup.h"
#include "tests/support/synthetic_clip.h"

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
    const auto tracker = test::tracker_on(kernel, &out.error);
    EXPECT_TRUE(tracker) << out.error;
    if (!tracker) return out;
    auto session = test::open_session(*tracker, path, decode, /*want_rgb=*/false, /*slots=*/6);
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
    out.launches = tracker->last_correlation_launches();
    return out;
}

TEST(TrackLoop, EveryFrameGetsOneResultPerTargetAndFilesDropNothing) {
    const WrittenClip clip("track_loop", small_spec(40));
    ASSERT_EQ(clip.truth.size(), 40u) << clip.error;
    std::string error;
    const std::vector<BoxF> boxes{to_box(clip.truth[0]), {200, 150, 40, 32}};
    const LoopRun cpu = run_loop(clip.path, "cpu_fast", DecodeMode::kSoftware, boxes);
    EXPECT_EQ(cpu.callbacks, 40);
    EXPECT_EQ(cpu.firsts, 1);
    EXPECT_EQ(cpu.dropped, 0);
    ASSERT_EQ(cpu.latency.size(), 40u);
    for (double ms : cpu.latency) EXPECT_GT(ms, 0.0);
    double worst = 0;
    for (std::size_t i = 1; i < cpu.centres.size(); ++i)
        worst = std::max(
            worst, std::hypot(cpu.centres[i].first - clip.truth[i].cx(), cpu.centres[i].second - clip.truth[i].cy()));
    EXPECT_LT(worst, 1.0) << "the moving target's centre error";
    if (!cuda_available()) {
        std::printf("no GPU: the device path (pinned slots, copy stream, look-ahead) was not run\n");
        return;
    }
    // The GPU path: pinned slots copied one frame ahead, the same track as the CPU.
    const LoopRun gpu = run_loop(clip.path, "cuda_dp4a_ilp", DecodeMode::kSoftware, boxes);
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
    SyntheticClipSpec spec;
    spec.frames = 60;
    spec.crf = 18;  // lossy High profile: x264's lossless mode is a profile NVDEC cannot decode
    spec.codec = "libx264";
    const WrittenClip clip("track_loop_nvdec", spec, "clip.mp4");
    ASSERT_EQ(clip.truth.size(), 60u) << clip.error;
    const std::vector<BoxF> boxes{to_box(clip.truth[0])};
    const LoopRun sw = run_loop(clip.path, "auto", DecodeMode::kSoftware, boxes);
    const LoopRun hw = run_loop(clip.path, "auto", DecodeMode::kNvdec, boxes);
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
