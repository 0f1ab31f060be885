// `corrtrack bench --e2e` through the CLI binary on a generated clip (CPU path): the
// decode-vs-track table, --targets and --streams (counts, fields, no drops at full speed), and
// the target grid on its own. Without a GPU the NVDEC rows say why they are missing; with one
// they are timed too. Part of test_bench.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/bench/target_grid.h"
#include "corrtrack/correlator.h"
#include "tests/support/clip_suite.h"
#include "tests/support/run_cli.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

using test::read_text;
using test::run_cli;

class BenchE2e : public test::SuiteDir<BenchE2e> {
public:
    static constexpr const char* kTag = "bench-e2e";

protected:
    static void SetUpTestSuite() {
        SuiteDir::SetUpTestSuite();
        // A build carried to another host names its binary as the rest of test_bench finds it.
        const char* moved = std::getenv("CORRTRACK_BINARY");
        if (moved && *moved && !std::getenv("CORRTRACK_TEST_BINARY")) ::setenv("CORRTRACK_TEST_BINARY", moved, 1);
        spec_.frames = 30;
        spec_.crf = 18;
        spec_.codec = "libx264";
        std::string error;
        ASSERT_EQ(write_synthetic_clip(clip(), spec_, &error).size(), 30u) << error;
    }
    static std::string clip() { return d() + "/clip.mp4"; }
    // Runs the bench with `args` and returns its JSON document.
    static nlohmann::json bench(const std::string& args, test::CliResult* out = nullptr) {
        const test::CliResult r =
            run_cli("bench --e2e " + clip() + " --e2e-repeats 1 " + args + " --json " + d() + "/e2e.json", d());
        EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
        if (out) *out = r;
        return r.exit_code == 0 ? nlohmann::json::parse(read_text(d() + "/e2e.json")) : nlohmann::json::object();
    }
    static const nlohmann::json* row(const nlohmann::json& rows, const std::string& decode) {
        for (const auto& r : rows)
            if (r["decode"] == decode && !r.contains("unavailable")) return &r;
        return nullptr;
    }
    static inline SyntheticClipSpec spec_;
};

TEST_F(BenchE2e, TimesDecodeAloneAgainstDecodePlusTrack) {
    const auto doc = bench("--e2e-box 60,70,40,32");
    ASSERT_EQ(doc["clips"].size(), 1u);
    const auto& modes = doc["clips"][0]["modes"];
    ASSERT_GE(modes.size(), 1u);
    const auto& sw = modes[0];
    EXPECT_EQ(sw["decode"], "sw");
    EXPECT_EQ(sw["frames"], 30);
    EXPECT_GT(sw["decode_only_fps"].get<double>(), 0.0);
    EXPECT_GT(sw["decode_track_fps"].get<double>(), 0.0);
    EXPECT_GT(sw["latency_ms"]["median"].get<double>(), 0.0);
    EXPECT_GE(sw["latency_ms"]["p95"].get<double>(), sw["latency_ms"]["median"].get<double>());
    EXPECT_GT(sw["stages"]["correlate"]["median_ms"].get<double>(), 0.0);
    ASSERT_EQ(modes.size(), 2u) << "an NVDEC row, timed or saying why not";
    if (!cuda_available()) {
        EXPECT_TRUE(modes[1].contains("unavailable"));
        EXPECT_NE(modes[1]["unavailable"].get<std::string>().find("NVDEC"), std::string::npos);
    } else if (!modes[1].contains("unavailable")) {
        EXPECT_EQ(modes[1]["decode"], "nvdec");
        EXPECT_LE(doc["clips"][0]["sw_vs_nvdec_max_centre_px"].get<double>(), 0.5);
    }
    EXPECT_FALSE(doc["clips"][0].contains("targets")) << "only with --targets";
    EXPECT_FALSE(doc["clips"][0].contains("streams")) << "only with --streams";
}

// A run's start apart from its steady state (issue 30): with --targets-only the targets pass is
// the process's first; the first 100 frames (all 30 here) get their own p50/p95/max, cold pass
// and median pass, and the steady state the rest (none here); the trace names the pass.
TEST_F(BenchE2e, TargetsReportTheFirstFramesApart) {
    test::CliResult r;
    const auto doc = bench("--targets 2 --targets-only --e2e-decode sw --no-cache", &r);
    const auto& c = doc["clips"][0];
    EXPECT_TRUE(c["modes"].empty()) << "--targets-only: no decode-vs-track table";
    const nlohmann::json* t = row(c["targets"], "sw");
    ASSERT_TRUE(t) << c.dump();
    for (const char* pass : {"cold_pass", "median_pass"}) {
        const auto& f = (*t)["first_frames_latency"][pass];
        EXPECT_EQ(f["frames"], 30) << pass;
        EXPECT_GT(f["p50_ms"].get<double>(), 0.0) << pass;
        EXPECT_GE(f["p95_ms"].get<double>(), f["p50_ms"].get<double>()) << pass;
        EXPECT_GE(f["max_ms"].get<double>(), f["p95_ms"].get<double>()) << pass;
    }
    EXPECT_EQ((*t)["steady_latency"]["frames"], 0);
    EXPECT_NE(r.out.find("first 30 frames: p50 / p95 / max"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("decode fps"), std::string::npos) << r.out;
}

// --targets 4: four textured 40x40 boxes on a 3x2 grid of the 320x240 clip, every frame
// tracked; --streams 2: two copies at full speed, every frame of both, nothing dropped, against
// two decode-only sessions that decode every frame too. With NVDEC, auto with
// --nvdec-streams 1 puts one stream on NVDEC and the other on the CPU.
TEST_F(BenchE2e, TargetsAndStreamsComeFromOneCommand) {
    test::CliResult r;
    const auto doc = bench("--targets 4 --streams 2 --e2e-decode sw,auto --nvdec-streams 1", &r);
    EXPECT_EQ(doc["target_counts"], nlohmann::json::array({4}));
    EXPECT_EQ(doc["stream_counts"], nlohmann::json::array({2}));
    EXPECT_EQ(doc["decoders"], nlohmann::json::array({"sw", "auto"}));
    const auto& c = doc["clips"][0];
    EXPECT_EQ(c["modes"].size(), 1u) << "sw only: nvdec was not asked for";

    const nlohmann::json* t = row(c["targets"], "sw");
    ASSERT_TRUE(t) << c["targets"].dump();
    EXPECT_EQ((*t)["targets"], 4);
    EXPECT_EQ((*t)["frames"], 30);
    EXPECT_EQ((*t)["textured"], 4);
    EXPECT_GE((*t)["min_std_dev"].get<double>(), kTexturedStdDev);
    EXPECT_EQ((*t)["grid"], nlohmann::json::array({3, 2}));
    EXPECT_EQ((*t)["target_size"], nlohmann::json::array({40, 40}));
    EXPECT_GT((*t)["tracking_fps"].get<double>(), 0.0);
    EXPECT_GT((*t)["decode_track_fps"].get<double>(), 0.0);
    EXPECT_GT((*t)["correlate_median_ms"].get<double>(), 0.0);
    EXPECT_GE((*t)["latency_ms"]["p95"].get<double>(), (*t)["latency_ms"]["median"].get<double>());

    const nlohmann::json* s = row(c["streams"], "sw");
    ASSERT_TRUE(s) << c["streams"].dump();
    EXPECT_EQ((*s)["streams"], 2);
    EXPECT_EQ((*s)["frames"], 60);
    EXPECT_EQ((*s)["realtime"], false);
    EXPECT_EQ((*s)["live_dropped"], 0);
    EXPECT_EQ((*s)["late_dropped"], 0);
    EXPECT_EQ((*s)["decoders"]["sw"], 2);
    EXPECT_EQ((*s)["decoders"]["nvdec"], 0);
    EXPECT_EQ((*s)["decode_only_ceiling"]["frames"], 60);
    EXPECT_GT((*s)["decode_only_ceiling"]["fps"].get<double>(), 0.0);
    EXPECT_DOUBLE_EQ((*s)["of_ceiling"].get<double>(),
                     (*s)["fps"].get<double>() / (*s)["decode_only_ceiling"]["fps"].get<double>());
    EXPECT_GE((*s)["latency_ms"]["p95"].get<double>(), (*s)["latency_ms"]["median"].get<double>());
    EXPECT_GT((*s)["latency_ms"]["median"].get<double>(), 0.0);
    ASSERT_EQ((*s)["per_stream"].size(), 2u);
    EXPECT_EQ((*s)["per_stream"][0]["name"], "clip");
    EXPECT_EQ((*s)["per_stream"][1]["name"], "clip-2");
    for (const auto& one : (*s)["per_stream"]) {
        EXPECT_EQ(one["frames"], 30);
        EXPECT_EQ(one["decode"], "sw");
        EXPECT_EQ(one["live_dropped"], 0);
        EXPECT_EQ(one["late_dropped"], 0);
    }
    if (const nlohmann::json* a = row(c["streams"], "auto")) {
        EXPECT_EQ((*a)["frames"], 60);
        EXPECT_EQ((*a)["decoders"]["nvdec"], 1);
        EXPECT_EQ((*a)["decoders"]["sw"], 1);
        EXPECT_EQ((*a)["per_stream"][0]["decode"], "nvdec");
        EXPECT_EQ((*a)["per_stream"][1]["decode"], "sw");
        EXPECT_NE((*a)["per_stream"][1]["decode_why"].get<std::string>().find("NVDEC full"), std::string::npos);
        EXPECT_EQ((*a)["live_dropped"], 0);
        EXPECT_EQ((*a)["late_dropped"], 0);
    } else {
        // auto without NVDEC would time the CPU decoders again: one line says so.
        ASSERT_EQ(c["streams"].size(), 2u);
        EXPECT_NE(c["streams"][0]["unavailable"].get<std::string>().find("the same as sw"), std::string::npos);
    }
    EXPECT_EQ((*t)["layout"], "grid");
    EXPECT_EQ(doc["target_layout"], "grid");
    EXPECT_NE(r.out.find("\ntargets (layout grid): N boxes of 40x40"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\nstreams: N copies"), std::string::npos) << r.out;
}

// Paced to the clip's 25 fps: every frame is either tracked or counted as a late drop, and the
// latency is also given in frame times.
TEST_F(BenchE2e, RealtimeStreamsCountEveryFrame) {
    const auto doc = bench("--streams 2 --realtime --e2e-decode sw --e2e-frames 10");
    const nlohmann::json* s = row(doc["clips"][0]["streams"], "sw");
    ASSERT_TRUE(s);
    EXPECT_EQ((*s)["realtime"], true);
    EXPECT_EQ((*s)["frames"].get<long>() + (*s)["late_dropped"].get<long>(), 20);
    EXPECT_EQ((*s)["live_dropped"], 0);
    EXPECT_NEAR((*s)["latency_p95_frame_times"].get<double>(), (*s)["latency_ms"]["p95"].get<double>() / 40.0, 1e-9);
    EXPECT_EQ((*s)["decode_only_ceiling"]["frames"], 20) << "the ceiling runs at full speed, --e2e-frames each";
}

// --targets paced to the clip's 25 fps (issue 30's live start): the pass takes the clip's time
// (unpaced it runs at hundreds of fps), every frame is tracked or counted as late, and a frame's
// latency is its own work, under one frame time, not the wait behind frames decoded ahead.
TEST_F(BenchE2e, RealtimeTargetsTimeEachFrameAlone) {
    const auto doc = bench("--targets 2 --targets-only --realtime --e2e-decode sw --e2e-frames 10");
    const nlohmann::json* t = row(doc["clips"][0]["targets"], "sw");
    ASSERT_TRUE(t) << doc.dump();
    EXPECT_EQ((*t)["realtime"], true);
    EXPECT_EQ((*t)["frames"].get<long>() + (*t)["late_dropped"]["median_pass"].get<long>(), 10);
    EXPECT_LT((*t)["decode_track_fps"].get<double>(), 25.0 * 10 / 9 + 1) << "paced: 10 frames span 9 intervals";
    EXPECT_LT((*t)["first_frames_latency"]["median_pass"]["p95_ms"].get<double>(), 40.0);
}

TEST_F(BenchE2e, ScaleOptionsNeedAClipAndSaneValues) {
    const struct {
        std::string args, message;
    } cases[] = {
        {"bench --targets 4", "give --e2e CLIP"},
        {"bench --streams 2 --kernels cpu_fast", "give --e2e CLIP"},
        {"bench --e2e " + clip() + " --targets 0", "--targets"},
        {"bench --e2e " + clip() + " --streams 100000", "--streams"},
        {"bench --e2e " + clip() + " --target-size 0x4 --targets 1", "--target-size"},
        {"bench --e2e " + clip() + " --e2e-decode cuvid", "--e2e-decode 'cuvid'"},
        {"bench --e2e " + clip() + " --nvdec-streams 0", "--nvdec-streams"},
    };
    for (const auto& c : cases) {
        SCOPED_TRACE(c.args);
        const test::CliResult r = run_cli(c.args, d());
        EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
        EXPECT_NE((r.out + r.err).find(c.message), std::string::npos) << r.out << r.err;
    }
    // Boxes larger than the frame: said, exit 1.
    const test::CliResult r =
        run_cli("bench --e2e " + clip() + " --e2e-repeats 1 --targets 1 --target-size 400x40", d());
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("do not fit a 320x240 frame"), std::string::npos) << r.err;
}

// --layout crowded: the issue's pattern from the top-left (5 columns fit 320 px), its name in
// the header, the JSON and every row, and the lost and re-detection counts of the pass.
TEST_F(BenchE2e, CrowdedLayoutIsNamedAndCountsLostTargets) {
    test::CliResult r;
    const auto doc = bench("--targets 4 --layout crowded --e2e-decode sw", &r);
    EXPECT_EQ(doc["target_layout"], "crowded");
    const nlohmann::json* t = row(doc["clips"][0]["targets"], "sw");
    ASSERT_TRUE(t) << doc.dump();
    EXPECT_EQ((*t)["layout"], "crowded");
    EXPECT_EQ((*t)["targets"], 4);
    EXPECT_EQ((*t)["grid"], nlohmann::json::array({5, 1}));
    const long lost = (*t)["lost_target_frames"].get<long>();
    EXPECT_GE(lost, 0);
    EXPECT_LE(lost, 4 * 30);
    EXPECT_LE((*t)["lost_on_last_frame"].get<int>(), 4);
    EXPECT_LE((*t)["most_redetecting_in_a_frame"].get<int>(), 4);
    EXPECT_GE((*t)["redetect_target_frames"].get<long>(), 0);
    EXPECT_NE(r.out.find("\ntargets (layout crowded): N boxes of 40x40, 32 a row from (8,8), 58 px apart across and "
                         "32 down (overlapping by 8 px)"),
              std::string::npos)
        << r.out;
    const test::CliResult bad = run_cli("bench --e2e " + clip() + " --targets 4 --layout diagonal", d());
    EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
    EXPECT_NE(bad.err.find("--layout"), std::string::npos) << bad.err;
}

// The crowded layout of issue 30 on a textured 1080p frame: 1024 boxes of 40x40 in 32 rows of
// 32, 58 px apart across, 32 down: each box overlaps the one below by 8 px.
TEST(TargetGrid, CrowdedLayoutPacksTheIssuesBoxes) {
    const int w = 1920, h = 1080;
    std::vector<std::uint8_t> luma(static_cast<std::size_t>(w) * h);
    for (std::size_t i = 0; i < luma.size(); ++i) luma[i] = static_cast<std::uint8_t>(i * 7919 % 251);
    EXPECT_EQ(crowd_pitch(40, 40).across, 58);
    EXPECT_EQ(crowd_pitch(40, 40).down, 32);
    const TargetGrid g = crowd_targets(luma.data(), w, h, 40, 40, 1024);
    ASSERT_EQ(g.boxes.size(), 1024u);
    EXPECT_EQ(g.cols, 32);
    EXPECT_EQ(g.rows, 32);
    EXPECT_EQ(g.textured, 1024);
    for (int k = 0; k < 1024; ++k) {
        const BoxF& b = g.boxes[k];
        EXPECT_EQ(b.x, 8 + 58 * (k % 32)) << k;
        EXPECT_EQ(b.y, 8 + 32 * (k / 32)) << k;
        EXPECT_EQ(b.width, 40);
        EXPECT_EQ(b.height, 40);
    }
    EXPECT_EQ(g.boxes[1023].x + 40, 1846);
    EXPECT_EQ(g.boxes[1023].y + 40, 1040);
    EXPECT_EQ(g.boxes[0].y + g.boxes[0].height - g.boxes[32].y, 8) << "8 px of overlap down";
    EXPECT_EQ(g.boxes[1].x - (g.boxes[0].x + g.boxes[0].width), 18) << "18 px apart across";
    // The same call through --layout's switch.
    EXPECT_EQ(layout_targets(TargetLayout::kCrowded, luma.data(), w, h, 40, 40, 1024).boxes.size(), 1024u);
    TargetLayout parsed = TargetLayout::kGrid;
    EXPECT_TRUE(parse_target_layout("crowded", &parsed));
    EXPECT_EQ(parsed, TargetLayout::kCrowded);
    EXPECT_STREQ(to_string(parsed), "crowded");
    EXPECT_FALSE(parse_target_layout("Crowded", &parsed));
}

// A narrower frame takes fewer columns; past one layer the next starts half a pitch right and
// down; flat positions are skipped; nothing when no box fits.
TEST(TargetGrid, CrowdedLayoutFitsAnyFrame) {
    const int w = 640, h = 360;
    std::vector<std::uint8_t> luma(static_cast<std::size_t>(w) * h);
    for (std::size_t i = 0; i < luma.size(); ++i) luma[i] = static_cast<std::uint8_t>(i * 7919 % 251);
    // (640 - 8 - 40) / 58 + 1 = 11 columns, (360 - 8 - 40) / 32 + 1 = 10 rows.
    const TargetGrid g = crowd_targets(luma.data(), w, h, 40, 40, 150);
    ASSERT_EQ(g.boxes.size(), 150u);
    EXPECT_EQ(g.cols, 11);
    EXPECT_EQ(g.rows, 10);
    EXPECT_EQ(g.boxes[11].x, 8);
    EXPECT_EQ(g.boxes[11].y, 40);
    EXPECT_EQ(g.boxes[109].x, 8 + 58 * 10);
    EXPECT_EQ(g.boxes[109].y, 8 + 32 * 9);
    EXPECT_EQ(g.boxes[110].x, 8 + 29) << "the second layer";
    EXPECT_EQ(g.boxes[110].y, 8 + 16);
    for (const BoxF& b : g.boxes) {
        EXPECT_GE(b.x, 0);
        EXPECT_GE(b.y, 0);
        EXPECT_LE(b.x + b.width, w);
        EXPECT_LE(b.y + b.height, h);
    }
    // The left 300 columns flat: the first positions there are skipped.
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < 300; ++x) luma[static_cast<std::size_t>(y) * w + x] = 77;
    const TargetGrid f = crowd_targets(luma.data(), w, h, 40, 40, 3);
    ASSERT_EQ(f.boxes.size(), 3u);
    EXPECT_EQ(f.boxes[0].x, 8 + 58 * 5) << "the first box clear of the flat part";
    EXPECT_EQ(f.boxes[0].y, 8);
    for (double sd : f.std_dev) EXPECT_GE(sd, kFlatStdDev);
    EXPECT_TRUE(crowd_targets(luma.data(), w, h, 700, 40, 1).boxes.empty()) << "wider than the frame";
    EXPECT_TRUE(crowd_targets(luma.data(), w, h, 40, 40, 0).boxes.empty());
    const std::vector<std::uint8_t> flat(static_cast<std::size_t>(w) * h, 90);
    EXPECT_TRUE(crowd_targets(flat.data(), w, h, 40, 40, 5).boxes.empty()) << "nothing but flat grey";
}

// A flat grey frame with two textured squares: each cell's box lands on its square.
TEST(TargetGrid, BoxesGoToTheTexturedSpotOfTheirCell) {
    const int w = 200, h = 100;
    std::vector<std::uint8_t> luma(static_cast<std::size_t>(w) * h, 128);
    auto texture = [&](int x0, int y0) {
        for (int y = y0; y < y0 + 30; ++y)
            for (int x = x0; x < x0 + 30; ++x) luma[static_cast<std::size_t>(y) * w + x] = (x * 37 + y * 91) % 251;
    };
    texture(55, 40);
    texture(150, 8);
    const TargetGrid g = grid_targets(luma.data(), w, h, 20, 20, 2, 1);
    EXPECT_EQ(g.cols, 2);
    EXPECT_EQ(g.rows, 1);
    ASSERT_EQ(g.boxes.size(), 2u);
    EXPECT_EQ(g.textured, 2);
    // Inside each square (step 1: the exact spots).
    EXPECT_GE(g.boxes[0].x, 55);
    EXPECT_LE(g.boxes[0].x + 20, 85);
    EXPECT_GE(g.boxes[0].y, 40);
    EXPECT_LE(g.boxes[0].y + 20, 70);
    EXPECT_GE(g.boxes[1].x, 150);
    EXPECT_LE(g.boxes[1].x + 20, 180);
    EXPECT_GE(g.boxes[1].y, 8);
    EXPECT_LE(g.boxes[1].y + 20, 38);
    for (double sd : g.std_dev) EXPECT_GE(sd, kTexturedStdDev);

    // Flat everywhere: the boxes are still laid out, none textured.
    const std::vector<std::uint8_t> flat(static_cast<std::size_t>(w) * h, 90);
    const TargetGrid f = grid_targets(flat.data(), w, h, 20, 20, 3);
    EXPECT_EQ(f.boxes.size(), 3u);
    EXPECT_EQ(f.textured, 0);
}

// Only the left half has texture: the first grid's right cells are flat, so a finer grid
// puts every box on the left.
TEST(TargetGrid, FlatCellsAreLeftOutForTexturedOnesOfAFinerGrid) {
    const int w = 120, h = 60;
    std::vector<std::uint8_t> luma(static_cast<std::size_t>(w) * h, 100);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w / 2; ++x) luma[static_cast<std::size_t>(y) * w + x] = (x * 37 + y * 91) % 251;
    const TargetGrid g = grid_targets(luma.data(), w, h, 16, 16, 4);
    ASSERT_EQ(g.boxes.size(), 4u);
    EXPECT_EQ(g.textured, 4);
    EXPECT_GT(g.cols * g.rows, 4) << "a finer grid than 4 cells";
    for (const BoxF& b : g.boxes) EXPECT_LE(b.x + b.width, w / 2 + 4) << b.x;
}

TEST(TargetGrid, MoreBoxesThanFitOverlapInsideTheFrame) {
    const int w = 100, h = 50;
    std::vector<std::uint8_t> luma(static_cast<std::size_t>(w) * h);
    for (std::size_t i = 0; i < luma.size(); ++i) luma[i] = static_cast<std::uint8_t>(i * 7919 % 256);
    const TargetGrid g = grid_targets(luma.data(), w, h, 20, 20, 50);
    ASSERT_EQ(g.boxes.size(), 50u);
    EXPECT_GE(g.cols * g.rows, 50);
    for (const BoxF& b : g.boxes) {
        EXPECT_GE(b.x, 0);
        EXPECT_GE(b.y, 0);
        EXPECT_LE(b.x + b.width, w);
        EXPECT_LE(b.y + b.height, h);
    }
    EXPECT_TRUE(grid_targets(luma.data(), w, h, 120, 20, 1).boxes.empty()) << "wider than the frame";
    EXPECT_TRUE(grid_targets(luma.data(), w, h, 20, 20, 0).boxes.empty());
}

}  // namespace
}  // namespace corrtrack
