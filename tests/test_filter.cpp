// The correlation filter cue (app/track/correlation_filter.h): where it answers after a shift, what its learning rate keeps, how the two maps' PSRs weigh it, and
// the ranking that moves the chosen position but keeps the NCC as the score.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "app/track/correlation_filter.h"
#include "app/track/search_cues.h"
#include "tests/support/random_image.h"

namespace corrtrack {
namespace {

// A w x h window of `img` with its top-left corner at (x0, y0), packed.
std::vector<std::uint8_t> crop(const test::OwnedImage& img, int x0, int y0, Size s) {
    std::vector<std::uint8_t> out(static_cast<std::size_t>(s.area()));
    for (int y = 0; y < s.height; ++y)
        for (int x = 0; x < s.width; ++x)
            out[static_cast<std::size_t>(y) * s.width + x] =
                img.pixels[static_cast<std::size_t>(y0 + y) * img.width + x0 + x];
    return out;
}

// A smooth texture (a random image summed over 5x5), closer to real footage than white noise.
test::OwnedImage texture(int w, int h, std::uint32_t seed) {
    const test::OwnedImage noise = test::random_image(w, h, seed);
    test::OwnedImage out{w, h, std::vector<std::uint8_t>(noise.pixels.size())};
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            int sum = 0, n = 0;
            for (int dy = -2; dy <= 2; ++dy)
                for (int dx = -2; dx <= 2; ++dx) {
                    const int xx = x + dx, yy = y + dy;
                    if (xx < 0 || yy < 0 || xx >= w || yy >= h) continue;
                    sum += noise.pixels[static_cast<std::size_t>(yy) * w + xx];
                    ++n;
                }
            out.at(x, y) = static_cast<std::uint8_t>(sum / n);
        }
    return out;
}

Rect whole(Size s) { return {0, 0, s.width, s.height}; }

constexpr double kSupport = 0.8;  // the default --filter-support

Peak peak_of(std::vector<float>& map, Size o) {
    return find_peak({map.data(), o.width, o.height, static_cast<std::size_t>(o.width)});
}

TEST(CorrelationFilter, AnswersWhereTheTargetMoved) {
    const test::OwnedImage img = texture(200, 160, 7);
    const Size window{64, 48}, templ{24, 16};
    FilterScratch scratch;
    CorrelationFilter f;
    EXPECT_FALSE(f.ready());
    const std::vector<std::uint8_t> first = crop(img, 60, 50, window);
    f.train(first.data(), window, templ, whole(window), 0.05, kSupport, scratch);
    ASSERT_TRUE(f.ready());
    EXPECT_EQ(f.window(), window);
    const Size o{window.width - templ.width + 1, window.height - templ.height + 1};
    const int cx = (window.width - templ.width) / 2, cy = (window.height - templ.height) / 2;
    std::vector<float> answer(static_cast<std::size_t>(o.area()));
    f.respond(first.data(), whole(window), answer.data(), scratch);
    Peak p = peak_of(answer, o);
    EXPECT_EQ(p.x, cx);
    EXPECT_EQ(p.y, cy);
    EXPECT_GT(p.psr, 10.0f);
    // The window moved 5 left and 3 down: the target now stands 5 right and 3 up in it.
    for (const auto& [dx, dy] : {std::pair{-5, 3}, std::pair{4, -6}, std::pair{-9, -2}}) {
        const std::vector<std::uint8_t> moved = crop(img, 60 + dx, 50 + dy, window);
        f.respond(moved.data(), whole(window), answer.data(), scratch);
        p = peak_of(answer, o);
        EXPECT_EQ(p.x, cx - dx) << dx << "," << dy;
        EXPECT_EQ(p.y, cy - dy) << dx << "," << dy;
    }
}

// A low-contrast target moving 1 px a frame over a static background: the training windows
// are centred on the target, so the background moves through them while the target stays. An
// unconstrained filter also learns that background, which stays where it was in the last window
// when the target moves on, and its answer lags (here by 0.43 px of the 1); constrained to the
// box (--filter-support) it answers where the target went (0.03 px off). Sub-pixel: the
// answer's parabolic peak.
TEST(CorrelationFilter, ConstrainedToTheBoxItFollowsATargetOverAStaticBackground) {
    const test::OwnedImage background = texture(400, 160, 21), target = texture(24, 24, 22);
    const Size window{72, 56}, templ{24, 24};
    const Size o{window.width - templ.width + 1, window.height - templ.height + 1};
    const int cx = (window.width - templ.width) / 2, cy = (window.height - templ.height) / 2;
    // The frame with the target's top-left corner at (x, 60), its contrast 0.4 of the texture's.
    auto frame = [&](int x) {
        test::OwnedImage f = background;
        for (int y = 0; y < templ.height; ++y)
            for (int u = 0; u < templ.width; ++u) {
                const int v = target.pixels[static_cast<std::size_t>(y) * target.width + u];
                f.at(x + u, 60 + y) = static_cast<std::uint8_t>(128 + 2 * (v - 128) / 5);
            }
        return f;
    };
    std::vector<float> answer(static_cast<std::size_t>(o.area()));
    for (const double support : {0.0, kSupport}) {
        FilterScratch scratch;
        CorrelationFilter f;
        int x = 40;
        for (int t = 0; t < 40; ++t, ++x) {
            const std::vector<std::uint8_t> w = crop(frame(x), x - cx, 60 - cy, window);
            f.train(w.data(), window, templ, whole(window), 0.05, support, scratch);
        }
        // The next frame (the target 1 px on), its window where the target was.
        const std::vector<std::uint8_t> next = crop(frame(x), x - 1 - cx, 60 - cy, window);
        f.respond(next.data(), whole(window), answer.data(), scratch);
        const Peak p = peak_of(answer, o);
        ASSERT_EQ(p.y, cy) << support;
        ASSERT_EQ(p.x, cx + 1) << support;
        const float* row = answer.data() + static_cast<std::size_t>(p.y) * o.width;
        const float at = p.x + parabolic_offset(row[p.x - 1], row[p.x], row[p.x + 1]);
        if (support > 0)
            EXPECT_NEAR(at, cx + 1, 0.1) << "constrained: where the target went";
        else
            EXPECT_LT(at, cx + 1 - 0.3) << "unconstrained: held back by the background";
    }
}

TEST(CorrelationFilter, RateZeroKeepsItRateOneStartsAfresh) {
    const test::OwnedImage a = texture(120, 100, 11), b = texture(120, 100, 12);
    const Size window{48, 40}, templ{16, 16};
    const Size o{window.width - templ.width + 1, window.height - templ.height + 1};
    FilterScratch scratch;
    const std::vector<std::uint8_t> wa = crop(a, 30, 30, window), wb = crop(b, 30, 30, window);
    std::vector<float> before(static_cast<std::size_t>(o.area())), after(before.size()), fresh(before.size());
    CorrelationFilter f;
    f.train(wa.data(), window, templ, whole(window), 0.05, kSupport, scratch);
    f.respond(wb.data(), whole(window), before.data(), scratch);
    f.train(wb.data(), window, templ, whole(window), 0.0, kSupport, scratch);
    f.respond(wb.data(), whole(window), after.data(), scratch);
    EXPECT_EQ(before, after);  // rate 0 learns nothing
    f.train(wb.data(), window, templ, whole(window), 1.0, kSupport, scratch);
    f.respond(wb.data(), whole(window), after.data(), scratch);
    CorrelationFilter g;
    g.train(wb.data(), window, templ, whole(window), 0.3, kSupport, scratch);  // the first call starts at rate 1
    g.respond(wb.data(), whole(window), fresh.data(), scratch);
    EXPECT_EQ(after, fresh);
    EXPECT_NE(before, after);
    // A new window size starts afresh too.
    const Size larger{56, 40};
    const std::vector<std::uint8_t> wl = crop(a, 30, 30, larger);
    f.train(wl.data(), larger, templ, whole(larger), 0.05, kSupport, scratch);
    EXPECT_EQ(f.window(), larger);
}

// More window shapes than the plan cache holds, each filter gone before the next: evicted
// plans are destroyed, and every shape still answers at the target.
TEST(CorrelationFilter, ShapesPastThePlanCacheStillAnswer) {
    const test::OwnedImage img = texture(200, 160, 31);
    FilterScratch scratch;
    for (int k = 0; k < 40; ++k) {
        const Size window{40 + k, 36 + (k * 7) % 23}, templ{12, 10};
        const Size o{window.width - templ.width + 1, window.height - templ.height + 1};
        CorrelationFilter f;
        const std::vector<std::uint8_t> trained = crop(img, 50, 40, window);
        f.train(trained.data(), window, templ, whole(window), 1.0, 0.0, scratch);
        const std::vector<std::uint8_t> moved = crop(img, 47, 42, window);
        std::vector<float> answer(static_cast<std::size_t>(o.area()));
        f.respond(moved.data(), whole(window), answer.data(), scratch);
        const Peak p = peak_of(answer, o);
        EXPECT_EQ(p.x, (window.width - templ.width) / 2 + 3) << k;
        EXPECT_EQ(p.y, (window.height - templ.height) / 2 - 2) << k;
    }
}

TEST(CorrelationFilter, WindowInFrameIsWhereItsSamplesFallInside) {
    // Pixel u samples ox + (u + 0.5) x scale: inside for 0 <= that <= the frame's last pixel.
    EXPECT_EQ(window_in_frame(-10.0, 5.0, 1.0, {40, 30}, {50, 30}), (Rect{10, 0, 30, 24}));
    EXPECT_EQ(window_in_frame(-10.0, 0.0, 2.0, {40, 10}, {50, 30}), (Rect{5, 0, 25, 10}));
    EXPECT_EQ(window_in_frame(3.0, 4.0, 1.0, {20, 10}, {50, 30}), (Rect{0, 0, 20, 10}));
    EXPECT_EQ(window_in_frame(60.0, 0.0, 1.0, {20, 10}, {50, 30}).width, 0);  // wholly outside
}

// What lies outside the frame (replicated border in a real window) counts as zeros: the answer
// does not depend on it.
TEST(CorrelationFilter, PixelsOutsideTheFrameAreNotSeen) {
    const test::OwnedImage img = texture(160, 120, 41);
    const Size window{64, 48}, templ{16, 16};
    const Size o{window.width - templ.width + 1, window.height - templ.height + 1};
    const Rect inside{12, 0, 52, 40};
    FilterScratch scratch;
    std::vector<std::uint8_t> a = crop(img, 40, 30, window), b = a;
    const test::OwnedImage junk = test::random_image(window.width, window.height, 42);
    for (int y = 0; y < window.height; ++y)
        for (int x = 0; x < window.width; ++x)
            if (x < inside.x || y >= inside.y + inside.height)
                b[static_cast<std::size_t>(y) * window.width + x] =
                    junk.pixels[static_cast<std::size_t>(y) * window.width + x];
    CorrelationFilter fa, fb;
    fa.train(a.data(), window, templ, inside, 1.0, kSupport, scratch);
    fb.train(b.data(), window, templ, inside, 1.0, kSupport, scratch);
    std::vector<float> ra(static_cast<std::size_t>(o.area())), rb(ra.size());
    fa.respond(a.data(), inside, ra.data(), scratch);
    fb.respond(b.data(), inside, rb.data(), scratch);
    EXPECT_EQ(ra, rb);
    fb.respond(b.data(), whole(window), rb.data(), scratch);  // with the junk seen: another answer
    EXPECT_NE(ra, rb);
}

TEST(CorrelationFilter, WeightFollowsEachMapsPeakToSidelobeRatio) {
    const FilterCue cue{nullptr, 0.95f, 3.0f};
    EXPECT_FLOAT_EQ(filter_weight(cue, 6.0f, 2.0f), 0.5f);    // 6 / (6 + 3 x 2)
    EXPECT_FLOAT_EQ(filter_weight(cue, 3.0f, 3.0f), 0.25f);   // 3 / (3 + 9)
    EXPECT_FLOAT_EQ(filter_weight(cue, 30.0f, 0.0f), 0.95f);  // the cap
    EXPECT_FLOAT_EQ(filter_weight(cue, -1.0f, 4.0f), 0.0f);   // a negative PSR counts 0
    EXPECT_FLOAT_EQ(filter_weight(cue, 0.0f, 0.0f), 0.5f);    // neither stands out
    EXPECT_FLOAT_EQ(filter_weight({nullptr, 0.3f, 3.0f}, 0.0f, 0.0f), 0.3f);
}

// The filter moves the chosen position; the hit's score stays the NCC there; one answer serves
// a target's requests of one frame.
TEST(CorrelationFilter, RankingMovesThePeakKeepsTheNccScore) {
    const test::OwnedImage img = texture(160, 120, 21);
    const Size window{56, 48}, templ{16, 16};
    const Size o{window.width - templ.width + 1, window.height - templ.height + 1};
    FilterScratch scratch;
    CorrelationFilter f;
    const std::vector<std::uint8_t> trained = crop(img, 50, 40, window);
    f.train(trained.data(), window, templ, whole(window), 1.0, kSupport, scratch);
    // Search a window moved 6 left: the filter answers at (cx + 6, cy).
    const std::vector<std::uint8_t> patch = crop(img, 44, 40, window);
    const int fx = (window.width - templ.width) / 2 + 6, fy = (window.height - templ.height) / 2;
    // An NCC map of its own: a rough floor with its peak elsewhere, at (3, 4).
    std::vector<float> ncc(static_cast<std::size_t>(o.area()));
    for (int y = 0; y < o.height; ++y)
        for (int x = 0; x < o.width; ++x)
            ncc[static_cast<std::size_t>(y) * o.width + x] =
                0.1f + 0.3f * static_cast<float>((7 * x + 13 * y) % 11) / 11;
    ncc[static_cast<std::size_t>(4) * o.width + 3] = 0.9f;
    ncc[static_cast<std::size_t>(fy) * o.width + fx] = 0.5f;

    SearchRequest r;
    r.patch = window;
    r.ox = 44;  // where `patch` lies in the frame (inside it: no replicated border)
    r.oy = 40;
    r.filter = {&f, 0.95f, 1.0f};
    ASSERT_TRUE(filter_applies(r));
    CueScratch s;
    const FrameView frame(img.view());
    std::vector<float> map = ncc;
    RankedPeak hit = rank_request(r, frame, patch.data(), map.data(), o, nullptr, s);
    EXPECT_EQ(hit.peak.x, fx);
    EXPECT_EQ(hit.peak.y, fy);
    EXPECT_FLOAT_EQ(hit.peak.score, 0.5f);  // the NCC at the chosen position
    // The map is the blend, with the weight from the two maps' PSRs.
    const Peak own = peak_of(ncc, o);
    std::vector<float> answer(ncc.size());
    f.respond(patch.data(), whole(window), answer.data(), scratch);
    const float w = filter_weight(r.filter, peak_of(answer, o).psr, own.psr);
    ASSERT_GT(w, 0.5f);
    const std::size_t at = static_cast<std::size_t>(fy) * o.width + fx;
    EXPECT_NEAR(map[at], (1 - w) * ncc[at] + w * answer[at], 1e-6f);

    // Another scale's window of the same target and frame reuses that answer; the next frame
    // answers afresh (the trained window: the target at the centre).
    const std::vector<std::uint8_t> centred = crop(img, 50, 40, window);
    map = ncc;
    hit = rank_request(r, frame, centred.data(), map.data(), o, nullptr, s);
    EXPECT_EQ(hit.peak.x, fx);
    EXPECT_EQ(hit.peak.y, fy);
    r.filter.frame = 1;
    map = ncc;
    hit = rank_request(r, frame, centred.data(), map.data(), o, nullptr, s);
    EXPECT_EQ(hit.peak.x, fx - 6);
    EXPECT_EQ(hit.peak.y, fy);

    // The NCC's PSR counted 1000 times: the filter weighs almost nothing and the NCC's peak stays.
    r.filter.balance = 1000.0f;
    map = ncc;
    hit = rank_request(r, frame, patch.data(), map.data(), o, nullptr, s);
    EXPECT_EQ(hit.peak.x, 3);
    EXPECT_EQ(hit.peak.y, 4);
    EXPECT_FLOAT_EQ(hit.peak.score, 0.9f);
    // A window of another size than the filter's: the filter does not apply.
    r.patch = Size{window.width + 2, window.height};
    EXPECT_FALSE(filter_applies(r));
}

}  // namespace
}  // namespace corrtrack
