// When the template learns: a target whose look changes while every match runs under the
// fixed bar (update_min_score 0.7, grainy footage) is followed only if the template also
// learns at its relative bar (update_relative: a share of the target's running mean NCC).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "app/track/tracker.h"

namespace corrtrack {
namespace {

constexpr int kW = 160, kH = 128, kSide = 32, kFrames = 90, kMorphFrames = 60;

// Two textures of the target; frame i shows a blend that reaches the second at kMorphFrames,
// with fresh grain over the whole frame (so a frame matches the last at NCC about 0.6).
struct Scene {
    std::vector<float> a, b;
    Scene() {
        std::mt19937 rng(11);
        std::uniform_real_distribution<float> texture(-40.0f, 40.0f);
        a.resize(kSide * kSide);
        b.resize(kSide * kSide);
        for (float& v : a) v = texture(rng);
        for (float& v : b) v = texture(rng);
    }
    static double x0(int i) { return 40 + 0.5 * i; }
    static double y0(int i) { return 40 + 0.3 * i; }
    std::vector<std::uint8_t> frame(int i) const {
        std::mt19937 rng(100 + i);
        std::normal_distribution<float> grain(0.0f, 18.0f);
        const float t = std::min(1.0f, static_cast<float>(i) / kMorphFrames);
        std::vector<std::uint8_t> f(kW * kH);
        const int ox = static_cast<int>(x0(i)), oy = static_cast<int>(y0(i));
        for (int y = 0; y < kH; ++y)
            for (int x = 0; x < kW; ++x) {
                float v = 128 + grain(rng);
                const int tx = x - ox, ty = y - oy;
                if (tx >= 0 && tx < kSide && ty >= 0 && ty < kSide) {
                    const std::size_t k = static_cast<std::size_t>(ty) * kSide + tx;
                    v += (1 - t) * a[k] + t * b[k];
                }
                f[static_cast<std::size_t>(y) * kW + x] = static_cast<std::uint8_t>(std::clamp(v, 0.0f, 255.0f));
            }
        return f;
    }
};

struct TrackRun {
    int lost_late = 0;       // lost frames over the last 20
    double error_late = 0;   // mean centre error over the last 20 (pixels)
    double score_early = 0;  // mean NCC of frames 1-10
};

TrackRun track(double update_relative) {
    TrackerOptions o;
    o.kernel = "cpu_fast";
    o.update_relative = update_relative;
    Tracker tracker(o);
    const Scene scene;
    std::string error;
    TrackRun run;
    for (int i = 0; i < kFrames; ++i) {
        const std::vector<std::uint8_t> f = scene.frame(i);
        const ImageView view{f.data(), kW, kH, static_cast<std::size_t>(kW)};
        if (i == 0) {
            EXPECT_TRUE(tracker.init(view, {Scene::x0(0), Scene::y0(0), kSide, kSide}, &error)) << error;
            continue;
        }
        const TrackResult r = tracker.update(view);
        if (i <= 10) run.score_early += r.score / 10;
        if (i >= kFrames - 20) {
            const double cx = static_cast<int>(Scene::x0(i)) + kSide / 2.0;
            const double cy = static_cast<int>(Scene::y0(i)) + kSide / 2.0;
            run.lost_late += r.lost;
            run.error_late += std::hypot(r.box.cx() - cx, r.box.cy() - cy) / 20;
        }
    }
    return run;
}

TEST(Learning, ARelativeBarFollowsALookThatChangesUnderTheFixedOne) {
    const TrackRun relative = track(0.8);
    const TrackRun fixed = track(0.0);
    std::printf("relative 0.8: early NCC %.3f, late lost %d, error %.2f px; fixed bar: late lost %d, error %.1f px\n",
                relative.score_early, relative.lost_late, relative.error_late, fixed.lost_late, fixed.error_late);
    // The premise: the matches run under the fixed bar from the start.
    EXPECT_LT(relative.score_early, 0.7);
    EXPECT_GT(relative.score_early, 0.4);
    // Learning at 0.8 of the running mean, the template follows the look to the second texture.
    EXPECT_EQ(relative.lost_late, 0);
    EXPECT_LT(relative.error_late, 1.5);
    // With the fixed bar alone the template keeps the first look, which the target no longer
    // has: the box is lost by the end.
    EXPECT_GT(fixed.lost_late, 10);
}

}  // namespace
}  // namespace corrtrack
