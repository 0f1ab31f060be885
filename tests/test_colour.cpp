// The colour cue (app/track/colour_model.h): the model's likelihoods (against a brute-force
// count) and how it steps aside on grey frames, the score map against a brute-force mean, a
// tracker that tells two exact luma look-alikes apart by their colour where the NCC alone
// takes the nearer one, and the extent head that sizes the reported box by the target's
// colours.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "app/track/colour_model.h"
#include "app/track/tracker.h"

namespace corrtrack {
namespace {

// A YUV 4:2:0 frame in three packed planes.
struct YuvFrame {
    int w, h;
    std::vector<std::uint8_t> y, u, v;
    YuvFrame(int width, int height, std::uint8_t luma, std::uint8_t cu, std::uint8_t cv)
        : w(width),
          h(height),
          y(static_cast<std::size_t>(width) * height, luma),
          u(static_cast<std::size_t>((width + 1) / 2) * ((height + 1) / 2), cu),
          v(u.size(), cv) {}
    int cw() const { return (w + 1) / 2; }
    void fill_chroma(int x0, int y0, int x1, int y1, std::uint8_t cu, std::uint8_t cv) {
        for (int y = y0 / 2; y < (y1 + 1) / 2; ++y)
            for (int x = x0 / 2; x < (x1 + 1) / 2; ++x) {
                u[static_cast<std::size_t>(y) * cw() + x] = cu;
                v[static_cast<std::size_t>(y) * cw() + x] = cv;
            }
    }
    FrameView view() const {
        const int ch = (h + 1) / 2;
        return {{y.data(), w, h, static_cast<std::size_t>(w)},
                {u.data(), cw(), ch, static_cast<std::size_t>(cw())},
                {v.data(), cw(), ch, static_cast<std::size_t>(cw())}};
    }
};

constexpr std::uint8_t kRedU = 90, kRedV = 200, kGreenU = 60, kGreenV = 60;

TEST(ColourModel, TargetColoursLikelyBackgroundColoursNot) {
    YuvFrame f(120, 90, 100, kGreenU, kGreenV);
    f.fill_chroma(40, 30, 80, 60, kRedU, kRedV);
    ColourModel m;
    m.learn(f.view(), {40, 30, 40, 30}, 1.0f);
    ASSERT_TRUE(m.ready());
    const ColourCue cue = m.cue(0.5f);
    ASSERT_NE(cue.likelihood, nullptr);
    EXPECT_FLOAT_EQ(cue.weight, 0.5f);  // the colours separate fully: the largest weight
    EXPECT_GT(cue.likelihood[colour_bin(100, kRedU, kRedV)], 0.99f);
    EXPECT_LT(cue.likelihood[colour_bin(100, kGreenU, kGreenV)], 0.01f);
    // A bin seen in neither region stays undecided.
    EXPECT_NEAR(cue.likelihood[colour_bin(250, 128, 128)], 0.5f, 1e-6f);
}

TEST(ColourModel, StepsAsideWhereTheBoxLooksLikeItsSurroundings) {
    YuvFrame f(120, 90, 100, kGreenU, kGreenV);
    f.fill_chroma(0, 0, 60, 90, kRedU, kRedV);  // half red, half green, the box across both
    ColourModel m;
    m.learn(f.view(), {30, 30, 60, 30}, 1.0f);
    ASSERT_TRUE(m.ready());
    EXPECT_LT(m.cue(0.5f).weight, 0.2f);
}

TEST(ColourModel, GreyFramesHaveNoModel) {
    YuvFrame f(64, 48, 100, 128, 128);
    ColourModel m;
    m.learn(f.view(), {10, 10, 20, 20}, 1.0f);  // flat chroma: a grey source
    EXPECT_FALSE(m.ready());
    m.learn(FrameView(f.view().luma), {10, 10, 20, 20}, 1.0f);  // no chroma planes
    EXPECT_FALSE(m.ready());
    EXPECT_EQ(m.cue(0.5f).likelihood, nullptr);
}

// learn counts each pixel of its sampling grid once, in the box or in its ring: the
// likelihoods equal a brute-force count over the same grid (its documented constants: about
// 6000 samples a region, a ring of half the box's mean side, a prior of 1e-3), to the bit.
// Blocks of one colour make runs of one bin, and the boxes reach past the frame's edges.
TEST(ColourModel, LearnCountsEveryGridPixelOnce) {
    std::mt19937 rng(11);
    YuvFrame f(203, 151, 0, 0, 0);
    for (int y = 0; y < f.h; ++y)
        for (int x = 0; x < f.w; ++x)
            f.y[static_cast<std::size_t>(y) * f.w + x] = static_cast<std::uint8_t>(((x / 7) * 37 + (y / 5) * 91) & 255);
    for (auto* p : {&f.u, &f.v})
        for (std::size_t i = 0; i < p->size(); ++i)
            (*p)[i] = static_cast<std::uint8_t>(rng() % 4 == 0 ? rng() : i / 13);
    const FrameView fv = f.view();
    for (const BoxF box :
         {BoxF{60, 40, 30, 50}, BoxF{-10, -6, 40, 30}, BoxF{150, 100, 70, 60}, BoxF{20, 10, 150, 120}}) {
        ColourModel m;
        m.learn(fv, box, 1.0f);
        ASSERT_TRUE(m.ready());
        const double margin = 0.5 * (box.width + box.height) / 2;
        auto cl = [](double v, int hi) { return std::clamp(static_cast<int>(std::lround(v)), 0, hi); };
        const int ix0 = cl(box.x, f.w), iy0 = cl(box.y, f.h), ix1 = cl(box.x + box.width, f.w),
                  iy1 = cl(box.y + box.height, f.h);
        const int ox0 = cl(box.x - margin, f.w), oy0 = cl(box.y - margin, f.h),
                  ox1 = cl(box.x + box.width + margin, f.w), oy1 = cl(box.y + box.height + margin, f.h);
        const double area = static_cast<double>(ox1 - ox0) * (oy1 - oy0);
        const int step = std::max(1, static_cast<int>(std::sqrt(area / 6000)));
        std::vector<double> fg(kColourBins), bg(kColourBins);
        double nf = 0, nb = 0;
        for (int y = oy0; y < oy1; y += step)
            for (int x = ox0; x < ox1; x += step) {
                const std::size_t c = static_cast<std::size_t>(y / 2) * f.cw() + x / 2;
                const int b = colour_bin(f.y[static_cast<std::size_t>(y) * f.w + x], f.u[c], f.v[c]);
                const bool in = x >= ix0 && x < ix1 && y >= iy0 && y < iy1;
                (in ? fg : bg)[b] += 1;
                (in ? nf : nb) += 1;
            }
        const ColourCue cue = m.cue(1.0f);
        ASSERT_NE(cue.likelihood, nullptr) << "box at " << box.x << "," << box.y;
        int differ = 0;
        for (int b = 0; b < kColourBins; ++b) {
            const float pf = static_cast<float>(fg[b] / nf), pb = static_cast<float>(bg[b] / nb);
            const float want = (pf + 1e-3f) / (pf + pb + 2e-3f);
            differ += cue.likelihood[b] != want;
        }
        EXPECT_EQ(differ, 0) << "box at " << box.x << "," << box.y << ", grid step " << step;
    }
}

// A 40 x 40 red square on green, the model learnt on its true box: boxes too small, too large
// and right about the same centre get the factor that makes them 40 px (the nearest of the
// steps of 0.05 in log), and the right one keeps its size.
TEST(ColourModel, ExtentIsTheBoxTheTargetColoursFill) {
    YuvFrame f(200, 160, 100, kGreenU, kGreenV);
    f.fill_chroma(80, 60, 120, 100, kRedU, kRedV);
    ColourModel m;
    m.learn(f.view(), {80, 60, 40, 40}, 1.0f);
    ASSERT_TRUE(m.ready());
    std::vector<double> scratch;
    EXPECT_EQ(m.extent_log_scale(f.view(), {80, 60, 40, 40}, scratch), 0.0);
    for (const double side : {30.0, 34.0, 46.0, 54.0}) {
        const double l = m.extent_log_scale(f.view(), {100 - side / 2, 80 - side / 2, side, side}, scratch);
        EXPECT_NEAR(side * std::exp(l), 40.0, 1.0) << "box side " << side << ", log factor " << l;
    }
    // Beyond the reach (e^0.3 either way) it goes as far as the grid tells apart: a 20 px box
    // grows to 26 or 27 px, both all red (a tie goes to the nearer factor, 0.25).
    EXPECT_GE(m.extent_log_scale(f.view(), {90, 70, 20, 20}, scratch), 0.25);
}

TEST(ColourModel, ExtentHasNoOpinionWithoutSeparation) {
    YuvFrame f(120, 90, 100, kGreenU, kGreenV);
    f.fill_chroma(0, 0, 60, 90, kRedU, kRedV);  // the box across both halves
    ColourModel m;
    m.learn(f.view(), {30, 30, 60, 30}, 1.0f);
    std::vector<double> scratch;
    EXPECT_TRUE(std::isnan(m.extent_log_scale(f.view(), {30, 30, 60, 30}, scratch)));
    YuvFrame grey(120, 90, 100, 128, 128);
    ColourModel none;
    none.learn(grey.view(), {30, 30, 40, 30}, 1.0f);
    EXPECT_TRUE(std::isnan(none.extent_log_scale(grey.view(), {30, 30, 40, 30}, scratch)));
}

// A textured red square of 40 px on a textured green ground, still, with a first box of 30 px
// on its centre: the extent head grows the reported box towards 40 px at its rate (60 frames
// at 0.05: 95% of the way in log), while the tracker's own box, centre and scores stay those of
// a tracker without the head.
TEST(ColourExtent, GrowsTheReportedBoxToTheTargetAndLeavesTheTrackingAlone) {
    std::mt19937 rng(5);
    YuvFrame f(200, 160, 0, kGreenU, kGreenV);
    for (auto& b : f.y) b = static_cast<std::uint8_t>(40 + rng() % 180);
    f.fill_chroma(80, 60, 120, 100, kRedU, kRedV);
    auto run = [&](double extent) {
        TrackerOptions o;
        o.kernel = "cpu_fast";
        o.colour_extent = extent;
        Tracker tracker(o);
        std::string error;
        EXPECT_TRUE(tracker.init(f.view(), {85, 65, 30, 30}, &error)) << error;
        std::vector<TrackResult> out;
        for (int i = 0; i < 60; ++i) out.push_back(tracker.update(f.view()));
        return out;
    };
    const std::vector<TrackResult> off = run(0.0), on = run(0.05);
    ASSERT_EQ(off.size(), on.size());
    for (std::size_t i = 0; i < on.size(); ++i) {
        const BoxF& a = off[i].box;
        const BoxF& b = on[i].box;
        ASSERT_NEAR(a.x + a.width / 2, b.x + b.width / 2, 1e-9) << "frame " << i;
        ASSERT_NEAR(a.y + a.height / 2, b.y + b.height / 2, 1e-9) << "frame " << i;
        ASSERT_EQ(off[i].score, on[i].score) << "frame " << i;
        ASSERT_EQ(off[i].lost, on[i].lost) << "frame " << i;
    }
    EXPECT_NEAR(off.back().box.width, 30.0, 1.0);  // without the head: the first box's size
    const double grown = 30.0 * std::exp(std::log(40.0 / 30.0) * (1 - std::pow(0.95, 60)));
    EXPECT_NEAR(on.back().box.width, grown, 1.0);
    EXPECT_NEAR(on.back().box.height, grown, 1.0);
}

TEST(ColourModel, ScoreMapIsTheBoxMeanOfTheLikelihood) {
    std::mt19937 rng(7);
    YuvFrame f(97, 61, 0, 0, 0);
    for (auto* p : {&f.y, &f.u, &f.v})
        for (auto& b : *p) b = static_cast<std::uint8_t>(rng());
    std::vector<float> lut(kColourBins);
    for (float& l : lut) l = std::uniform_real_distribution<float>(0, 1)(rng);
    const ColourCue cue{lut.data(), 0.5f};
    const FrameView fv = f.view();
    for (double scale : {1.0, 1.5, 2.25}) {
        const Size patch{30, 20}, templ{7, 5};
        const double ox = -3.5, oy = 4.25;  // partly outside the frame: chroma clamps
        std::vector<std::uint8_t> luma(static_cast<std::size_t>(patch.area()));
        for (auto& b : luma) b = static_cast<std::uint8_t>(rng());
        ColourMapScratch scratch;
        const Size out{patch.width - templ.width + 1, patch.height - templ.height + 1};
        std::vector<float> map(static_cast<std::size_t>(out.area()));
        colour_score_map(fv, cue, luma.data(), patch, ox, oy, scale, templ, scratch, map.data());
        auto like = [&](int x, int y) {
            const int cx = std::clamp(static_cast<int>(std::floor(ox + (x + 0.5) * scale)) / 2, 0, fv.u.width - 1);
            const int cy = std::clamp(static_cast<int>(std::floor(oy + (y + 0.5) * scale)) / 2, 0, fv.u.height - 1);
            return lut[colour_bin(luma[static_cast<std::size_t>(y) * patch.width + x], fv.u.row(cy)[cx],
                                  fv.v.row(cy)[cx])];
        };
        for (int y = 0; y < out.height; ++y)
            for (int x = 0; x < out.width; ++x) {
                double sum = 0;
                for (int j = 0; j < templ.height; ++j)
                    for (int i = 0; i < templ.width; ++i) sum += like(x + i, y + j);
                ASSERT_NEAR(map[static_cast<std::size_t>(y) * out.width + x], sum / templ.area(), 1e-5)
                    << "scale " << scale << " at " << x << "," << y;
            }
    }
}

// Two exact luma copies of a textured object, one red (the target), one green. In frame 1
// the green one stands 2 px from where the target was and the target has moved 24 px up:
// the NCC ties and the motion penalty takes the nearer, green one; the colour cue takes the
// red one.
std::vector<BoxF> track_look_alikes(double colour) {
    constexpr int kW = 160, kH = 120, kSide = 24;
    std::mt19937 rng(11);
    std::vector<std::uint8_t> texture(kSide * kSide);
    for (auto& b : texture) b = static_cast<std::uint8_t>(40 + rng() % 180);
    auto render = [&](int rx, int ry, int gx, int gy) {
        YuvFrame f(kW, kH, 128, 128, 128);
        for (auto [x0, y0, cu, cv] : {std::tuple{rx, ry, kRedU, kRedV}, std::tuple{gx, gy, kGreenU, kGreenV}}) {
            for (int y = 0; y < kSide; ++y)
                for (int x = 0; x < kSide; ++x)
                    f.y[static_cast<std::size_t>(y0 + y) * kW + x0 + x] = texture[y * kSide + x];
            f.fill_chroma(x0, y0, x0 + kSide, y0 + kSide, cu, cv);
        }
        return f;
    };
    TrackerOptions o;
    o.kernel = "cpu_fast";
    o.colour = colour;
    o.scales = 1;
    o.search_factor = 4;  // both within reach
    Tracker tracker(o);
    const YuvFrame f0 = render(60, 48, 120, 48);  // green far right
    std::string error;
    EXPECT_TRUE(tracker.init(f0.view(), {60, 48, kSide, kSide}, &error)) << error;
    std::vector<BoxF> boxes;
    const YuvFrame f1 = render(60, 24, 60, 50);  // red 24 px up, green 2 px below the start
    boxes.push_back(tracker.update(f1.view()).box);
    return boxes;
}

TEST(ColourCue, TellsExactLumaLookAlikesApart) {
    const BoxF grey = track_look_alikes(0.0).back();
    EXPECT_NEAR(grey.y, 50, 0.5) << "without colour the nearer look-alike should win (test premise)";
    const BoxF colour = track_look_alikes(0.5).back();
    EXPECT_NEAR(colour.x, 60, 0.5);
    EXPECT_NEAR(colour.y, 24, 0.5);
}

}  // namespace
}  // namespace corrtrack
