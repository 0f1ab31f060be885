// GPU integral images (kernels/cuda/integral.cu) against the CPU tables, entry by entry: rois
// at the frame edges, odd offsets and pitches, rows that cross the scan tile, heights with
// empty column segments, and all-255 images at the limits (4K UHD, 4096 x 4096 for the uint32
// sum table, 65536 wide for the packed row scan), and the template stacks' row prefix. Skips
// without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "corrtrack/correlator.h"
#include "cpu/integral.h"
#include "cuda/integral.cuh"
#include "tests/support/random_image.h"

namespace corrtrack {
namespace {

struct IntegralCase {
    Size frame;
    Rect roi;
    int fill;  // -1: random pixels, else every pixel this value
};

std::string describe(const IntegralCase& c) {
    return "frame " + std::to_string(c.frame.width) + "x" + std::to_string(c.frame.height) + " roi " +
           std::to_string(c.roi.x) + "," + std::to_string(c.roi.y) + " " + std::to_string(c.roi.width) + "x" +
           std::to_string(c.roi.height) + (c.fill >= 0 ? " fill " + std::to_string(c.fill) : " random");
}

void check_case(const IntegralCase& c, std::uint32_t seed) {
    SCOPED_TRACE(describe(c));
    test::OwnedImage img = test::random_image(c.frame.width, c.frame.height, seed);
    if (c.fill >= 0) std::fill(img.pixels.begin(), img.pixels.end(), static_cast<std::uint8_t>(c.fill));

    std::uint8_t* d_frame = nullptr;
    std::size_t pitch = 0;
    ASSERT_EQ(cudaMallocPitch(&d_frame, &pitch, c.frame.width, c.frame.height), cudaSuccess);
    ASSERT_EQ(cudaMemcpy2D(d_frame, pitch, img.pixels.data(), c.frame.width, c.frame.width, c.frame.height,
                           cudaMemcpyHostToDevice),
              cudaSuccess);
    cudaStream_t stream;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    const ImageView frame{d_frame, c.frame.width, c.frame.height, pitch, MemorySpace::kDevice};

    GpuIntegral gpu;
    ASSERT_TRUE(GpuIntegral::supports({c.roi.width, c.roi.height}, nullptr));
    gpu.build(frame.sub(c.roi), stream);
    // A second build at the same shape reuses the storage and must give the same tables.
    gpu.build(frame.sub(c.roi), stream);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);

    const IntegralTables t = gpu.tables();
    const std::size_t s = static_cast<std::size_t>(c.roi.width) + 1;
    ASSERT_EQ(t.pitch, s);
    const std::size_t entries = s * (static_cast<std::size_t>(c.roi.height) + 1);
    std::vector<std::uint32_t> sum(entries);
    std::vector<std::uint64_t> sum_sq(entries);
    ASSERT_EQ(cudaMemcpy(sum.data(), t.sum, entries * sizeof(std::uint32_t), cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(sum_sq.data(), t.sum_sq, entries * sizeof(std::uint64_t), cudaMemcpyDeviceToHost),
              cudaSuccess);
    cudaStreamDestroy(stream);
    cudaFree(d_frame);

    IntegralImages cpu;
    cpu.build(img.view().sub(c.roi));
    int bad = 0;
    for (int y = 0; y <= c.roi.height && bad < 5; ++y)
        for (int x = 0; x <= c.roi.width && bad < 5; ++x) {
            // Entry (x, y) is the box [0, x) x [0, y).
            const std::uint64_t want_sum = cpu.sum(0, 0, x, y);
            const std::uint64_t want_sq = cpu.sum_sq(0, 0, x, y);
            const std::size_t at = static_cast<std::size_t>(y) * s + x;
            if (sum[at] != want_sum || sum_sq[at] != want_sq) {
                ++bad;
                ADD_FAILURE() << "entry " << x << "," << y << ": sum " << sum[at] << " want " << want_sum << ", sum_sq "
                              << sum_sq[at] << " want " << want_sq;
            }
        }
    EXPECT_EQ(bad, 0);
}

TEST(CudaIntegral, MatchesCpuTables) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine: GPU integral images not tested";
    const IntegralCase cases[] = {
        {{1, 1}, {0, 0, 1, 1}, -1},
        {{20, 20}, {3, 5, 7, 5}, -1},             // interior, odd offset
        {{37, 29}, {0, 0, 37, 29}, -1},           // whole frame
        {{50, 40}, {13, 11, 37, 29}, -1},         // touching the right and bottom edges
        {{2049, 3}, {0, 0, 2049, 3}, -1},         // one pixel past the 2048-pixel scan tile
        {{4100, 70}, {1, 0, 4099, 70}, -1},       // two tiles and a partial; 70 rows: empty segments
        {{97, 1000}, {0, 1, 97, 999}, -1},        // tall: 32 segments of 32 rows
        {{333, 171}, {1, 1, 331, 169}, 0},        // all zero
        {{3840, 2160}, {0, 0, 3840, 2160}, 255},  // 4K UHD at full scale: sums to 2.1e9
        {{3840, 2160}, {0, 0, 3840, 2160}, -1},
    };
    std::uint32_t seed = 77;
    for (const IntegralCase& c : cases) check_case(c, seed++);
}

TEST(CudaIntegral, LimitsHoldExactly) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine: GPU integral images not tested";
    // 4096 x 4096 x 255 = 4.28e9 still fits the uint32 sum table.
    check_case({{4096, 4096}, {0, 0, 4096, 4096}, 255}, 1);
    // A 65536-pixel row prefix of 255^2 = 4.26e9 still fits the packed scan's high half.
    check_case({{kMaxIntegralWidth, 2}, {0, 0, kMaxIntegralWidth, 2}, 255}, 2);
}

TEST(CudaIntegral, RefusesWhatItCannotHold) {
    std::string why;
    EXPECT_TRUE(GpuIntegral::supports({4096, 4096}, &why)) << why;
    EXPECT_FALSE(GpuIntegral::supports({4097, 4112}, &why));  // 16,846,864 > 16,843,009 pixels
    EXPECT_FALSE(why.empty());
    EXPECT_FALSE(GpuIntegral::supports({kMaxIntegralWidth + 1, 1}, &why));
    EXPECT_FALSE(why.empty());
}

// launch_template_prefix on stacks of 1 to 30757 rows (up to 4096 rows one block scans them,
// past that CUB's device scan: one row, a tile less one, one, one more, two and one, and 768
// templates of 40 rows, the tracker's 256 targets x 3 scales, plus some) of random bytes, 37
// wide (a partial last word): every prefix entry is the exact sum of the rows above it, and
// every packed word its bytes.
TEST(CudaIntegral, TemplatePrefixIsTheExactRowPrefix) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine: the template prefix not tested";
    const int width = 37, words_per_row = (width + 3) / 4;
    for (const int rows : {1, 4095, 4096, 4097, 8193, 30757}) {
        const std::vector<std::uint8_t> templ =
            test::random_image(width, rows, static_cast<std::uint32_t>(rows)).pixels;
        DeviceBuffer<std::uint8_t> dev_templ;
        DeviceBuffer<TemplatePrefix> prefix;
        DeviceBuffer<std::uint32_t> words;
        DeviceBuffer<std::uint8_t> workspace;
        ASSERT_EQ(cudaMemcpy(dev_templ.ensure(templ.size()), templ.data(), templ.size(), cudaMemcpyHostToDevice),
                  cudaSuccess);
        prefix.ensure(rows + 1);
        words.ensure(static_cast<std::size_t>(rows) * words_per_row);
        launch_template_prefix(dev_templ.get(), width, rows, prefix.get(), words.get(), workspace, nullptr);
        std::vector<TemplatePrefix> got(rows + 1);
        std::vector<std::uint32_t> got_words(static_cast<std::size_t>(rows) * words_per_row);
        ASSERT_EQ(cudaMemcpy(got.data(), prefix.get(), got.size() * sizeof(TemplatePrefix), cudaMemcpyDeviceToHost),
                  cudaSuccess);
        ASSERT_EQ(cudaMemcpy(got_words.data(), words.get(), got_words.size() * 4, cudaMemcpyDeviceToHost), cudaSuccess);
        std::uint64_t sum = 0, sum_sq = 0;
        int wrong = 0, wrong_words = 0;
        for (int r = 0; r <= rows; ++r) {
            wrong += got[r].sum != sum || got[r].sum_sq != sum_sq;
            if (r == rows) break;
            for (int i = 0; i < words_per_row; ++i) {
                std::uint32_t w = 0;
                for (int b = 0; b < 4 && 4 * i + b < width; ++b)
                    w |= static_cast<std::uint32_t>(templ[static_cast<std::size_t>(r) * width + 4 * i + b]) << (8 * b);
                wrong_words += got_words[static_cast<std::size_t>(r) * words_per_row + i] != w;
            }
            for (int x = 0; x < width; ++x) {
                const std::uint64_t v = templ[static_cast<std::size_t>(r) * width + x];
                sum += v;
                sum_sq += v * v;
            }
        }
        EXPECT_EQ(wrong, 0) << rows << " rows";
        EXPECT_EQ(wrong_words, 0) << rows << " rows";
    }
}

}  // namespace
}  // namespace corrtrack
