// CudaPeakFinder against find_peak on the same maps: random maps from 1x1 to 1000x700 and very
// wide or tall ones, pitched rows, ties inside one block and across blocks, plateaus, peaks on
// every border, smooth peaks for the sub-pixel fit, exclusion radii from 1 to beyond the map.
// Integer peak, score and second must be identical; sub-pixel and PSR within 1e-5 relative.
// Skipped with a message without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "corrtrack/correlator.h"
#include "corrtrack/cuda_peak.h"
#include "corrtrack/peak.h"

namespace corrtrack {
namespace {

struct HostMap {
    int w = 0, h = 0;
    std::vector<float> v;
    float& at(int x, int y) { return v[static_cast<std::size_t>(y) * w + x]; }
    MapView view() { return {v.data(), w, h, static_cast<std::size_t>(w), MemorySpace::kHost}; }
};

HostMap random_map(int w, int h, std::uint32_t seed) {
    HostMap m{w, h, std::vector<float>(static_cast<std::size_t>(w) * h)};
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 0.9f);
    for (float& x : m.v) x = dist(rng);
    return m;
}

// A smooth bump (an NCC peak's shape) centred off the pixel grid, over low noise.
HostMap bump_map(int w, int h, float cx, float cy, std::uint32_t seed) {
    HostMap m = random_map(w, h, seed);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const float d2 = (x - cx) * (x - cx) + (y - cy) * (y - cy);
            m.at(x, y) = 0.05f * m.at(x, y) + 0.95f * std::exp(-d2 / 8.0f);
        }
    return m;
}

bool close(float got, float want) { return std::fabs(got - want) <= 1e-5f * std::max(1.0f, std::fabs(want)); }

class CudaPeak : public ::testing::Test {
protected:
    void SetUp() override {
        if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine: CudaPeakFinder tests skipped";
        ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
        finder_ = std::make_unique<CudaPeakFinder>();
    }
    void TearDown() override {
        finder_.reset();
        if (stream_) cudaStreamDestroy(stream_);
        if (device_) cudaFree(device_);
    }

    // Copies the map to the device with a pitch that is not the width, then queues the search.
    void find(const HostMap& m, PeakOptions opt) {
        const std::size_t pitch = static_cast<std::size_t>(m.w) + 3;
        const std::size_t bytes = pitch * m.h * sizeof(float);
        if (bytes > device_bytes_) {
            if (device_) {
                ASSERT_EQ(cudaFree(device_), cudaSuccess);
            }
            ASSERT_EQ(cudaMalloc(&device_, bytes), cudaSuccess);
            device_bytes_ = bytes;
        }
        ASSERT_EQ(cudaMemset(device_, 0xff, bytes), cudaSuccess);  // NaN in the padding
        ASSERT_EQ(cudaMemcpy2D(device_, pitch * sizeof(float), m.v.data(), m.w * sizeof(float), m.w * sizeof(float),
                               m.h, cudaMemcpyHostToDevice),
                  cudaSuccess);
        finder_->find({device_, m.w, m.h, pitch, MemorySpace::kDevice}, stream_, opt);
    }

    void expect_same(HostMap m, PeakOptions opt, const std::string& what) {
        find(m, opt);
        const Peak got = finder_->get();
        ASSERT_EQ(cudaGetLastError(), cudaSuccess) << what;
        const Peak want = find_peak(m.view(), opt);
        EXPECT_EQ(got.x, want.x) << what;
        EXPECT_EQ(got.y, want.y) << what;
        EXPECT_EQ(got.score, want.score) << what;
        EXPECT_EQ(got.second, want.second) << what;
        EXPECT_TRUE(close(got.sub_x, want.sub_x)) << what << ": sub_x " << got.sub_x << " want " << want.sub_x;
        EXPECT_TRUE(close(got.sub_y, want.sub_y)) << what << ": sub_y " << got.sub_y << " want " << want.sub_y;
        EXPECT_TRUE(close(got.psr, want.psr)) << what << ": psr " << got.psr << " want " << want.psr;
    }

    cudaStream_t stream_ = nullptr;
    float* device_ = nullptr;
    std::size_t device_bytes_ = 0;
    std::unique_ptr<CudaPeakFinder> finder_;
};

TEST_F(CudaPeak, RandomMapsOfManyShapes) {
    const Size shapes[] = {{1, 1},   {1, 9},     {9, 1},      {2, 2},    {3, 3},    {17, 5},   {5, 17},
                           {64, 64}, {333, 171}, {1000, 700}, {4000, 3}, {3, 4000}, {1921, 1}, {1, 1081}};
    std::uint32_t seed = 1;
    for (Size s : shapes)
        for (int radius : {0, 1, 3}) {
            const std::string what =
                std::to_string(s.width) + "x" + std::to_string(s.height) + " radius " + std::to_string(radius);
            expect_same(random_map(s.width, s.height, seed++), PeakOptions{radius}, what);
        }
}

TEST_F(CudaPeak, SubPixelOnSmoothPeaks) {
    const float centres[][2] = {{12.3f, 7.6f}, {40.5f, 30.5f}, {0.2f, 20.0f}, {63.8f, 0.1f}, {31.0f, 17.0f}};
    std::uint32_t seed = 100;
    for (const auto& c : centres)
        expect_same(bump_map(64, 48, c[0], c[1], seed++), {},
                    "bump at " + std::to_string(c[0]) + "," + std::to_string(c[1]));
}

TEST_F(CudaPeak, TiesPickTheFirstInRowMajorOrder) {
    HostMap flat{37, 23, std::vector<float>(37 * 23, 0.25f)};
    expect_same(flat, {}, "constant map");

    HostMap m = random_map(50, 40, 7);
    m.at(3, 7) = 0.95f;
    m.at(10, 2) = 0.95f;  // earlier row wins
    m.at(40, 2) = 0.95f;
    expect_same(m, {}, "ties in different rows");
    m.at(1, 2) = 0.95f;  // earlier in the same row wins
    expect_same(m, {}, "ties in one row");

    // Rows far apart land in different blocks (and the last one in the last block).
    HostMap big = random_map(800, 600, 8);
    for (int y : {599, 300, 1, 450})
        for (int x : {700, 5, 799}) big.at(x, y) = 0.99f;
    expect_same(big, {}, "ties across blocks");

    HostMap plateau = random_map(30, 30, 9);
    for (int y = 10; y < 13; ++y)
        for (int x = 14; x < 17; ++x) plateau.at(x, y) = 0.97f;
    expect_same(plateau, {}, "3x3 plateau");
}

TEST_F(CudaPeak, PeaksOnTheBorders) {
    const int w = 41, h = 29;
    const int spots[][2] = {{0, 0}, {w - 1, 0}, {0, h - 1}, {w - 1, h - 1}, {0, 13}, {w - 1, 13}, {20, 0}, {20, h - 1}};
    std::uint32_t seed = 200;
    for (const auto& p : spots) {
        HostMap m = random_map(w, h, seed++);
        m.at(p[0], p[1]) = 0.999f;
        expect_same(m, {}, "peak at " + std::to_string(p[0]) + "," + std::to_string(p[1]));
    }
}

TEST_F(CudaPeak, ExclusionZones) {
    HostMap m = bump_map(90, 70, 44.4f, 33.3f, 300);
    for (int radius : {1, 2, 5, 20, 69, 89, 1000, 2147483647})
        expect_same(m, PeakOptions{radius}, "radius " + std::to_string(radius));
    // The zone covers the whole map: no sidelobe at all (second 0, PSR 0).
    HostMap small = random_map(4, 3, 301);
    expect_same(small, {}, "zone covers the map");
    // Flat outside the zone: standard deviation 0, clamped as find_peak clamps it.
    HostMap spike{25, 25, std::vector<float>(25 * 25, -0.5f)};
    spike.at(12, 12) = 1.0f;
    expect_same(spike, {}, "flat sidelobes");
}

TEST_F(CudaPeak, GetReturnsTheLastFindAndShapesMayChange) {
    EXPECT_EQ(finder_->get().score, Peak{}.score);  // before any find()
    HostMap a = random_map(200, 100, 400);
    HostMap b = random_map(31, 300, 401);
    find(a, {});
    find(b, {});  // same stream: ordered after a's search
    const Peak got = finder_->get();
    const Peak want = find_peak(b.view(), {});
    EXPECT_EQ(got.x, want.x);
    EXPECT_EQ(got.y, want.y);
    EXPECT_EQ(got.score, want.score);
    expect_same(a, {}, "first shape again");
}

}  // namespace
}  // namespace corrtrack
