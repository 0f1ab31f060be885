// `gui --stats`: the screenshot mode timing every frame it draws. The summary counts the frames
// asked for, draws each, gives positive timings that add up, and names what ran (kernel,
// targets, decode path, GL strings, the A/B result); --stats without --screenshot is refused.
// CORRTRACK_GL_API=egl-device (the GPU host's way round an X server its GL cannot use) draws
// the same UI into an EGL device pbuffer. Part of the test_gui binary (its own Xvfb when
// $DISPLAY is unset).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/gui_harness.h"
#include "tests/support/run_cli.h"

namespace corrtrack {
namespace {

using test::Image;
using test::kSample;
using test::kSampleBox;
using test::outline_hits;
using test::parse_printed;
using test::Printed;

TEST_F(Gui, StatsCountEveryDrawnFrameAndNameWhatRan) {
    REQUIRE_DISPLAY();
    const std::string json = file("stats.json"), png = file("shot.png");
    // Two targets and the full-frame A/B, as the GPU run's step does with 1 and 16 targets.
    const auto r = test::run_cli("gui " + kSample + " --box " + kSampleBox + " --box 400,200,40,60 --kernel cpu_fast" +
                                     " --decode sw --screenshot " + png + " --frames 24 --window 960x600" +
                                     " --ab cpu_fast,cpu_opencv --ab-full 32 --stats " + json,
                                 dir_->path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("GL vendor '"), std::string::npos) << r.err;
    const auto j = nlohmann::json::parse(test::read_text(json));
    std::printf("%s\n", j.dump().c_str());
    EXPECT_EQ(j.at("frames").get<long>(), 24);
    EXPECT_EQ(j.at("drawn").get<long>(), 24);
    const long warmup = j.at("warmup").get<long>(), measured = j.at("measured").get<long>();
    EXPECT_EQ(warmup, 6);  // min(10, 24 / 4)
    EXPECT_EQ(measured, 24 - warmup);
    const double fps = j.at("loop_fps").get<double>(), seconds = j.at("seconds").get<double>();
    EXPECT_GT(fps, 0);
    EXPECT_NEAR(fps, measured / seconds, 1e-6 * fps);
    // Tracking alone is faster than tracking and drawing.
    EXPECT_GT(j.at("track_fps").get<double>(), fps);
    const auto& f = j.at("frame_ms");
    EXPECT_GT(f.at("median").get<double>(), 0);
    EXPECT_LE(f.at("median").get<double>(), f.at("p95").get<double>());
    EXPECT_LE(f.at("p95").get<double>(), f.at("max").get<double>());
    EXPECT_GT(j.at("draw_ms").at("median").get<double>(), 0);
    EXPECT_EQ(j.at("kernel").get<std::string>(), "cpu_fast");
    EXPECT_EQ(j.at("targets").get<int>(), 2);
    EXPECT_EQ(j.at("decode").get<std::string>(), "sw");
    EXPECT_EQ(j.at("frames_to_gl").get<std::string>(), "texture upload");
    EXPECT_FALSE(j.at("gl").at("renderer").get<std::string>().empty());
    EXPECT_EQ(j.at("window"), nlohmann::json({960, 600}));
    EXPECT_EQ(j.at("last_frame").get<long>(), 23);
    const auto& ab = j.at("ab");
    EXPECT_EQ(ab.at("scope").get<std::string>(), "full");
    EXPECT_EQ(ab.at("template").get<int>(), 32);
    EXPECT_TRUE(ab.at("valid").get<bool>()) << ab.dump();
    EXPECT_GT(ab.at("ms_a").get<double>(), 0);
    EXPECT_GT(ab.at("ratio").get<double>(), 0);

    const auto bad = test::run_cli("gui " + kSample + " --stats " + json, dir_->path());
    EXPECT_EQ(bad.exit_code, 2) << bad.err;
    EXPECT_NE(bad.err.find("--stats needs --screenshot"), std::string::npos) << bad.err;
}

TEST_F(Gui, EglDeviceContextDrawsTheWholeUiIntoItsPbuffer) {
    REQUIRE_DISPLAY();
    const std::string json = file("egl.json"), png = file("egl.png");
    setenv("CORRTRACK_GL_API", "egl-device", 1);
    const auto r = test::run_cli("gui " + kSample + " --box " + kSampleBox + " --kernel cpu_fast --screenshot " + png +
                                     " --frames 8 --window 1024x640 --print-box --stats " + json,
                                 dir_->path());
    unsetenv("CORRTRACK_GL_API");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(test::read_text(json));
    EXPECT_EQ(j.at("drawn").get<long>(), 8);
    EXPECT_FALSE(j.at("gl").at("renderer").get<std::string>().empty());
    EXPECT_EQ(j.at("window"), nlohmann::json({1024, 640}));
    // The pbuffer holds the drawn UI: the tracked box's outline where --print-box puts it.
    const Printed p = parse_printed(r.out);
    ASSERT_EQ(p.box.count(0), 1u) << r.out;
    Image img;
    ASSERT_TRUE(img.load(png)) << png;
    EXPECT_EQ(img.width, 1024);
    EXPECT_EQ(img.height, 640);
    EXPECT_GT(outline_hits(img, p, p.box.at(0), 60, 255, 90), 0.9);
}

}  // namespace
}  // namespace corrtrack
