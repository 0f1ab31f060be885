// Soak: eight targets, three scales, at least 20000 frames rendered in memory: resident memory
// and the tracker's time per frame must stay flat after warm-up (memory growth under 10%), so a camera
// left running for hours cannot exhaust memory or slow down. The targets zoom in and out, so
// every search sees many window sizes (the case that made FFT plan and spectrum caches grow).
// Only MultiTracker's public API is used (add_target / update / size).
// Environment: CORRTRACK_SOAK_FRAMES (default 20000), CORRTRACK_SOAK_KERNEL (default cpu_fast;
// "auto" on a GPU), CORRTRACK_SOAK_REPORT=path writes the measurements as JSON (scripts/soak.sh),
// CORRTRACK_SOAK_TIME_GROWTH=x bounds the time per frame at the end to x times the start.
// Without it (ctest) the time is printed and not asserted: on a shared 2-core CI machine thread
// CPU time moved by up to 1.5x with the work unchanged, so a time bound there fails at random.
// scripts/soak.sh and gpu_check's soak step, benchmark runs on a quiet machine, set 1.10.
#include <gtest/gtest.h>

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/track/tracker.h"

namespace corrtrack {
namespace {

constexpr int kWidth = 640, kHeight = 480, kTargets = 8, kPatch = 64;

long env_long(const char* name, long fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::atol(v) : fallback;
}

double resident_mib() {
    std::ifstream statm("/proc/self/statm");
    long pages = 0, resident = 0;
    statm >> pages >> resident;
    return resident * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

double thread_cpu_ms() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

// Smooth random texture: bilinear upsampling of coarse noise, plus fine noise.
std::vector<std::uint8_t> texture(int w, int h, int cell, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> u(0, 255), fine(-12, 12);
    const int cw = w / cell + 2, ch = h / cell + 2;
    std::vector<int> coarse(static_cast<std::size_t>(cw) * ch);
    for (int& c : coarse) c = u(rng);
    std::vector<std::uint8_t> out(static_cast<std::size_t>(w) * h);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const double fx = static_cast<double>(x) / cell, fy = static_cast<double>(y) / cell;
            const int ix = static_cast<int>(fx), iy = static_cast<int>(fy);
            const double ax = fx - ix, ay = fy - iy;
            const auto at = [&](int i, int j) { return coarse[static_cast<std::size_t>(j) * cw + i]; };
            const double v = (1 - ay) * ((1 - ax) * at(ix, iy) + ax * at(ix + 1, iy)) +
                             ay * ((1 - ax) * at(ix, iy + 1) + ax * at(ix + 1, iy + 1));
            out[static_cast<std::size_t>(y) * w + x] = static_cast<std::uint8_t>(std::clamp(v + fine(rng), 0.0, 255.0));
        }
    return out;
}

// Eight textured patches on a textured background, each zooming between 0.88x and 1.12x on its
// own period and drifting slowly; every kCycle frames each target in turn is hidden for
// kHidden frames (lost, searched for over the whole frame at its drifting scale, found again):
// frame t is a pure function of t.
class Scene {
public:
    Scene() : background_(texture(kWidth, kHeight, 24, 7)) {
        for (int i = 0; i < kTargets; ++i) {
            patches_.push_back(texture(kPatch, kPatch, 6, 100 + i));
            centres_.push_back({90.0 + (i % 4) * 150.0, 130.0 + (i / 4) * 220.0});
        }
    }
    double zoom(int i, long t) const { return 1.0 + 0.12 * std::sin(6.283185 * t / (160.0 + 23 * i) + i); }
    double cx(int i, long t) const { return centres_[i].first + 12 * std::sin(6.283185 * t / (300.0 + 17 * i)); }
    double cy(int i, long t) const { return centres_[i].second + 9 * std::cos(6.283185 * t / (270.0 + 11 * i)); }
    BoxF box(int i, long t) const {
        const double s = kPatch * zoom(i, t);
        return {cx(i, t) - s / 2, cy(i, t) - s / 2, s, s};
    }
    static constexpr long kCycle = 400, kHidden = 30;
    bool hidden(int i, long t) const {
        const long phase = t % kCycle - (kCycle / kTargets) * i;
        return t >= kCycle && phase >= 0 && phase < kHidden;
    }
    void render(long t, std::vector<std::uint8_t>& frame) const {
        frame = background_;
        for (int i = 0; i < kTargets; ++i) {
            if (hidden(i, t)) continue;
            const BoxF b = box(i, t);
            const double inv = kPatch / b.width;
            for (int y = static_cast<int>(b.y); y < static_cast<int>(b.y + b.height); ++y)
                for (int x = static_cast<int>(b.x); x < static_cast<int>(b.x + b.width); ++x) {
                    const double u = (x + 0.5 - b.x) * inv - 0.5, v = (y + 0.5 - b.y) * inv - 0.5;
                    const int iu = std::clamp(static_cast<int>(std::floor(u)), 0, kPatch - 2);
                    const int iv = std::clamp(static_cast<int>(std::floor(v)), 0, kPatch - 2);
                    const double au = std::clamp(u - iu, 0.0, 1.0), av = std::clamp(v - iv, 0.0, 1.0);
                    const auto& p = patches_[static_cast<std::size_t>(i)];
                    const auto at = [&](int a, int c) { return p[static_cast<std::size_t>(c) * kPatch + a]; };
                    const double val = (1 - av) * ((1 - au) * at(iu, iv) + au * at(iu + 1, iv)) +
                                       av * ((1 - au) * at(iu, iv + 1) + au * at(iu + 1, iv + 1));
                    frame[static_cast<std::size_t>(y) * kWidth + x] = static_cast<std::uint8_t>(val + 0.5);
                }
        }
    }

private:
    std::vector<std::uint8_t> background_;
    std::vector<std::vector<std::uint8_t>> patches_;
    std::vector<std::pair<double, double>> centres_;
};

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

TEST(Soak, EightTargetsThreeScalesStayFlatInMemoryAndTime) {
    const long frames = std::max(env_long("CORRTRACK_SOAK_FRAMES", 20000), 6000L);
    const char* kernel_env = std::getenv("CORRTRACK_SOAK_KERNEL");
    TrackerOptions options;
    options.kernel = kernel_env && *kernel_env ? kernel_env : "cpu_fast";
    options.scales = 3;
    MultiTracker tracker(options);
    std::string error;
    ASSERT_TRUE(tracker.set_kernel(options.kernel, &error)) << error;

    Scene scene;
    std::vector<std::uint8_t> frame;
    scene.render(0, frame);
    const ImageView view{frame.data(), kWidth, kHeight, static_cast<std::size_t>(kWidth), MemorySpace::kHost};
    for (int i = 0; i < kTargets; ++i) ASSERT_GE(tracker.add_target(view, scene.box(i, 0), &error), 0) << error;
    ASSERT_EQ(tracker.size(), kTargets);

    // Per window of frames: the time of update() (thread CPU time, so other jobs on the machine
    // count as little as they can; wall time where the kernel runs on a GPU) as its median and
    // its 10th percentile, and RSS at the window's end. Warm-up is the first quarter: by then
    // every target has been lost and found again at several scales, so the search buffers
    // (grown to the largest search, then kept) are full size; after it nothing may grow.
    // The time compared is the best 10th percentile of three windows at each end: a slower
    // machine for a while (other jobs sharing its cores and caches) moves the median a lot and
    // the best low percentile little, while any growth of the work itself moves both.
    const long window = 1000, warmup = frames / 4 / window * window;
    const bool gpu = tracker.on_gpu();
    std::vector<double> window_ms, window_p10, window_rss, times;
    long lost = 0, lost_while_visible = 0, settled_frames = 0, on_target = 0;
    for (long t = 1; t < frames; ++t) {
        scene.render(t, frame);
        const auto wall0 = std::chrono::steady_clock::now();
        const double cpu0 = thread_cpu_ms();
        const std::vector<TrackResult>& results = tracker.update(view);
        times.push_back(
            gpu ? std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall0).count()
                : thread_cpu_ms() - cpu0);
        for (int i = 0; i < kTargets; ++i) {
            const TrackResult& r = results[static_cast<std::size_t>(i)];
            lost += r.lost;
            // Visible and not within a few frames of reappearing: must be tracked, and well.
            const bool settled = !scene.hidden(i, t) && !scene.hidden(i, t - 5);
            if (!settled) continue;
            ++settled_frames;
            lost_while_visible += r.lost;
            on_target += !r.lost && std::hypot(r.box.cx() - scene.cx(i, t), r.box.cy() - scene.cy(i, t)) < 8.0;
        }
        if (t % window == 0) {
            window_ms.push_back(median_of(times));
            std::sort(times.begin(), times.end());
            window_p10.push_back(times[times.size() / 10]);
            window_rss.push_back(resident_mib());
            times.clear();
            double wmin = 1e9, wmax = 0;
            for (const TrackResult& r : results) wmin = std::min(wmin, r.box.width), wmax = std::max(wmax, r.box.width);
            std::printf("soak: frame %6ld  update median %.3f ms  p10 %.3f ms  RSS %.1f MiB  boxes %.0f..%.0f px\n", t,
                        window_ms.back(), window_p10.back(), window_rss.back(), wmin, wmax);
            std::fflush(stdout);
        }
    }
    ASSERT_GE(window_ms.size(), 5u);
    const std::size_t base = static_cast<std::size_t>(warmup / window) - 1;  // the window ending at warm-up
    const double rss_start = window_rss[base], rss_end = window_rss.back();
    const double ms_start = *std::min_element(window_p10.begin() + base + 1, window_p10.begin() + base + 4);
    const double ms_end = *std::min_element(window_p10.end() - 3, window_p10.end());
    std::printf(
        "soak: %ld frames, kernel %s, 8 targets x 3 scales: RSS %.1f -> %.1f MiB (peak window %.1f), "
        "update %.3f -> %.3f ms per frame (best p10 of 3 windows, %s), %ld target-frames lost (%ld while "
        "visible), %.1f%% of visible "
        "target-frames within 8 px\n",
        frames, options.kernel.c_str(), rss_start, rss_end,
        *std::max_element(window_rss.begin() + base, window_rss.end()), ms_start, ms_end, gpu ? "wall" : "thread CPU",
        lost, lost_while_visible, 100.0 * on_target / std::max(settled_frames, 1L));
    if (const char* path = std::getenv("CORRTRACK_SOAK_REPORT"); path && *path) {
        std::ofstream(path) << nlohmann::json{{"frames", frames},
                                              {"kernel", options.kernel},
                                              {"warmup_frames", warmup},
                                              {"gpu", gpu},
                                              {"window_frames", window},
                                              {"rss_mib", window_rss},
                                              {"update_ms_median", window_ms},
                                              {"update_ms_p10", window_p10},
                                              {"rss_start_mib", rss_start},
                                              {"rss_end_mib", rss_end},
                                              {"ms_start", ms_start},
                                              {"ms_end", ms_end},
                                              {"lost_target_frames", lost},
                                              {"lost_while_visible", lost_while_visible},
                                              {"within_8px_share",
                                               static_cast<double>(on_target) / std::max(settled_frames, 1L)}}
                                   .dump(2)
                            << "\n";
    }
    EXPECT_LT(rss_end, rss_start * 1.10) << "resident memory grew";
    for (std::size_t w = base; w < window_rss.size(); ++w)
        EXPECT_LT(window_rss[w], rss_start * 1.10) << "resident memory grew on the way (window " << w << ")";
    // The time per frame is a benchmark's bound (scripts/soak.sh, gpu_check's soak step set
    // CORRTRACK_SOAK_TIME_GROWTH on a quiet machine); under ctest it is printed only, since a
    // shared 2-core machine moved thread CPU time by 1.5x with no change in the work.
    if (const char* growth_env = std::getenv("CORRTRACK_SOAK_TIME_GROWTH"); growth_env && std::atof(growth_env) > 1.0) {
        const double growth = std::atof(growth_env);
        EXPECT_LT(ms_end, ms_start * growth) << "the time per frame grew by more than " << growth << "x";
    }
    // It must also be tracking, losing and finding again, or it would prove nothing about
    // those paths: hidden targets are lost, and many visible ones are on target. (Tracking
    // quality is test_tracker's and test_eval_real's business; this bar only says "tracking".)
    EXPECT_GT(lost, kTargets * Scene::kHidden);
    EXPECT_GT(on_target, settled_frames / 4);
}

}  // namespace
}  // namespace corrtrack
