// The desktop GUI under a virtual X server (Xvfb + Mesa software GL): the screenshot mode's PNG
// shows the tracked box where the tracker says, the heatmap in the colormap's colours and the
// panels; bad input fails cleanly; --decode nvdec draws what --decode sw draws. The test_gui
// binary also holds test_gui_xdotool.cpp (a user's drag, step, kernel switch and Q) and
// test_gui_parts.cpp (the tracker and the export the GUI drives). Built only with the GUI;
// starts its own Xvfb when $DISPLAY is unset (tests/support/gui_harness.h).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "corrtrack/correlator.h"
#include "render/colormap.h"
#include "tests/support/gui_harness.h"
#include "tests/support/run_cli.h"

namespace corrtrack {
namespace {

using test::dist2;
using test::heatmap_hits;
using test::Image;
using test::kSample;
using test::kSampleBox;
using test::outline_hits;
using test::parse_printed;
using test::Printed;
using test::read_csv;
using test::read_log;

TEST_F(Gui, ScreenshotShowsTrackedBoxHeatmapAndPanels) {
    REQUIRE_DISPLAY();
    const std::string png = file("shot.png"), csv = file("gui.csv");
    const auto r = test::run_cli("gui " + kSample + " --box " + kSampleBox + " --kernel cpu_fast --screenshot " + png +
                                     " --frames 20 --window 1280x720 --print-box --csv " + csv,
                                 dir_->path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_FALSE(r.signalled);  // run_cli's 600 s limit is the hang guard; no bound on the speed
    const Printed p = parse_printed(r.out);
    EXPECT_EQ(p.frame, 19);
    ASSERT_EQ(p.box.count(0), 1u) << r.out;
    ASSERT_EQ(p.heatmap.count(0), 1u) << r.out;

    Image img;
    ASSERT_TRUE(img.load(png)) << png;
    EXPECT_EQ(img.width, 1280);
    EXPECT_EQ(img.height, 720);
    EXPECT_EQ(p.window_w, 1280);
    EXPECT_EQ(p.window_h, 720);

    // The box colour (target 0: 60,255,90) lies along the outline where the tracker puts the
    // box, and not along the same outline moved by 12 frame pixels.
    auto moved = p.box.at(0);
    moved[0] += 12;
    moved[1] += 12;
    const double on_box = outline_hits(img, p, p.box.at(0), 60, 255, 90),
                 off_box = outline_hits(img, p, moved, 60, 255, 90);
    std::printf("box colour along the outline: %.2f (moved 12 px: %.2f)\n", on_box, off_box);
    EXPECT_GT(on_box, 0.9);
    EXPECT_LT(off_box, 0.5);

    // The printed box is frame 19's row of the CSV, and the CSV is what `track` writes.
    const auto rows = read_csv(csv);
    ASSERT_EQ(rows.size(), 20u);
    EXPECT_NEAR(rows.back().x, p.box.at(0)[0], 0.01);
    EXPECT_NEAR(rows.back().y, p.box.at(0)[1], 0.01);
    const std::string track_csv = file("track.csv");
    const auto t = test::run_cli(
        "track " + kSample + " --box " + kSampleBox + " --kernel cpu_fast --frames 20 -q --csv " + track_csv,
        dir_->path());
    ASSERT_EQ(t.exit_code, 0) << t.err;
    const auto track_rows = read_csv(track_csv);
    ASSERT_EQ(track_rows.size(), rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        EXPECT_EQ(rows[i].frame, track_rows[i].frame);
        EXPECT_DOUBLE_EQ(rows[i].x, track_rows[i].x) << "frame " << rows[i].frame;
        EXPECT_DOUBLE_EQ(rows[i].y, track_rows[i].y) << "frame " << rows[i].frame;
    }

    // Panels: ImGui's dark style, window background (15,15,15), collapsing headers
    // (30,56,87) and the active title bar (41,74,122) in the column on the right.
    long bg = 0, header = 0, title = 0, total = 0, video_ui = 0;
    for (int y = 100; y < 600; ++y)
        for (int x = 100; x < 700; ++x) video_ui += dist2(img.at(x, y), 41, 74, 122) <= 12;
    for (int y = 0; y < img.height; ++y)
        for (int x = static_cast<int>(p.panel[0]); x < img.width; ++x) {
            ++total;
            const unsigned char* c = img.at(x, y);
            bg += dist2(c, 15, 15, 15) <= 12;
            header += dist2(c, 30, 56, 87) <= 12;
            title += y < 20 && dist2(c, 41, 74, 122) <= 12;
        }
    std::printf("panel: %.2f background, %.3f headers, %ld title pixels; video area: %ld title-coloured\n",
                static_cast<double>(bg) / total, static_cast<double>(header) / total, title, video_ui);
    EXPECT_GT(bg, total / 5) << "panel background";
    EXPECT_GT(header, total / 100) << "panel headers";
    EXPECT_GT(title, (img.width - p.panel[0]) * 10) << "panel title bar";
    EXPECT_LT(video_ui, 500) << "panel colours in the video";
}

TEST_F(Gui, HeatmapUsesTheChosenColormap) {
    REQUIRE_DISPLAY();
    // Opaque heatmap, so its pixels are the colormap's own colours; with the heatmap off the
    // same pixels are video and the check must fail there.
    struct Case {
        const char* args;
        Colormap colormap;
        bool expect;
    } cases[] = {{"--colormap turbo --blend 1", Colormap::kTurbo, true},
                 {"--colormap viridis --blend 1", Colormap::kViridis, true},
                 {"--heatmap off", Colormap::kTurbo, false}};
    for (const Case& c : cases) {
        const std::string png = file("heat.png");
        const auto r = test::run_cli("gui " + kSample + " --box " + kSampleBox + " --kernel cpu_fast --screenshot " +
                                         png + " --frames 12 --print-box " + c.args,
                                     dir_->path());
        ASSERT_EQ(r.exit_code, 0) << c.args << ": " << r.err;
        const Printed p = parse_printed(r.out);
        ASSERT_EQ(p.heatmap.count(0), 1u) << r.out;
        Image img;
        ASSERT_TRUE(img.load(png));
        const double hits = heatmap_hits(img, p, 0, c.colormap);
        std::printf("%s: %.2f of the heatmap's pixels in %s colours\n", c.args, hits, to_string(c.colormap));
        if (c.expect)
            EXPECT_GT(hits, 0.95) << c.args;
        else
            EXPECT_LT(hits, 0.5) << c.args;
    }
}

TEST_F(Gui, BadInputFailsCleanlyAndBareInputPicksGuiOrTrack) {
    REQUIRE_DISPLAY();
    auto r =
        test::run_cli("gui " + file("missing.mp4") + " --screenshot " + file("x.png") + " --frames 1", dir_->path());
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_FALSE(r.signalled);
    EXPECT_NE(r.err.find("missing.mp4"), std::string::npos) << r.err;
    r = test::run_cli("gui --window 10x10", dir_->path());
    EXPECT_EQ(r.exit_code, 2) << r.err;

    // `corrtrack INPUT` with a display: the GUI (which knows --screenshot)...
    r = test::run_cli(kSample + " --box " + kSampleBox + " --screenshot " + file("bare.png") + " --frames 2",
                      dir_->path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Image img;
    EXPECT_TRUE(img.load(file("bare.png")));
    // ...and without one: the headless tracker.
    const std::string cmd = std::string("env -u DISPLAY -u WAYLAND_DISPLAY ") + CORRTRACK_BINARY + " " + kSample +
                            " --box " + kSampleBox + " --frames 3 -q --csv " + file("bare.csv") + " >/dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    EXPECT_EQ(read_csv(file("bare.csv")).size(), 3u);
}

// --decode nvdec in the GUI. Without a GPU it falls back to software decode, says why once, and
// the screenshot's video area is pixel for pixel the one of --decode sw (same frames, same
// boxes); with a GPU the run must work too (NVDEC frames, interop or the upload path under
// Xvfb's Mesa GL) and look the same within decoder rounding.
TEST_F(Gui, DecodeNvdecScreenshotMatchesSoftwareDecode) {
    REQUIRE_DISPLAY();
    auto shot = [&](const std::string& decode, const std::string& png, const std::string& log) {
        return test::run_cli("gui " + kSample + " --box " + kSampleBox + " --kernel cpu_fast --decode " + decode +
                                 " --screenshot " + png + " --frames 12 --window 1280x720 --print-box --log " + log +
                                 " --csv " + file("decode_" + decode + ".csv"),
                             dir_->path());
    };
    const auto sw = shot("sw", file("sw.png"), file("sw.log"));
    ASSERT_EQ(sw.exit_code, 0) << sw.err;
    const auto nv = shot("nvdec", file("nvdec.png"), file("nvdec.log"));
    ASSERT_EQ(nv.exit_code, 0) << nv.err;
    ASSERT_FALSE(nv.signalled);
    const Printed ps = parse_printed(sw.out), pn = parse_printed(nv.out);
    EXPECT_EQ(pn.frame, 11);
    ASSERT_EQ(pn.box.count(0), 1u) << nv.out;
    EXPECT_NE(sw.out.find("decode sw"), std::string::npos) << sw.out;

    auto open_event = [](const std::string& log) {
        for (const auto& e : read_log(log))
            if (e.value("event", "") == "open") return e;
        return nlohmann::json{};
    };
    const nlohmann::json nv_open = open_event(file("nvdec.log"));
    ASSERT_FALSE(nv_open.is_null());
    EXPECT_EQ(open_event(file("sw.log"))["decode"], "sw");
    if (!cuda_available()) {
        EXPECT_EQ(nv_open["decode"], "sw") << nv_open.dump();
        EXPECT_NE(nv_open["decode_note"].get<std::string>().find("NVDEC"), std::string::npos) << nv_open.dump();
        EXPECT_NE(nv.err.find("NVDEC"), std::string::npos) << "the fallback is announced: " << nv.err;
        EXPECT_NE(nv.out.find("decode sw"), std::string::npos) << nv.out;
        EXPECT_NE(nv.out.find("frames_to_gl texture upload"), std::string::npos) << nv.out;
    } else {
        std::printf("with a GPU: --decode nvdec ran as %s; %s\n", nv_open["decode"].get<std::string>().c_str(),
                    nv.out.substr(nv.out.find("frames_to_gl")).c_str());
    }

    // Same boxes frame for frame: the same decoder without a GPU; with one, NVDEC's raw Y plane
    // (limited range, where software GRAY8 expands it) moves boxes by well under a pixel.
    const double tol = cuda_available() ? 1.0 : 0.0;
    const auto rows_sw = read_csv(file("decode_sw.csv")), rows_nv = read_csv(file("decode_nvdec.csv"));
    ASSERT_EQ(rows_nv.size(), 12u);
    ASSERT_EQ(rows_nv.size(), rows_sw.size());
    for (std::size_t i = 0; i < rows_sw.size(); ++i) {
        EXPECT_NEAR(rows_nv[i].x, rows_sw[i].x, tol) << "frame " << i;
        EXPECT_NEAR(rows_nv[i].y, rows_sw[i].y, tol) << "frame " << i;
    }

    // The video area (left of the panel, above the status bar) of both screenshots.
    Image a, b;
    ASSERT_TRUE(a.load(file("sw.png")));
    ASSERT_TRUE(b.load(file("nvdec.png")));
    ASSERT_EQ(a.width, b.width);
    ASSERT_EQ(a.height, b.height);
    EXPECT_EQ(ps.x0, pn.x0);
    EXPECT_EQ(ps.scale, pn.scale);
    long differ = 0, total = 0;
    double sum = 0;
    for (int y = 0; y < a.height - 40; ++y)
        for (int x = 0; x < static_cast<int>(pn.panel[0]); ++x) {
            ++total;
            const unsigned char *p = a.at(x, y), *q = b.at(x, y);
            const int d = std::abs(p[0] - q[0]) + std::abs(p[1] - q[1]) + std::abs(p[2] - q[2]);
            differ += d != 0;
            sum += d / 3.0;
        }
    std::printf("video area: %ld of %ld pixels differ, mean |diff| %.3f\n", differ, total, sum / total);
    if (!cuda_available())
        EXPECT_EQ(differ, 0) << "software fallback must show exactly the software decode's frame";
    else
        EXPECT_LT(sum / total, 3.0);
    EXPECT_GT(outline_hits(b, pn, pn.box.at(0), 60, 255, 90), 0.9) << "the box in the NVDEC run's screenshot";

    // A bad mode is refused before any window opens, as `track` refuses it.
    const auto bad = test::run_cli("gui --decode gpu --screenshot " + file("bad.png"), dir_->path());
    const auto bad_track = test::run_cli("track " + kSample + " --decode gpu", dir_->path());
    EXPECT_NE(bad.exit_code, 0);
    EXPECT_FALSE(bad.signalled);
    EXPECT_EQ(bad.exit_code, bad_track.exit_code) << bad.err;
    EXPECT_NE(bad.err.find("sw, nvdec or auto"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace corrtrack
