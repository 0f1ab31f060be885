// The tracker at the edges of what it accepts: random frame sizes, boxes of any aspect and
// size inside the frame, and options anywhere in the ranges validate() allows. A box is
// either refused with a message or tracked; tracking never throws, and every result is a
// finite box inside the frame. Part of test_tracker.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "app/track/tracker.h"
#include "tests/support/session_setup.h"

namespace corrtrack {
namespace {

// Uniform draws from one seeded engine (the cases are the same on every run).
struct Rng {
    std::mt19937 engine;
    double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(engine); }
    int range(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(engine); }
    bool coin() { return range(0, 1) == 1; }
};

// Blocky noise (a texture every window can lock on to), shifted by (dx, dy) per frame; `flat`
// frames are one grey (every target loses its match and searches the frame).
std::vector<std::uint8_t> scene(Size s, int dx, int dy, bool flat) {
    std::vector<std::uint8_t> p(static_cast<std::size_t>(s.width) * s.height, 128);
    if (flat) return p;
    for (int y = 0; y < s.height; ++y)
        for (int x = 0; x < s.width; ++x) {
            std::uint32_t h = static_cast<std::uint32_t>((x + dx) / 3) * 73856093u ^
                              static_cast<std::uint32_t>((y + dy) / 3) * 19349663u;
            h ^= h >> 13;
            h *= 0x5bd1e995u;
            p[static_cast<std::size_t>(y) * s.width + x] = static_cast<std::uint8_t>(h >> 24);
        }
    return p;
}

TrackerOptions random_options(Rng& r, double max_search_factor = 10.0) {
    TrackerOptions o = test::options_on("cpu_fast");
    o.search_factor = r.uniform(1.0, max_search_factor);
    o.window_speed = r.uniform(0.0, 10.0);
    o.max_template_side = r.range(4, kMaxTemplateSide);
    o.min_template_side = r.range(0, kMaxTemplateSide / 4);
    o.scales = r.range(1, 3);
    o.scale_step = r.uniform(1.0, 2.0);
    o.memory = r.range(0, 4);
    o.gradient = r.coin() ? r.uniform(0.0, 1.0) : 0.0;
    o.anchor = r.uniform(0.0, 1.0);
    o.scale_anchor = r.uniform(0.0, 1.0);
    o.blend_rate = r.uniform(0.0, 1.0);
    o.update_relative = r.uniform(0.0, 1.0);
    o.keyframe_interval = r.range(1, 5);
    o.redetect_budget = r.coin() ? -1 : r.range(0, 200000);
    o.redetect_confirm = r.range(1, 3);
    o.min_box_side = r.uniform(1.0, 64.0);
    o.core = r.uniform(0.3, 1.0);
    return o;
}

TEST(TrackerLimits, AnyAcceptedBoxAndOptionsTrackWithoutThrowing) {
    // Two cases that failed once: a 6x600 box (the default options kept its template 6 px
    // across and 600 along, past the kernels' 256) and a box as tall as the frame (its
    // template's height rounded up, the box grew 0.4 px taller than the frame). Then random ones.
    struct Case {
        Size frame;
        BoxF box;
        int max_template = 0, min_template = 0;  // 0, 0: random options
    };
    std::vector<Case> cases{{{32, 700}, {13, 50, 6, 600}, 32, 12}, {{642, 97}, {259.47, 0.01, 372.18, 96.87}, 256, 10}};
    Rng r{std::mt19937(20261202)};
    for (int k = 0; k < 70; ++k) {
        Size s{r.range(16, 800), 0};
        s.height = r.range(16, std::min(800, 90000 / s.width));
        // Boxes of every shape: thin either way, tiny, the whole frame.
        const double w = std::max(1.0, s.width * std::pow(r.uniform(0.0, 1.0), 2.0));
        const double h = std::max(1.0, s.height * std::pow(r.uniform(0.0, 1.0), 2.0));
        cases.push_back({s, {r.uniform(0.0, s.width - w), r.uniform(0.0, s.height - h), w, h}});
    }
    int tracked = 0, refused = 0;
    for (std::size_t k = 0; k < cases.size(); ++k) {
        const Size s = cases[k].frame;
        const BoxF box = cases[k].box;
        TrackerOptions o = test::options_on("cpu_fast");
        if (cases[k].max_template > 0) {
            o.max_template_side = cases[k].max_template;
            o.min_template_side = cases[k].min_template;
        } else {
            o = random_options(r);
        }
        ASSERT_EQ(validate(o), "") << k;
        MultiTracker tracker(o);
        std::vector<std::uint8_t> first = scene(s, 0, 0, false);
        std::string error;
        const ImageView v0{first.data(), s.width, s.height, static_cast<std::size_t>(s.width)};
        if (tracker.add_target(v0, box, &error) < 0) {
            EXPECT_FALSE(error.empty()) << k;
            ++refused;
            continue;
        }
        ++tracked;
        for (int f = 1; f <= 4; ++f) {
            const std::vector<std::uint8_t> px = scene(s, 2 * f, -f, f == 3);
            const ImageView v{px.data(), s.width, s.height, static_cast<std::size_t>(s.width)};
            std::vector<TrackResult> results;
            ASSERT_NO_THROW(results = tracker.update(v))
                << "case " << k << ": " << s.width << "x" << s.height << " frame, box " << box.width << "x"
                << box.height << ", max/min template " << o.max_template_side << "/" << o.min_template_side;
            ASSERT_EQ(results.size(), 1u);
            const BoxF& b = results[0].box;
            ASSERT_TRUE(std::isfinite(b.x) && std::isfinite(b.y) && std::isfinite(b.width) && std::isfinite(b.height));
            EXPECT_GE(b.x, -1e-6) << k;
            EXPECT_GE(b.y, -1e-6) << k;
            EXPECT_LE(b.x + b.width, s.width + 1e-6) << k;
            EXPECT_LE(b.y + b.height, s.height + 1e-6) << k;
        }
    }
    std::printf("%d boxes tracked, %d refused with a message\n", tracked, refused);
    EXPECT_GT(tracked, 40);
}

// Several targets of any shape in one tracker, one of them twice (the same box added again),
// one removed after the second frame: every frame has one result per remaining target, in
// ids() order, each finite and inside the frame. (Search factors up to 4 keep it quick: a
// frame-sized box with a factor of 9 correlates windows of twice the frame, seconds a frame.)
TEST(TrackerLimits, SeveralTargetsOfAnyShapeTrackTogether) {
    Rng r{std::mt19937(77)};
    int frames = 0;
    for (int k = 0; k < 14; ++k) {
        Size s{r.range(32, 400), 0};
        s.height = r.range(32, std::min(400, 50000 / s.width));
        const TrackerOptions o = random_options(r, 4.0);
        MultiTracker tracker(o);
        const std::vector<std::uint8_t> first = scene(s, 0, 0, false);
        const ImageView v0{first.data(), s.width, s.height, static_cast<std::size_t>(s.width)};
        std::vector<TargetId> ids;
        const int n = r.range(2, 5);
        BoxF last;
        for (int t = 0; t <= n; ++t) {
            const double w = std::max(4.0, s.width * std::pow(r.uniform(0.0, 1.0), 2.0));
            const double h = std::max(4.0, s.height * std::pow(r.uniform(0.0, 1.0), 2.0));
            const BoxF box = t == n ? last : BoxF{r.uniform(0.0, s.width - w), r.uniform(0.0, s.height - h), w, h};
            std::string error;
            const TargetId id = tracker.add_target(v0, box, &error);
            if (id >= 0)
                ids.push_back(id);
            else
                EXPECT_FALSE(error.empty());
            last = box;
        }
        for (int f = 1; f <= 4; ++f) {
            if (f == 3 && !ids.empty()) {
                ASSERT_TRUE(tracker.remove_target(ids.front()));
                ids.erase(ids.begin());
            }
            const std::vector<std::uint8_t> px = scene(s, f, 2 * f, f == 2);
            const ImageView v{px.data(), s.width, s.height, static_cast<std::size_t>(s.width)};
            std::vector<TrackResult> results;
            ASSERT_NO_THROW(results = tracker.update(v)) << "case " << k;
            ASSERT_EQ(results.size(), ids.size()) << k;
            for (std::size_t i = 0; i < results.size(); ++i) {
                const BoxF& b = results[i].box;
                EXPECT_EQ(results[i].id, ids[i]) << k;
                ASSERT_TRUE(std::isfinite(b.x) && std::isfinite(b.y) && std::isfinite(b.width) &&
                            std::isfinite(b.height));
                EXPECT_TRUE(b.x >= -1e-6 && b.y >= -1e-6 && b.x + b.width <= s.width + 1e-6 &&
                            b.y + b.height <= s.height + 1e-6)
                    << "case " << k << " target " << ids[i];
            }
            frames += !ids.empty();
        }
    }
    EXPECT_GT(frames, 40);
}

}  // namespace
}  // namespace corrtrack
