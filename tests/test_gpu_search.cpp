// The GPU search's own machinery against its host twins: DevicePyramid's levels (built up to
// three levels a launch, each pixel through the chain of halvings) equal HostPyramid's bit for
// bit, and many targets (more items than one launch takes by value, so the launchers read
// them from mapped memory in one launch) track as on the CPU. GPU only: skipped without one.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "app/track/device_pyramid.h"
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

}  // namespace
}  // namespace corrtrack
