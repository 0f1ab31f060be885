// The GUI's full-frame A/B (render/ab_compare.h): two CPU kernels over a whole synthetic frame
// give maps of the frame's size and agree within float noise; cpu_ref is refused where it
// would stall the GUI; the maps shown are max-pooled; and under Xvfb the panel shows both maps
// with their largest difference (`gui --ab A,B --ab-full SIDE`). Part of test_gui.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "app/gpu/gpu_context.h"
#include "render/ab_compare.h"
#include "render/colormap.h"
#include "tests/support/gui_harness.h"
#include "tests/support/run_cli.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

struct Frame8 {
    int width = 0, height = 0;
    std::vector<std::uint8_t> luma;
    ImageView view() const { return {luma.data(), width, height, static_cast<std::size_t>(width), MemorySpace::kHost}; }
};

Frame8 synthetic_frame(int width, int height) {
    SyntheticClipSpec spec;
    spec.width = width;
    spec.height = height;
    const SyntheticScene scene(spec);
    Frame8 f{width, height, {}};
    scene.render(0, f.luma);
    return f;
}

float max_abs_diff(const MapView& a, const MapView& b) {
    float d = 0;
    for (int y = 0; y < a.height; ++y)
        for (int x = 0; x < a.width; ++x) d = std::max(d, std::fabs(a.row(y)[x] - b.row(y)[x]));
    return d;
}

TEST(GuiAb, FullFrameCpuRefAgainstCpuFast) {
    const Frame8 f = synthetic_frame(160, 120);
    const GpuContext gpu;
    AbCompare ab(gpu);
    std::string error;
    ASSERT_TRUE(ab.set_kernels("cpu_ref", "cpu_fast", &error)) << error;
    // 16x16 (cpu_fast's direct sums) and 64x64 (its FFT numerator), each cut from the frame, so
    // both maps peak at 1 where the template was cut.
    for (int side : {16, 64}) {
        ASSERT_TRUE(ab.run_full_frame(f.view(), 80, 60, side, &error)) << side << ": " << error;
        EXPECT_TRUE(ab.full_frame());
        for (int i = 0; i < 2; ++i) {
            EXPECT_EQ(ab.map(i).width, 160 - side + 1) << side;
            EXPECT_EQ(ab.map(i).height, 120 - side + 1) << side;
        }
        const Rect t = ab.templ_rect();
        EXPECT_EQ(t.x, 80 - side / 2);
        EXPECT_EQ(t.y, 60 - side / 2);
        EXPECT_EQ(t.width, side);
        EXPECT_EQ(ab.max_abs_diff(), max_abs_diff(ab.map(0), ab.map(1))) << side;
        EXPECT_LE(ab.max_abs_diff(), 1e-4f) << side;
        EXPECT_TRUE(ab.peaks_agree()) << side;
        EXPECT_EQ(ab.peak(0).x, t.x) << side;
        EXPECT_EQ(ab.peak(0).y, t.y) << side;
        EXPECT_NEAR(ab.peak(1).score, 1.0f, 1e-4f) << side;
        // Small maps are shown as they are.
        EXPECT_EQ(ab.view_factor(), 1);
        EXPECT_EQ(ab.view_map(0).data, ab.map(0).data);
        // Both kernels timed at least once, at most kFullFrameRuns times; the ratio is theirs.
        EXPECT_GE(ab.samples(), 1);
        EXPECT_LE(ab.samples(), AbCompare::kFullFrameRuns);
        EXPECT_GT(ab.median_ms(0), 0);
        EXPECT_GT(ab.median_ms(1), 0);
        EXPECT_NEAR(ab.median_ratio(), ab.median_ms(0) / ab.median_ms(1), 1e-9);
    }
    // A template side larger than the frame is clipped to it: one position.
    ASSERT_TRUE(ab.run_full_frame(f.view(), 0, 0, 128, &error)) << error;
    EXPECT_EQ(ab.map(0).width, 160 - 128 + 1);
    EXPECT_EQ(ab.map(0).height, 1);
    // The window scope still works after the full frame, on its own samples.
    ASSERT_TRUE(ab.run(f.view(), BoxF{40, 30, 80, 60}, BoxF{60, 45, 20, 20}, &error)) << error;
    EXPECT_FALSE(ab.full_frame());
    EXPECT_EQ(ab.map(0).width, 61);
    EXPECT_EQ(ab.samples(), 1);
}

TEST(GuiAb, FullFrameRefusesCpuRefWhereItWouldStallAndPoolsLargeMaps) {
    const Frame8 f = synthetic_frame(1100, 300);
    const GpuContext gpu;
    AbCompare ab(gpu);
    std::string error;
    ASSERT_TRUE(ab.set_kernels("cpu_fast", "cpu_ref", &error)) << error;
    // 1037 x 237 positions x 64 x 64 = 1.0e9 multiply-adds: over kMaxCpuRefMacs.
    EXPECT_FALSE(ab.run_full_frame(f.view(), 550, 150, 64, &error));
    EXPECT_NE(error.find("B: cpu_ref is brute force"), std::string::npos) << error;

    ASSERT_TRUE(ab.set_kernels("cpu_fast", "cpu_fast", &error)) << error;
    ASSERT_TRUE(ab.run_full_frame(f.view(), 550, 150, 64, &error)) << error;
    EXPECT_EQ(ab.max_abs_diff(), 0.0f) << "one kernel against itself";
    // 1037 wide: pooled by 3 to 346 x 79 texels (kViewSide 512).
    ASSERT_EQ(ab.view_factor(), 3);
    const MapView m = ab.map(0), v = ab.view_map(0);
    EXPECT_EQ(v.width, 346);
    EXPECT_EQ(v.height, 79);
    for (int by : {0, 40, 78})
        for (int bx : {0, 100, 345}) {
            float want = -INFINITY;
            for (int y = by * 3; y < std::min(m.height, by * 3 + 3); ++y)
                for (int x = bx * 3; x < std::min(m.width, bx * 3 + 3); ++x) want = std::max(want, m.row(y)[x]);
            EXPECT_EQ(v.row(by)[bx], want) << bx << "," << by;
        }
}

TEST(GuiAb, DownscaleMaxKeepsEachBlocksLargest) {
    const std::vector<float> map = {0,  1,  2, 3, 4,   //
                                    5,  9,  0, 0, -1,  //
                                    -2, -3, 7, 0, 8};
    std::vector<float> out;
    const MapView v = downscale_max({const_cast<float*>(map.data()), 5, 3, 5}, 2, &out);
    ASSERT_EQ(v.width, 3);
    ASSERT_EQ(v.height, 2);
    EXPECT_EQ(std::vector<float>(out.begin(), out.begin() + 6), (std::vector<float>{9, 3, 4, -2, 7, 8}));
    const float* before = out.data();
    downscale_max({const_cast<float*>(map.data()), 5, 3, 5}, 2, &out);
    EXPECT_EQ(out.data(), before) << "same size: no new allocation";
}

// The whole GUI under Xvfb: the A/B panel open on the full frame of a synthetic clip, cpu_ref
// against cpu_fast; --print-box reports the comparison and the screenshot shows both maps.
TEST_F(Gui, FullFrameAbShowsBothMapsAndTheirDifference) {
    REQUIRE_DISPLAY();
    SyntheticClipSpec spec = small_spec(4);
    spec.width = 160;
    spec.height = 120;
    std::string error;
    const std::string clip = file("ab.mp4"), png = file("ab.png");
    const auto truth = write_synthetic_clip(clip, spec, &error);
    ASSERT_FALSE(truth.empty()) << error;
    const TruthBox& b = truth[0];
    std::ostringstream box;
    box << b.x << "," << b.y << "," << b.w << "," << b.h;
    const auto r = test::run_cli("gui " + clip + " --box " + box.str() +
                                     " --kernel cpu_fast --heatmap off --ab cpu_ref,cpu_fast --ab-full 16 "
                                     "--screenshot " +
                                     png + " --frames 2 --window 1280x1100 --print-box",
                                 dir_->path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto at = r.out.find("\nab ");
    ASSERT_NE(at, std::string::npos) << r.out;
    char a[32] = {}, bk[32] = {}, scope[16] = {};
    int mw = 0, mh = 0, view = 0, agree = 0, runs = 0;
    double diff = -1, ms_a = 0, ms_b = 0, ratio = 0;
    ASSERT_EQ(std::sscanf(r.out.c_str() + at + 1,
                          "ab %31s %31s scope %15s map %d %d view %d max_diff %lf peaks_agree %d ms %lf %lf ratio %lf "
                          "runs %d",
                          a, bk, scope, &mw, &mh, &view, &diff, &agree, &ms_a, &ms_b, &ratio, &runs),
              12)
        << r.out;
    EXPECT_STREQ(a, "cpu_ref");
    EXPECT_STREQ(bk, "cpu_fast");
    EXPECT_STREQ(scope, "full");
    EXPECT_EQ(mw, 160 - 16 + 1);
    EXPECT_EQ(mh, 120 - 16 + 1);
    EXPECT_EQ(view, 1);
    EXPECT_GE(diff, 0.0);
    EXPECT_LE(diff, 1e-4);
    EXPECT_EQ(agree, 1);
    EXPECT_GE(runs, 1);
    EXPECT_GT(ms_a, 0);
    EXPECT_NEAR(ratio, ms_a / ms_b, 1e-4 * ratio);

    // With the video's own heatmap off, turbo colours in the panel column are the two A/B maps
    // (each about half the column wide).
    test::Image img;
    ASSERT_TRUE(img.load(png)) << png;
    const test::Printed p = test::parse_printed(r.out);
    const ColormapLut& lut = colormap_lut(Colormap::kTurbo);
    long turbo = 0;
    for (int y = 0; y < img.height; ++y)
        for (int x = static_cast<int>(p.panel[0]); x < img.width; ++x) {
            const unsigned char* c = img.at(x, y);
            if (std::max({c[0], c[1], c[2]}) - std::min({c[0], c[1], c[2]}) < 80) continue;  // greys, dim UI
            int best = 1 << 30;
            for (const auto& e : lut) best = std::min(best, test::dist2(c, e[0], e[1], e[2]));
            turbo += best < 12 * 12;
        }
    const double map_px = 2 * (p.panel[2] / 2 - 10) * (p.panel[2] / 2 - 10) * mh / mw;
    std::printf("turbo pixels in the panel: %ld (two maps of about %.0f px)\n", turbo, map_px);
    EXPECT_GT(turbo, 0.5 * map_px);
}

TEST_F(Gui, AbOptionsNeedTwoAvailableKernels) {
    for (const char* args :
         {"--ab cpu_ref", "--ab cpu_ref,nope", "--ab-full 16", "--ab cpu_ref,cpu_fast --ab-full 20"}) {
        const auto r =
            test::run_cli("gui " + test::kSample + " " + args + " --screenshot " + file("x.png"), dir_->path());
        EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    }
}

}  // namespace
}  // namespace corrtrack
