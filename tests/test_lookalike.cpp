// The look-alike term (distractor awareness): a copy of the target stands beside it; when the
// target is partly hidden, the NCC alone jumps to the copy, while a tracker that noted the
// copy as a look-alike ranks the copy lower and stays.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "app/track/search_cues.h"
#include "app/track/tracker.h"

namespace corrtrack {
namespace {

constexpr int kW = 160, kH = 120, kTw = 12, kTh = 36;
constexpr int kTargetX = 60, kCopyX = 80, kTop = 40;

struct Scene {
    std::vector<std::uint8_t> target, copy;
    Scene() {
        std::mt19937 rng(5);
        target.resize(kTw * kTh);
        for (auto& b : target) b = static_cast<std::uint8_t>(30 + rng() % 200);
        // The copy: the same object with a little noise of its own (NCC with it about 0.95).
        copy = target;
        for (auto& b : copy)
            b = static_cast<std::uint8_t>(std::clamp(static_cast<int>(b) + static_cast<int>(rng() % 141) - 70, 0, 255));
    }
    // `hidden` rows of the target's top are covered by a flat occluder.
    std::vector<std::uint8_t> frame(int hidden) const {
        std::vector<std::uint8_t> f(kW * kH, 128);
        for (int y = 0; y < kTh; ++y)
            for (int x = 0; x < kTw; ++x) {
                f[static_cast<std::size_t>(kTop + y) * kW + kTargetX + x] = y < hidden ? 128 : target[y * kTw + x];
                f[static_cast<std::size_t>(kTop + y) * kW + kCopyX + x] = copy[y * kTw + x];
            }
        return f;
    }
};

// The box's left edge in the last frame: 10 clear frames, then 10 with part of the target hidden.
// The correlation filter is off unless asked: these tests are about the look-alike term.
std::vector<TrackResult> track(double distractor_weight, int hidden, int cue_targets = 8, double filter = 0.0) {
    const Scene s;
    TrackerOptions o;
    o.kernel = "cpu_fast";
    o.scales = 1;
    o.filter = filter;
    o.distractor_weight = distractor_weight;
    o.cue_targets = cue_targets;
    Tracker tracker(o);
    std::vector<std::uint8_t> f = s.frame(0);
    const ImageView view{f.data(), kW, kH, static_cast<std::size_t>(kW)};
    std::string error;
    EXPECT_TRUE(tracker.init(view, {kTargetX, kTop, kTw, kTh}, &error)) << error;
    std::vector<TrackResult> out;
    for (int t = 1; t <= 20; ++t) {
        const std::vector<std::uint8_t> next = s.frame(t <= 10 ? 0 : hidden);
        std::copy(next.begin(), next.end(), f.begin());  // the view keeps pointing at f
        out.push_back(tracker.update(view));
    }
    return out;
}

TEST(Lookalikes, CopyBesideAPartlyHiddenTargetIsNotTaken) {
    const int hidden = 22;  // of 36 rows: the NCC alone then prefers the copy
    const auto plain = track(0.0, hidden);
    EXPECT_NEAR(plain[9].box.x, kTargetX, 0.5) << "clear frames track the target";
    EXPECT_NEAR(plain.back().box.x, kCopyX, 0.5) << "test premise: the NCC alone takes the copy";
    const auto aware = track(1.0, hidden);
    for (std::size_t t = 0; t < aware.size(); ++t) EXPECT_NEAR(aware[t].box.x, kTargetX, 0.5) << "frame " << t + 1;
    // The score the gates read stays the template's NCC at the target.
    EXPECT_LT(aware.back().score, plain.back().score);
}

// The correlation filter (default weight) alone keeps the box on the partly hidden target too,
// where the NCC alone takes the copy.
TEST(Lookalikes, CorrelationFilterAloneKeepsThePartlyHiddenTarget) {
    const int hidden = 22;
    const auto filtered = track(0.0, hidden, 8, TrackerOptions{}.filter);
    for (std::size_t t = 0; t < filtered.size(); ++t)
        EXPECT_NEAR(filtered[t].box.x, kTargetX, 0.5) << "frame " << t + 1;
    // Beyond cue_targets the filter steps aside with the other cues: the NCC takes the copy.
    EXPECT_NEAR(track(0.0, hidden, 0, TrackerOptions{}.filter).back().box.x, kCopyX, 0.5);
}

TEST(Lookalikes, ClearTargetIsTrackedAlikeWithOrWithout) {
    const auto plain = track(0.0, 0), aware = track(1.0, 0);
    for (std::size_t t = 0; t < plain.size(); ++t) {
        EXPECT_NEAR(plain[t].box.x, kTargetX, 0.5);
        EXPECT_DOUBLE_EQ(aware[t].box.x, plain[t].box.x);
        EXPECT_FLOAT_EQ(aware[t].score, plain[t].score);
    }
}

// More targets than cue_targets (here: any) track on NCC alone, exactly as with the term off.
TEST(Lookalikes, BeyondCueTargetsTheTermStepsAside) {
    const int hidden = 22;
    const auto plain = track(0.0, hidden), crowd = track(1.0, hidden, 0);
    for (std::size_t t = 0; t < plain.size(); ++t) {
        EXPECT_DOUBLE_EQ(crowd[t].box.x, plain[t].box.x) << "frame " << t + 1;
        EXPECT_FLOAT_EQ(crowd[t].score, plain[t].score) << "frame " << t + 1;
    }
    EXPECT_NEAR(crowd.back().box.x, kCopyX, 0.5);
}

// A request that only wants its rival (no cue applies): the GPU keeps its own peak, the host's
// penalised peak, and adds the rival from the copied map (add_rival). That must be rank_request's
// hit, every field, on a map with the peak, a rival hill apart from it and a higher local
// maximum too near the peak to be a rival.
TEST(Lookalikes, RivalAddedToABackendsPeakIsTheHostsRanking) {
    const Size o{41, 37};
    std::vector<float> map(static_cast<std::size_t>(o.area()));
    std::mt19937 rng(11);
    auto hill = [&](int cx, int cy, float top, float spread) {
        for (int y = 0; y < o.height; ++y)
            for (int x = 0; x < o.width; ++x) {
                const float d2 = static_cast<float>((x - cx) * (x - cx) + (y - cy) * (y - cy));
                float& v = map[static_cast<std::size_t>(y) * o.width + x];
                v = std::max(v, top * std::exp(-d2 / (2 * spread * spread)));
            }
    };
    for (float& v : map) v = static_cast<float>(rng() % 200) / 1000.0f - 0.1f;
    hill(22, 17, 0.9f, 3.0f);   // the peak
    hill(27, 17, 0.75f, 1.0f);  // a local maximum too near the peak: not apart, not a rival
    hill(5, 30, 0.62f, 2.0f);   // the rival
    hill(36, 4, 0.55f, 2.0f);   // a lower one
    const std::vector<std::uint8_t> templ(12 * 10, 1);
    SearchRequest r;
    r.templ.image = {templ.data(), 12, 10, 12, MemorySpace::kHost};
    r.patch = {o.width + 11, o.height + 9};
    r.penalty = 0.1;
    r.want_rival = true;
    CueScratch scratch;
    std::vector<float> ranked_map = map;
    const RankedPeak host = rank_request(r, FrameView{}, nullptr, ranked_map.data(), o, nullptr, scratch);
    PenaltyScratch ps;
    RankedPeak backend =
        penalised_peak({map.data(), o.width, o.height, static_cast<std::size_t>(o.width)}, r.penalty, ps);
    EXPECT_EQ(backend.rival, -2.0f) << "a backend's own peak has no rival yet";
    add_rival(r, map.data(), o, backend);
    EXPECT_EQ(host.peak.x, 22);
    EXPECT_EQ(host.peak.y, 17);
    EXPECT_EQ(host.rival_x, 5.0f);
    EXPECT_EQ(host.rival_y, 30.0f);
    EXPECT_NEAR(host.rival, 0.62f, 0.01f);
    EXPECT_EQ(backend.peak.x, host.peak.x);
    EXPECT_EQ(backend.peak.y, host.peak.y);
    EXPECT_EQ(backend.peak.sub_x, host.peak.sub_x);
    EXPECT_EQ(backend.peak.sub_y, host.peak.sub_y);
    EXPECT_EQ(backend.peak.score, host.peak.score);
    EXPECT_EQ(backend.peak.psr, host.peak.psr);
    EXPECT_EQ(backend.peak.second, host.peak.second);
    EXPECT_EQ(backend.ranked, host.ranked);
    EXPECT_EQ(backend.rival, host.rival);
    EXPECT_EQ(backend.rival_x, host.rival_x);
    EXPECT_EQ(backend.rival_y, host.rival_y);
    EXPECT_EQ(backend.rival_of, host.rival_of);
    EXPECT_EQ(backend.lookalike, host.lookalike);
}

// A target crossing a still look-alike: it walks right in front of a copy that stands still,
// then behind a post that hides its top while the copy stands in full view a few pixels away.
// The NCC then prefers the copy; a tracker that found the copy again where it stood (a still
// look-alike claims its place) keeps the box on the target.
struct Crossing {
    static constexpr int kW = 200, kH = 100, kTop = 30, kCopyX = 100, kStartX = 40, kStep = 3;
    static constexpr int kPostX = kCopyX + kTw + 2, kPostW = 16, kPostH = 24;
    Scene look;
    int target_x(int t) const { return kStartX + kStep * t; }
    std::vector<std::uint8_t> frame(int t) const {
        std::vector<std::uint8_t> f(kW * kH, 128);
        auto draw = [&](const std::vector<std::uint8_t>& p, int left) {
            for (int y = 0; y < kTh; ++y)
                for (int x = 0; x < kTw; ++x)
                    if (left + x >= 0 && left + x < kW)
                        f[static_cast<std::size_t>(kTop + y) * kW + left + x] = p[y * kTw + x];
        };
        draw(look.copy, kCopyX);
        draw(look.target, target_x(t));
        for (int y = kTop - 4; y < kTop + kPostH; ++y)
            for (int x = kPostX; x < kPostX + kPostW; ++x) f[static_cast<std::size_t>(y) * kW + x] = 90;
        return f;
    }
};

std::vector<TrackResult> cross(double claim, int frames) {
    const Crossing c;
    TrackerOptions o;
    o.kernel = "cpu_fast";
    o.scales = 1;
    o.lookalike_claim = claim;
    Tracker tracker(o);
    std::vector<std::uint8_t> f = c.frame(0);
    const ImageView view{f.data(), Crossing::kW, Crossing::kH, static_cast<std::size_t>(Crossing::kW)};
    std::string error;
    EXPECT_TRUE(tracker.init(view, {Crossing::kStartX, Crossing::kTop, kTw, kTh}, &error)) << error;
    std::vector<TrackResult> out;
    for (int t = 1; t <= frames; ++t) {
        const std::vector<std::uint8_t> next = c.frame(t);
        std::copy(next.begin(), next.end(), f.begin());
        out.push_back(tracker.update(view));
    }
    return out;
}

TEST(Lookalikes, AStillLookalikeKeepsItsPlaceWhenTheTargetCrossesIt) {
    const Crossing c;
    const int frames = 40;  // the target ends 40 px right of the post
    const auto plain = cross(0.0, frames), claimed = cross(TrackerOptions{}.lookalike_claim, frames);
    EXPECT_NEAR(plain[20].box.x, c.target_x(21), 0.5) << "in front of the copy, both follow the target";
    EXPECT_NEAR(plain.back().box.x, Crossing::kCopyX, 0.5) << "test premise: without claims the box ends on the copy";
    for (std::size_t t = 0; t < claimed.size(); ++t) {
        EXPECT_NEAR(claimed[t].box.x, c.target_x(static_cast<int>(t) + 1), 0.5) << "frame " << t + 1;
        EXPECT_FALSE(claimed[t].lost) << "frame " << t + 1;
    }
}

}  // namespace
}  // namespace corrtrack
