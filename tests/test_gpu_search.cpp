// The GPU search's own machinery against its host twins: DevicePyramid's levels (built up to
// three levels a launch, each pixel through the chain of halvings) equal HostPyramid's bit for
// bit, sampled patches equal sample_patch's bit for bit, ranked peaks equal penalised_peak's,
// and many targets (more items than one launch takes by value, so the launchers read them
// from device memory in one launch) track as on the CPU. GPU only: skipped without one.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "app/gpu/gpu_context.h"
#include "app/track/backends.h"
#include "app/track/device_pyramid.h"
#include "app/track/device_search.h"
#include "app/track/resample.h"
#include "app/track/pyramid.h"
#include "app/track/tracker.h"
#include "corrtrack/cuda_util.h"

namespace corrtrack {
namespace {

std::vector<std::uint8_t> noise(int w, int h, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> u(0, 255);
    std::vector<std::uint8_t> v(static_cast<std::size_t>(w) * h);
    for (auto& p : v) p = static_cast<std::uint8_t>(u(rng));
    return v;
}

// Level k's pixels inside `r`, read back from the device.
std::vector<std::uint8_t> download(const ImageView& level, Rect r) {
    std::vector<std::uint8_t> out(static_cast<std::size_t>(r.width) * r.height);
    EXPECT_EQ(cudaMemcpy2D(out.data(), r.width, level.data + static_cast<std::size_t>(r.y) * level.pitch + r.x,
                           level.pitch, r.width, r.height, cudaMemcpyDeviceToHost),
              cudaSuccess);
    return out;
}

TEST(DevicePyramidGpu, LevelsAreTheHostPyramidsBitForBit) {
    if (!cuda_available()) GTEST_SKIP() << "no GPU";
    // Odd sizes, so that every level has a repeated last row and column somewhere.
    const int w = 997, h = 701;
    std::vector<std::uint8_t> host = noise(w, h, 3);
    const ImageView frame{host.data(), w, h, static_cast<std::size_t>(w), MemorySpace::kHost};
    PinnedBuffer<std::uint8_t> pinned;
    std::copy(host.begin(), host.end(), pinned.ensure(host.size()));
    const ImageView pinned_frame{pinned.get(), w, h, static_cast<std::size_t>(w), MemorySpace::kHost};
    DeviceBuffer<std::uint8_t> level0;
    std::size_t pitch = (w + 63) / 64 * 64;
    level0.ensure(pitch * h);
    CudaStream stream;

    HostPyramid ref;
    ref.reset(frame);
    DevicePyramid dev;
    dev.reset(pinned_frame, level0.get(), pitch);
    // Three rounds in one frame: small patches deep down (levels 1..7 grown from nothing, so
    // three launches: levels 1-3, 4-6, 7), then patches that grow some levels again (built from
    // the level above, valid from the round before), then one at the frame's corner.
    const std::vector<std::vector<SampleItem>> rounds = {
        {{400, 300, 8.0, 24, 20, 3, 0, 0}, {100, 50, 128.0, 4, 4, 7, 0, 0}, {40, 600, 2.0, 30, 30, 1, 0, 0}},
        {{0, 0, 4.0, 60, 50, 2, 0, 0}, {700, 500, 16.0, 20, 15, 4, 0, 0}, {500, 100, 32.0, 8, 8, 5, 0, 0}},
        {{980, 690, 2.0, 10, 10, 1, 0, 0}, {-40, -30, 8.0, 12, 12, 3, 0, 0}},
    };
    for (std::size_t round = 0; round < rounds.size(); ++round) {
        std::vector<SampleItem> items = rounds[round];
        for (SampleItem& it : items) {  // origins in level coordinates, as level_sample gives
            const LevelSample ls = level_sample(it.ox, it.oy, it.scale);
            it.ox = ls.ox;
            it.oy = ls.oy;
            it.scale = ls.scale;
            EXPECT_EQ(ls.level, it.level);
        }
        const DevicePyramid::Uploads u = dev.prepare(items, {}, false, stream.get());
        // Round 0 grows levels 1-7 from nothing: launches for 1-3, 4-6 and 7. Round 1 grows
        // some again; round 2's regions may already be valid (then nothing is launched).
        if (round == 0) EXPECT_EQ(u.halvings, 3);
        if (round == 1) EXPECT_GT(u.halvings, 0);
        ASSERT_EQ(cudaStreamSynchronize(stream.cuda()), cudaSuccess);
        for (const SampleItem& it : items) {
            const Size lsize = pyramid_level_size({w, h}, it.level);
            const Rect r =
                clip_to_level(level_region({it.level, it.ox, it.oy, it.scale}, {it.width, it.height}, lsize), lsize);
            const ImageView host_level = ref.level(it.level, r);
            const std::vector<std::uint8_t> got = download(dev.levels().level[it.level], r);
            int wrong = 0;
            for (int y = 0; y < r.height; ++y)
                for (int x = 0; x < r.width; ++x)
                    wrong += got[static_cast<std::size_t>(y) * r.width + x] != host_level.row(r.y + y)[r.x + x];
            EXPECT_EQ(wrong, 0) << "round " << round << " level " << it.level << " region " << r.x << "," << r.y << " "
                                << r.width << "x" << r.height;
        }
    }
}

// launch_sample_patches against sample_patch on one level: 70 patches (more than a launch
// takes by value, so also from device memory) of 1x1 to 150x140 pixels (several blocks of
// rows), at integer and fractional origins, inside and past the level's borders, and at
// scales 1 (the copy), 0.6 to 1.25 (bilinear) and 1.3 to 3.7 (area averaging): bit for bit.
TEST(DeviceSearchGpu, SampledPatchesAreTheHostsBitForBit) {
    if (!cuda_available()) GTEST_SKIP() << "no GPU";
    const int w = 523, h = 311;
    const std::vector<std::uint8_t> level = noise(w, h, 21);
    DeviceBuffer<std::uint8_t> dev_level;
    ASSERT_EQ(cudaMemcpy(dev_level.ensure(level.size()), level.data(), level.size(), cudaMemcpyHostToDevice),
              cudaSuccess);
    DeviceLevels levels{};
    levels.level[0] = {dev_level.get(), w, h, static_cast<std::size_t>(w), MemorySpace::kDevice};
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> pos(-40.0, 560.0);
    const double scales[] = {1.0, 1.0, 0.6, 0.93, 1.1, 1.25, 1.3, 2.0, 3.7};
    std::vector<SampleItem> items;
    std::size_t bytes = 0;
    for (int k = 0; k < 70; ++k) {
        const int pw = 1 + static_cast<int>(rng() % 150), ph = 1 + static_cast<int>(rng() % 140);
        double ox = pos(rng), oy = pos(rng) * h / w;
        if (k % 3 == 0) {  // integer origins: the copy at scale 1
            ox = std::floor(ox);
            oy = std::floor(oy);
        }
        const std::size_t pitch = pw + 5;
        items.push_back({ox, oy, scales[k % 9], pw, ph, 0, bytes, pitch});
        bytes += pitch * ph;
    }
    DeviceBuffer<std::uint8_t> out;
    DeviceBuffer<SampleItem> on_device;
    ASSERT_EQ(cudaMemcpy(on_device.ensure(items.size()), items.data(), items.size() * sizeof(SampleItem),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
    CudaStream stream;
    const ImageView host_level{level.data(), w, h, static_cast<std::size_t>(w), MemorySpace::kHost};
    ResampleScratch scratch;
    for (const SampleItem* staged :
         {static_cast<const SampleItem*>(nullptr), static_cast<const SampleItem*>(on_device.get())}) {
        ASSERT_EQ(cudaMemset(out.ensure(bytes), 0, bytes), cudaSuccess);
        launch_sample_patches(levels, items, out.get(), stream.get(), staged);
        std::vector<std::uint8_t> got(bytes);
        ASSERT_EQ(cudaMemcpyAsync(got.data(), out.get(), bytes, cudaMemcpyDeviceToHost, as_cuda(stream.get())),
                  cudaSuccess);
        ASSERT_EQ(cudaStreamSynchronize(as_cuda(stream.get())), cudaSuccess);
        for (const SampleItem& it : items) {
            std::vector<std::uint8_t> want(it.dst_pitch * it.height);
            sample_patch(host_level, it.ox, it.oy, it.scale, {it.width, it.height}, want.data(), it.dst_pitch, scratch);
            int differ = 0;
            for (int y = 0; y < it.height; ++y)
                for (int x = 0; x < it.width; ++x)
                    differ += got[it.dst_offset + y * it.dst_pitch + x] != want[y * it.dst_pitch + x];
            EXPECT_EQ(differ, 0) << it.width << "x" << it.height << " at (" << it.ox << ", " << it.oy << ") scale "
                                 << it.scale << (staged ? " from device memory" : " by value");
        }
    }
}

// launch_ranked_peaks against penalised_peak: maps from 1x1 to 1100 rows, one block each or
// split into up to 32 bands (some empty: more bands than rows), wider than the penalty terms'
// shared cache (1024) and than a block's step, narrower than a warp, pitched rows with NaN
// padding, values on a coarse grid (so that ties cross threads, warps and bands, and the
// penalty's symmetric positions tie too), the maximum on each border, and penalties 0, 0.2 and
// -0.1 (none, as on the host). Peak position, ranked value, score and second are identical;
// sub-pixel and PSR within 1e-5 relative (the sums' order differs).
TEST(DeviceSearchGpu, RankedPeaksArePenalisedPeaksOnEveryShape) {
    if (!cuda_available()) GTEST_SKIP() << "no GPU";
    const std::vector<std::pair<int, int>> shapes = {{1, 1},   {7, 1},    {1, 7},    {2, 2},    {5, 5},     {17, 13},
                                                     {31, 33}, {33, 31},  {80, 80},  {64, 9},   {200, 150}, {511, 3},
                                                     {512, 2}, {513, 4},  {1025, 9}, {9, 1100}, {700, 300}, {3, 700},
                                                     {96, 96}, {1, 1030}, {129, 65}, {40, 41},  {4000, 3}};
    const std::vector<double> penalties = {0.0, 0.2, -0.1};
    std::mt19937 rng(7);
    std::vector<std::vector<float>> host;
    std::vector<PeakItem> items;
    std::size_t floats = 0;
    for (std::size_t s = 0; s < shapes.size(); ++s)
        for (double pen : penalties) {
            const auto [w, h] = shapes[s];
            std::vector<float> m(static_cast<std::size_t>(w) * h);
            std::uniform_int_distribution<int> level(-8, 7);
            for (float& v : m) v = level(rng) / 8.0f;
            switch (items.size() % 4) {  // the largest value on a border, or twice inside
            case 0: m[static_cast<std::size_t>(h - 1) * w + (w - 1)] = 1.0f; break;
            case 1: m[static_cast<std::size_t>(rng() % h) * w] = 1.0f; break;
            case 2:
                m[rng() % m.size()] = 1.0f;
                m[rng() % m.size()] = 1.0f;
                break;
            default: break;  // ties of 7/8 all over
            }
            const int pitch = w + 3;
            items.push_back({floats, w, h, pen, pitch});
            floats += static_cast<std::size_t>(pitch) * h;
            host.push_back(std::move(m));
        }
    ASSERT_GT(items.size(), static_cast<std::size_t>(2 * kMaxItemsPerLaunch));
    DeviceBuffer<float> maps;
    maps.ensure(floats);
    ASSERT_EQ(cudaMemset(maps.get(), 0xff, floats * sizeof(float)), cudaSuccess);  // NaN padding
    for (std::size_t i = 0; i < items.size(); ++i) {
        const PeakItem& it = items[i];
        ASSERT_EQ(cudaMemcpy2D(maps.get() + it.offset, it.pitch * sizeof(float), host[i].data(),
                               it.width * sizeof(float), it.width * sizeof(float), it.height, cudaMemcpyHostToDevice),
                  cudaSuccess);
    }
    DeviceBuffer<PeakItem> on_device;
    ASSERT_EQ(cudaMemcpy(on_device.ensure(items.size()), items.data(), items.size() * sizeof(PeakItem),
                         cudaMemcpyHostToDevice),
              cudaSuccess);
    // Three ways: (a) by value in launches of 32 (most of them banded by their largest map),
    // (b) all at once from device memory, (c) only the maps small enough for one block each, by
    // value (no band launch). Twice each: the maps' tickets must be back at zero.
    std::vector<PeakItem> small;
    std::vector<std::size_t> small_of;  // their indices in items
    for (std::size_t i = 0; i < items.size(); ++i)
        if (static_cast<long long>(items[i].width) * items[i].height <= kPeakSplitFloats) {
            small.push_back(items[i]);
            small_of.push_back(i);
        }
    ASSERT_GT(small.size(), static_cast<std::size_t>(kMaxItemsPerLaunch));
    const std::size_t n = items.size();
    DeviceBuffer<RankedPeak> out;
    out.ensure(2 * n + small.size());
    CudaStream stream;
    PeakScratch scratch;
    scratch.ensure(n, stream.get());
    for (int round = 0; round < 2; ++round) {
        launch_ranked_peaks(maps.get(), items, out.get(), scratch, stream.get());
        launch_ranked_peaks(maps.get(), items, out.get() + n, scratch, stream.get(), on_device.get());
        launch_ranked_peaks(maps.get(), small, out.get() + 2 * n, scratch, stream.get());
    }
    std::vector<RankedPeak> got(2 * n + small.size());
    ASSERT_EQ(cudaMemcpyAsync(got.data(), out.get(), got.size() * sizeof(RankedPeak), cudaMemcpyDeviceToHost,
                              as_cuda(stream.get())),
              cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(as_cuda(stream.get())), cudaSuccess);
    auto close = [](float a, float b) { return std::fabs(a - b) <= 1e-5f * std::max(1.0f, std::fabs(b)); };
    PenaltyScratch host_scratch;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const std::size_t k = i < 2 * n ? i % n : small_of[i - 2 * n];
        const PeakItem& it = items[k];
        const MapView view{host[k].data(), it.width, it.height, static_cast<std::size_t>(it.width), MemorySpace::kHost};
        const RankedPeak want = penalised_peak(view, it.penalty, host_scratch);
        const char* way = i < n ? " by value" : i < 2 * n ? " from device memory" : " one block a map";
        const std::string what =
            std::to_string(it.width) + "x" + std::to_string(it.height) + " penalty " + std::to_string(it.penalty) + way;
        const RankedPeak& g = got[i];
        EXPECT_EQ(g.peak.x, want.peak.x) << what;
        EXPECT_EQ(g.peak.y, want.peak.y) << what;
        EXPECT_EQ(g.ranked, want.ranked) << what;
        EXPECT_EQ(g.peak.score, want.peak.score) << what;
        EXPECT_EQ(g.peak.second, want.peak.second) << what;
        EXPECT_TRUE(close(g.peak.sub_x, want.peak.sub_x))
            << what << ": sub_x " << g.peak.sub_x << " want " << want.peak.sub_x;
        EXPECT_TRUE(close(g.peak.sub_y, want.peak.sub_y))
            << what << ": sub_y " << g.peak.sub_y << " want " << want.peak.sub_y;
        EXPECT_TRUE(close(g.peak.psr, want.peak.psr)) << what << ": psr " << g.peak.psr << " want " << want.peak.psr;
    }
}

// 48 textured 36x36 patches on a textured background, each moving at its own speed (0 to 2.6
// px a frame), so that their windows differ in size: 144 requests a frame (3 scales), more
// than one launch takes by value, laid out in slots of the largest window.
TEST(GpuSearchGpu, FortyEightTargetsTrackAsOnTheCpu) {
    const int w = 640, h = 480, frames = 40, targets = 48, side = 36;
    auto smooth = [](int tw, int th, std::uint32_t seed) {  // noise, 3x3 box blurred
        const std::vector<std::uint8_t> n = noise(tw, th, seed);
        std::vector<std::uint8_t> out(n.size());
        for (int y = 0; y < th; ++y)
            for (int x = 0; x < tw; ++x) {
                int sum = 0, count = 0;
                for (int dy = -1; dy <= 1; ++dy)
                    for (int dx = -1; dx <= 1; ++dx) {
                        const int yy = y + dy, xx = x + dx;
                        if (yy < 0 || xx < 0 || yy >= th || xx >= tw) continue;
                        sum += n[static_cast<std::size_t>(yy) * tw + xx];
                        ++count;
                    }
                out[static_cast<std::size_t>(y) * tw + x] = static_cast<std::uint8_t>(sum / count);
            }
        return out;
    };
    const std::vector<std::uint8_t> background = smooth(w, h, 11), patches = smooth(side * targets, side, 12);
    // Target i's top-left at frame t.
    auto origin = [&](int i, int t) {
        const double vx = ((i % 5) - 2) * 0.65, vy = ((i % 3) - 1) * 0.8;
        return std::make_pair(60 + (i % 8) * 68 + static_cast<int>(std::lround(vx * t)),
                              50 + (i / 8) * 66 + static_cast<int>(std::lround(vy * t)));
    };
    auto render = [&](int t, std::vector<std::uint8_t>& frame) {
        frame = background;
        for (int i = 0; i < targets; ++i) {
            const auto [x0, y0] = origin(i, t);
            for (int y = 0; y < side; ++y)
                std::copy_n(&patches[static_cast<std::size_t>(y) * side * targets + i * side], side,
                            &frame[static_cast<std::size_t>(y0 + y) * w + x0]);
        }
    };
    auto run = [&](const char* kernel) {
        TrackerOptions o;
        o.kernel = kernel;
        o.scales = 3;
        MultiTracker tracker(o);
        std::string error;
        EXPECT_TRUE(tracker.set_kernel(kernel, &error)) << error;
        std::vector<std::uint8_t> frame;
        render(0, frame);
        const ImageView view{frame.data(), w, h, static_cast<std::size_t>(w), MemorySpace::kHost};
        for (int i = 0; i < targets; ++i) {
            const auto [x0, y0] = origin(i, 0);
            EXPECT_GE(tracker.add_target(view, {static_cast<double>(x0), static_cast<double>(y0), side, side}, &error),
                      0)
                << error;
        }
        std::vector<std::vector<TrackResult>> out;
        for (int t = 1; t < frames; ++t) {
            render(t, frame);
            out.push_back(tracker.update(view));
        }
        return out;
    };
    const auto cpu = run("cpu_fast");
    // The scene is easy: nearly every target-frame is within 2 px of the truth on the CPU.
    int on_track = 0;
    for (std::size_t f = 0; f < cpu.size(); ++f) {
        ASSERT_EQ(cpu[f].size(), static_cast<std::size_t>(targets));
        for (int i = 0; i < targets; ++i) {
            const auto [x0, y0] = origin(i, static_cast<int>(f) + 1);
            on_track +=
                std::hypot(cpu[f][i].box.cx() - (x0 + side / 2.0), cpu[f][i].box.cy() - (y0 + side / 2.0)) < 2.0;
        }
    }
    EXPECT_GT(on_track, static_cast<int>(cpu.size()) * targets * 9 / 10);
    if (!cuda_available()) GTEST_SKIP() << "no GPU: the CPU half ran (" << on_track << " target-frames within 2 px)";
    const auto gpu = run("auto");
    ASSERT_EQ(cpu.size(), gpu.size());
    double worst = 0;
    for (std::size_t f = 0; f < cpu.size(); ++f) {
        ASSERT_EQ(gpu[f].size(), cpu[f].size());
        for (int i = 0; i < targets; ++i) {
            const BoxF& a = cpu[f][i].box;
            const BoxF& b = gpu[f][i].box;
            worst = std::max({worst, std::abs(a.x - b.x), std::abs(a.y - b.y), std::abs(a.width - b.width),
                              std::abs(a.height - b.height)});
            EXPECT_EQ(cpu[f][i].lost, gpu[f][i].lost) << "frame " << f + 1 << " target " << i;
        }
    }
    EXPECT_LT(worst, 0.5);
    std::printf("48 targets x 3 scales, %zu frames: GPU boxes within %.4f px of cpu_fast\n", cpu.size(), worst);
}

// The cues on both backends: requests with a colour cue, look-alikes, both, only a rival
// asked for, and none (a target's scales side by side, so that the GPU shares atlas rows)
// give the same RankedPeak, every field, through the shared host cue code (search_cues.h).
TEST(GpuSearchGpu, CuesRankAsOnTheCpu) {
    const int w = 320, h = 240, cw = (w + 1) / 2, ch = (h + 1) / 2, side = 24;
    std::vector<std::uint8_t> luma = noise(w, h, 21), u(static_cast<std::size_t>(cw) * ch),
                              v(static_cast<std::size_t>(cw) * ch);
    for (int y = 0; y < ch; ++y)
        for (int x = 0; x < cw; ++x) {  // smooth chroma with a warm region around the target
            const bool warm = std::abs(x - 60) < 20 && std::abs(y - 46) < 20;
            u[static_cast<std::size_t>(y) * cw + x] = static_cast<std::uint8_t>(warm ? 70 + x % 16 : 128 + y % 32);
            v[static_cast<std::size_t>(y) * cw + x] = static_cast<std::uint8_t>(warm ? 200 - y % 16 : 120 + x % 24);
        }
    // The template from (108, 80); look-alikes: two other windows of the frame.
    auto cut = [&](int x0, int y0) {
        std::vector<std::uint8_t> t(static_cast<std::size_t>(side) * side);
        for (int y = 0; y < side; ++y)
            std::copy_n(&luma[static_cast<std::size_t>(y0 + y) * w + x0], side, &t[static_cast<std::size_t>(y) * side]);
        return t;
    };
    const std::vector<std::uint8_t> templ = cut(108, 80), d0 = cut(130, 96), d1 = cut(90, 70);
    auto ref = [&](const std::vector<std::uint8_t>& px, std::uint64_t key) {
        TemplateRef t;
        t.key = key;
        t.version = 1;
        t.image = {px.data(), side, side, static_cast<std::size_t>(side), MemorySpace::kHost};
        return t;
    };
    std::vector<float> likelihood(kColourBins);
    for (int b = 0; b < kColourBins; ++b) likelihood[b] = static_cast<float>((b * 37) % 101) / 100.0f;
    std::vector<SearchRequest> requests;
    for (int kind = 0; kind < 5; ++kind)  // all cues, colour, look-alikes, rival only, none
        for (const double scale : {1 / 1.04, 1.0, 1.04}) {
            SearchRequest r;
            r.templ = ref(templ, 7);
            r.scale = scale;
            r.patch = {70, 66};
            r.ox = 120 - r.patch.width * scale / 2 + (scale == 1.0 ? 0.0 : 0.3);
            r.oy = 92 - r.patch.height * scale / 2;
            r.penalty = 0.1;
            if (kind <= 1) r.colour = {likelihood.data(), 0.4f};
            if (kind == 0 || kind == 2) {
                r.distractors[0] = ref(d0, 100);
                r.distractors[1] = ref(d1, 101);
                r.distractor_count = 2;
                r.distractor_weight = 1.0f;
                // Where they stood, a little off (map coordinates at scale 1: d0 at (45, 37),
                // d1 at (5, 11)): both are found again there, still, and claim their places.
                r.distractor_x[0] = 43;
                r.distractor_y[0] = 38;
                r.distractor_x[1] = 6;
                r.distractor_y[1] = 9;
                r.lookalike_claim = 0.5f;
            }
            r.want_rival = kind < 4;
            requests.push_back(r);
        }
    const FrameView frame{{luma.data(), w, h, static_cast<std::size_t>(w), MemorySpace::kHost},
                          {u.data(), cw, ch, static_cast<std::size_t>(cw), MemorySpace::kHost},
                          {v.data(), cw, ch, static_cast<std::size_t>(cw), MemorySpace::kHost}};
    auto search = [&](SearchBackend& b) {
        b.begin_frame(frame);
        std::vector<RankedPeak> hits;
        b.search(0, requests, hits, nullptr);
        return hits;
    };
    std::string error;
    auto cpu_backend = make_cpu_search("cpu_fast", &error);
    ASSERT_TRUE(cpu_backend) << error;
    const std::vector<RankedPeak> cpu = search(*cpu_backend);
    // The cues change the ranking map (its PSR; else this test could not tell them from none).
    int moved = 0;
    for (int s = 0; s < 3; ++s) {
        EXPECT_GE(cpu[s].lookalike, 0.0f);
        EXPECT_EQ(cpu[12 + s].lookalike, -2.0f);
        moved += (cpu[3 + s].peak.psr != cpu[12 + s].peak.psr) + (cpu[6 + s].peak.psr != cpu[12 + s].peak.psr);
    }
    EXPECT_EQ(moved, 6);
    for (int kind : {0, 2}) {  // the centre scale finds each look-alike where it stands
        const RankedPeak& c = cpu[3 * kind + 1];
        EXPECT_NEAR(c.lookalike_found[0], 1.0f, 1e-4f);
        EXPECT_EQ(c.lookalike_x[0], 45.0f);
        EXPECT_EQ(c.lookalike_y[0], 37.0f);
        EXPECT_NEAR(c.lookalike_found[1], 1.0f, 1e-4f);
        EXPECT_EQ(c.lookalike_x[1], 5.0f);
        EXPECT_EQ(c.lookalike_y[1], 11.0f);
    }
    if (!cuda_available()) GTEST_SKIP() << "no GPU: the CPU half ran";
    GpuContext gpu;
    auto close = [](float a, float b) { return std::fabs(a - b) <= 1e-5f * std::max(1.0f, std::fabs(b)); };
    for (const char* kernel : {"cuda_dp4a_ilp", "cuda_mma"}) {  // exact maps: equal peaks
        auto gpu_backend = make_gpu_search(kernel, gpu, &error);
        ASSERT_TRUE(gpu_backend) << error;
        for (int round = 0; round < 2; ++round) {  // the second reuses every buffer
            const std::vector<RankedPeak> got = search(*gpu_backend);
            ASSERT_EQ(got.size(), cpu.size());
            for (std::size_t i = 0; i < cpu.size(); ++i) {
                const std::string what = std::string(kernel) + " request " + std::to_string(i);
                const RankedPeak &g = got[i], &c = cpu[i];
                EXPECT_EQ(g.peak.x, c.peak.x) << what;
                EXPECT_EQ(g.peak.y, c.peak.y) << what;
                for (int d = 0; d < RankedPeak::kLookalikes; ++d) {
                    EXPECT_EQ(g.lookalike_x[d], c.lookalike_x[d]) << what;
                    EXPECT_EQ(g.lookalike_y[d], c.lookalike_y[d]) << what;
                }
                for (const auto& [name, a, b] :
                     {std::make_tuple("score", g.peak.score, c.peak.score),
                      std::make_tuple("sub_x", g.peak.sub_x, c.peak.sub_x),
                      std::make_tuple("sub_y", g.peak.sub_y, c.peak.sub_y),
                      std::make_tuple("psr", g.peak.psr, c.peak.psr), std::make_tuple("ranked", g.ranked, c.ranked),
                      std::make_tuple("lookalike", g.lookalike, c.lookalike),
                      std::make_tuple("found0", g.lookalike_found[0], c.lookalike_found[0]),
                      std::make_tuple("found1", g.lookalike_found[1], c.lookalike_found[1])})
                    EXPECT_TRUE(close(a, b)) << what << ": " << name << " " << a << " want " << b;
                if (i >= 12) continue;  // the GPU fills rivals only where asked
                EXPECT_TRUE(close(g.rival, c.rival)) << what << ": rival " << g.rival << " want " << c.rival;
                EXPECT_TRUE(close(g.rival_of, c.rival_of)) << what;
                EXPECT_EQ(g.rival_x, c.rival_x) << what;
                EXPECT_EQ(g.rival_y, c.rival_y) << what;
            }
        }
    }
}

}  // namespace
}  // namespace corrtrack
