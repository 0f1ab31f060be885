// The kernel library's bounded caches, white-box (its private cpu/ and cuda/ headers): the FFT
// numerator's plan cache and auto's memory of problem shapes stay bounded however many sizes
// a long run meets, and auto times only the problems worth timing.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "corrtrack/cuda_util.h"
#include "cpu/cpu_kernels.h"
#include "cuda/cuda_kernels.h"
#include "tests/support/random_image.h"

namespace corrtrack {
namespace {

// No winners from an earlier run on disk (auto_cache.h): these tests count timing rounds.
// Set before main, so before auto first reads it.
const bool kNoDiskCache = setenv("CORRTRACK_NO_CACHE", "1", 1) == 0;

// Windows of ever new sizes (a re-detection at a drifting scale) reuse a bounded set of FFT
// plans, and every result stays exact.
TEST(BoundedCaches, FftPlansStayBoundedAndExact) {
    const test::OwnedImage templ = test::random_image(24, 20, 5);
    FftNumerator fft;
    fft.set_template(templ.view());
    const std::size_t created_before = FftNumerator::plans_created();
    for (int k = 0; k < 60; ++k) {
        const Size size{120 + 7 * k, 90 + 5 * k};
        const test::OwnedImage image = test::random_image(size.width, size.height, 100 + k);
        const Size out{size.width - 23, size.height - 19};
        std::vector<std::uint32_t> a(static_cast<std::size_t>(out.width) * out.height), b(a.size());
        fft.run(image.view(), a.data(), out.width);
        direct_numerator(image.view(), templ.view(), b.data(), out.width);
        ASSERT_EQ(a, b) << "size " << size.width << "x" << size.height;
        EXPECT_LE(FftNumerator::cached_plans(), kFftPlanCacheSize);
    }
    EXPECT_GE(FftNumerator::plans_created() - created_before, 40u);
}

// Buffers that grow() (the GPU search's atlas and maps, template stacks) reallocate a few
// times as their size creeps up one step at a time, not at every new maximum.
TEST(BoundedCaches, BuffersGrowWithHeadroom) {
    EXPECT_EQ(grown_capacity(100, 0), 125u);      // a quarter more at first
    EXPECT_EQ(grown_capacity(126, 125), 250u);    // twice after
    EXPECT_EQ(grown_capacity(1000, 125), 1250u);  // or what is asked, with its quarter
    std::size_t capacity = 0;
    int reallocations = 0;
    for (std::size_t size = 1000; size <= 256000; size += 1000)  // a target added at a time
        if (size > capacity) {
            capacity = grown_capacity(size, capacity);
            ++reallocations;
        }
    EXPECT_LE(reallocations, 9);  // log2(256) + 1, not 256
}

// A frame uploaded to the device and room for a float map of the same size (auto's tests).
struct DeviceFrame {
    explicit DeviceFrame(const test::OwnedImage& image) : width(image.width), height(image.height) {
        const std::size_t n = image.pixels.size();
        if (cudaMalloc(&pixels, n) != cudaSuccess || cudaMalloc(&map, n * sizeof(float)) != cudaSuccess ||
            cudaMemcpy(pixels, image.pixels.data(), n, cudaMemcpyHostToDevice) != cudaSuccess)
            failed = true;
    }
    ~DeviceFrame() {
        cudaFree(pixels);
        cudaFree(map);
    }
    DeviceFrame(const DeviceFrame&) = delete;
    DeviceFrame& operator=(const DeviceFrame&) = delete;
    bool ok() const { return !failed; }
    ImageView view() const { return {pixels, width, height, static_cast<std::size_t>(width), MemorySpace::kDevice}; }
    int width, height;
    std::uint8_t* pixels = nullptr;
    float* map = nullptr;
    bool failed = false;
};

// auto remembers at most 64 buckets of shapes however many it meets (a re-detection window
// that drifts through sizes for hours), the least recently used forgotten. 8 x 8 template
// sides x 2 window sizes are 128 buckets. GPU only.
TEST(BoundedCaches, AutoRemembersABoundedNumberOfShapes) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU here";
    const DeviceFrame dev(test::random_image(256, 192, 7));
    ASSERT_TRUE(dev.ok());
    auto corr = make_auto();
    auto* a = dynamic_cast<AutoSelect*>(corr.get());
    ASSERT_TRUE(a);
    const ImageView view = dev.view();
    const int sides[] = {4, 8, 12, 16, 24, 32, 48, 64};
    for (int k = 0; k < 128; ++k) {
        const Size t{sides[k % 8], sides[(k / 8) % 8]};
        const test::OwnedImage templ = test::random_image(t.width, t.height, 8 + k);
        corr->set_template(templ.view(), nullptr);
        const Rect roi = k < 64 ? Rect{0, 0, 256, 192} : Rect{0, 0, 128, 96};
        const NccProblem p{{256, 192}, t, roi, 1};
        const Size o = p.out_size();
        corr->run(view, p, {dev.map, o.width, o.height, static_cast<std::size_t>(o.width), MemorySpace::kDevice},
                  nullptr);
        ASSERT_LE(a->remembered_shapes(), 64u) << k;
    }
    EXPECT_EQ(a->remembered_shapes(), 64u);  // the bound was reached and held
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

// A small problem goes untimed to cuda_dp4a_ilp (a 16x16 template in a window), or with one
// larger template to cuda_mma_fused (sm_80+), a small batch of 16 or more windows to
// cuda_mma_fused_w4 (sm_80+); a full 1080p frame with a 64x64 template (7.7G multiply-adds)
// is timed once, without cuda_fft, and its winner is then reused; a 128x128 template's round
// times cuda_fft too. GPU only.
TEST(AutoSelect, SmallProblemsUntimedLargeOnesTimedOnce) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU here";
    ASSERT_TRUE(kNoDiskCache);
    setenv("CORRTRACK_AUTO_TIMING", "sync", 1);  // the round on the caller's stream, as it returns
    const test::OwnedImage templ = test::random_image(64, 64, 4);
    const DeviceFrame dev(test::random_image(1920, 1080, 3));
    ASSERT_TRUE(dev.ok());
    auto corr = make_auto();
    auto* a = dynamic_cast<AutoSelect*>(corr.get());
    ASSERT_TRUE(a);
    corr->set_template(templ.view(), nullptr);
    const ImageView view = dev.view();
    auto run = [&](const Rect& roi) {
        const NccProblem p{{1920, 1080}, {64, 64}, roi, 1};
        const Size o = p.out_size();
        corr->run(view, p, {dev.map, o.width, o.height, static_cast<std::size_t>(o.width), MemorySpace::kDevice},
                  nullptr);
        return p;
    };
    const NccProblem small = run(Rect{500, 300, 160, 160});  // 97x97 positions x 4096: 39M
    const std::string single = cuda_mma_available() ? "cuda_mma_fused" : "cuda_dp4a_ilp";
    EXPECT_EQ(a->choice(small), single);
    EXPECT_EQ(a->last_timings().rfind("untimed: " + single, 0), 0u) << a->last_timings();
    {  // a 16x16 template over a window (0.6M) and over 640x480 (2^26 and more: 74M)
        const test::OwnedImage t16 = test::random_image(16, 16, 6);
        auto small16 = make_auto();
        auto* c = dynamic_cast<AutoSelect*>(small16.get());
        ASSERT_TRUE(c);
        small16->set_template(t16.view(), nullptr);
        for (const Rect roi : {Rect{500, 300, 64, 64}, Rect{0, 0, 640, 480}}) {
            const NccProblem p{{1920, 1080}, {16, 16}, roi, 1};
            const Size o = p.out_size();
            small16->run(view, p, {dev.map, o.width, o.height, static_cast<std::size_t>(o.width), MemorySpace::kDevice},
                         nullptr);
            const std::string want = roi.width == 640 ? single : "cuda_dp4a_ilp";
            EXPECT_EQ(c->choice(p), want) << roi.width;
            EXPECT_EQ(c->last_timings().rfind("untimed: " + want, 0), 0u) << c->last_timings();
        }
    }
    // A stack of 3 templates stays on cuda_dp4a_ilp; a small batch of 24 windows (8 targets)
    // goes to the batched tensor-core kernel on sm_80+; both untimed.
    for (const int count : {3, 24}) {
        const test::OwnedImage stack = test::random_image(64, 64 * count, 5);
        auto batched = make_auto();
        auto* b = dynamic_cast<AutoSelect*>(batched.get());
        ASSERT_TRUE(b);
        batched->set_template(stack.view(), nullptr);
        const NccProblem p{{1920, 1080}, {64, 64}, Rect{500, 0, 160, 160}, count, 36};
        const Size o = p.out_size();
        batched->run(view, p,
                     {dev.map, o.width, o.height * count, static_cast<std::size_t>(o.width), MemorySpace::kDevice},
                     nullptr);
        const std::string want = count >= 16 && cuda_mma_available() ? "cuda_mma_fused_w4" : "cuda_dp4a_ilp";
        EXPECT_EQ(b->choice(p), want) << count << " templates";
        EXPECT_EQ(b->last_timings().rfind("untimed: " + want, 0), 0u) << b->last_timings();
    }
    const NccProblem full = run(Rect{0, 0, 1920, 1080});
    const std::string timings = a->last_timings();
    EXPECT_EQ(timings.find("untimed"), std::string::npos) << timings;
    EXPECT_NE(timings.find("cuda_mma"), std::string::npos) << timings;  // the candidates were timed
    // cuFFT never wins at 64x64 and its plan would stall the stream: not timed.
    EXPECT_EQ(timings.find("cuda_fft"), std::string::npos) << timings;
    const std::string winner = a->choice(full);
    EXPECT_EQ(timings.rfind(winner + " ", 0), 0u) << timings;  // the fastest is listed first
    run(Rect{0, 0, 1920, 1080});
    EXPECT_EQ(a->last_timings(), timings);  // no second round
    {  // a 128x128 template over 640x480 (3.0G): large enough for cuda_fft to be timed too
        const test::OwnedImage t128 = test::random_image(128, 128, 7);
        auto large = make_auto();
        auto* l = dynamic_cast<AutoSelect*>(large.get());
        ASSERT_TRUE(l);
        large->set_template(t128.view(), nullptr);
        const NccProblem p{{1920, 1080}, {128, 128}, Rect{0, 0, 640, 480}, 1};
        const Size o = p.out_size();
        large->run(view, p, {dev.map, o.width, o.height, static_cast<std::size_t>(o.width), MemorySpace::kDevice},
                   nullptr);
        EXPECT_NE(l->last_timings().find("cuda_fft "), std::string::npos) << l->last_timings();
    }
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    unsetenv("CORRTRACK_AUTO_TIMING");
}

// By default a large new problem runs the rule-based kernel at once and is timed on a worker
// thread; the bucket switches to the winner when the round is done, and the map stays the same
// NCC throughout. GPU only.
TEST(AutoSelect, LargeProblemsTimedInTheBackground) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU here";
    unsetenv("CORRTRACK_AUTO_TIMING");
    const test::OwnedImage templ = test::random_image(48, 48, 11);  // a bucket no other test times
    const DeviceFrame dev(test::random_image(1920, 1080, 12));
    ASSERT_TRUE(dev.ok());
    auto corr = make_auto();
    auto* a = dynamic_cast<AutoSelect*>(corr.get());
    ASSERT_TRUE(a);
    corr->set_template(templ.view(), nullptr);
    const NccProblem p = NccProblem::full_frame({1920, 1080}, {48, 48});  // 3.9G multiply-adds: timed
    const Size o = p.out_size();
    const MapView out{dev.map, o.width, o.height, static_cast<std::size_t>(o.width), MemorySpace::kDevice};
    std::vector<float> first(static_cast<std::size_t>(o.width) * o.height), later(first.size());
    corr->run(dev.view(), p, out, nullptr);
    // Meanwhile the one-pass tensor-core kernel, the winner of every recorded round (sm_80+).
    const std::string meanwhile = cuda_mma_available() ? "cuda_mma_fused" : "cuda_dp4a_ilp";
    EXPECT_EQ(a->last_timings().rfind("provisional: " + meanwhile + " ", 0), 0u) << a->last_timings();
    ASSERT_EQ(cudaMemcpy(first.data(), dev.map, first.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    const auto t0 = std::chrono::steady_clock::now();
    while (a->choice(p).empty() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60)) {
        corr->run(dev.view(), p, out, nullptr);  // meanwhile, the provisional kernel
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const std::string winner = a->choice(p);
    ASSERT_FALSE(winner.empty()) << "the background round did not finish in 60 s";
    corr->run(dev.view(), p, out, nullptr);
    EXPECT_EQ(corr->info().summary, "auto -> " + winner);
    ASSERT_EQ(cudaMemcpy(later.data(), dev.map, later.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    float worst = 0;
    for (std::size_t i = 0; i < first.size(); ++i) worst = std::max(worst, std::abs(first[i] - later[i]));
    EXPECT_LT(worst, 1e-4f) << "provisional vs " << winner;
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
}  // namespace corrtrack
