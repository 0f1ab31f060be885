// CPU kernels: cpu_ref against an independent formula; integral images and both cpu_fast
// numerators exact against brute force; flat input; problem validation; peak search.
#include <gtest/gtest.h>

#include <cmath>

#include "corrtrack/correlator.h"
#include "corrtrack/peak.h"
#include "cpu/cpu_kernels.h"
#include "cpu/int8_numerator.h"
#include "cpu/integral.h"
#include "tests/support/random_image.h"

namespace corrtrack {
namespace {

using test::OwnedImage;
using test::random_image;

// TM_CCOEFF_NORMED straight from its mean-subtracted definition in long double: a different
// formula from the one-pass integer sums that cpu_ref uses.
double independent_ncc(const OwnedImage& f, const OwnedImage& t, int x0, int y0) {
    const long double n = static_cast<long double>(t.width) * t.height;
    long double mean_i = 0, mean_t = 0;
    for (int y = 0; y < t.height; ++y)
        for (int x = 0; x < t.width; ++x) {
            mean_i += f.pixels[(y0 + y) * f.width + x0 + x];
            mean_t += t.pixels[y * t.width + x];
        }
    mean_i /= n;
    mean_t /= n;
    long double cov = 0, var_i = 0, var_t = 0;
    for (int y = 0; y < t.height; ++y)
        for (int x = 0; x < t.width; ++x) {
            const long double di = f.pixels[(y0 + y) * f.width + x0 + x] - mean_i;
            const long double dt = t.pixels[y * t.width + x] - mean_t;
            cov += di * dt;
            var_i += di * di;
            var_t += dt * dt;
        }
    if (var_i == 0 || var_t == 0) return 0.0;
    return static_cast<double>(cov / std::sqrt(var_i * var_t));
}

std::vector<float> run_kernel(Correlator& k, const OwnedImage& frame, const OwnedImage& templ, Rect roi) {
    NccProblem p{frame.view().size(), templ.view().size(), roi, 1};
    const Size o = p.out_size();
    std::vector<float> out(static_cast<std::size_t>(o.width) * o.height, NAN);
    k.set_template(templ.view(), nullptr);
    k.run(frame.view(), p, MapView{out.data(), o.width, o.height, static_cast<std::size_t>(o.width)}, nullptr);
    return out;
}

TEST(CpuRef, MatchesIndependentFormula) {
    auto ref = make_cpu_ref();
    const std::pair<int, int> sizes[] = {{1, 1}, {3, 2}, {5, 7}, {8, 3}, {11, 13}};
    for (int c = 0; c < 5; ++c) {
        const OwnedImage frame = random_image(29 + c, 23 + 2 * c, 100 + c);
        const OwnedImage templ = random_image(sizes[c].first, sizes[c].second, 200 + c);
        const Rect roi{c, 2 * c % 5, frame.width - c, frame.height - 2 * c % 5};
        const auto out = run_kernel(*ref, frame, templ, roi);
        const int ow = roi.width - templ.width + 1, oh = roi.height - templ.height + 1;
        for (int y = 0; y < oh; ++y)
            for (int x = 0; x < ow; ++x)
                ASSERT_NEAR(out[y * ow + x], independent_ncc(frame, templ, roi.x + x, roi.y + y), 2e-6)
                    << "case " << c << " at " << x << "," << y;
    }
}

TEST(CpuRef, IdenticalPatchScoresOneAndInverseScoresMinusOne) {
    OwnedImage frame = random_image(40, 30, 7);
    OwnedImage templ{9, 6, {}};
    OwnedImage inverse{9, 6, {}};
    for (int y = 0; y < 6; ++y)
        for (int x = 0; x < 9; ++x) {
            templ.pixels.push_back(frame.at(12 + x, 5 + y));
            inverse.pixels.push_back(static_cast<std::uint8_t>(255 - frame.at(12 + x, 5 + y)));
        }
    auto ref = make_cpu_ref();
    const auto out = run_kernel(*ref, frame, templ, {0, 0, 40, 30});
    EXPECT_FLOAT_EQ(out[5 * 32 + 12], 1.0f);
    const auto inv = run_kernel(*ref, frame, inverse, {0, 0, 40, 30});
    EXPECT_FLOAT_EQ(inv[5 * 32 + 12], -1.0f);
}

TEST(CpuFlat, FlatWindowsAndFlatTemplatesScoreZero) {
    OwnedImage frame = random_image(60, 40, 11);
    test::fill_rect(frame, {10, 5, 30, 20}, 77);
    const OwnedImage templ = random_image(7, 5, 12);
    OwnedImage flat_templ{7, 5, std::vector<std::uint8_t>(35, 200)};
    for (const char* name : {"cpu_ref", "cpu_fast"}) {
        auto k = make_correlator(name);
        ASSERT_TRUE(k);
        const auto out = run_kernel(*k, frame, templ, {0, 0, 60, 40});
        // Windows entirely inside the flat rectangle.
        for (int y = 5; y + 5 <= 25; ++y)
            for (int x = 10; x + 7 <= 40; ++x) ASSERT_EQ(out[y * 54 + x], 0.0f) << name;
        const auto out_flat = run_kernel(*k, frame, flat_templ, {0, 0, 60, 40});
        for (float v : out_flat) ASSERT_EQ(v, 0.0f) << name;
        for (float v : out) ASSERT_TRUE(std::isfinite(v)) << name;
    }
}

TEST(Integral, WindowSumsExact) {
    const OwnedImage img = random_image(37, 21, 3);
    IntegralImages ii;
    ii.build(img.view());
    for (int y = 0; y < 21; y += 3)
        for (int x = 0; x < 37; x += 5)
            for (int h : {1, 4, 21 - y})
                for (int w : {1, 6, 37 - x}) {
                    if (y + h > 21 || x + w > 37) continue;
                    std::uint64_t s = 0, ss = 0;
                    for (int j = 0; j < h; ++j)
                        for (int i = 0; i < w; ++i) {
                            const std::uint64_t v = img.pixels[(y + j) * 37 + x + i];
                            s += v;
                            ss += v * v;
                        }
                    ASSERT_EQ(ii.sum(x, y, w, h), s);
                    ASSERT_EQ(ii.sum_sq(x, y, w, h), ss);
                }
}

// SIT brute force, for checking the numerator stages bit for bit.
std::vector<std::uint32_t> brute_sit(const OwnedImage& f, const OwnedImage& t) {
    const int ow = f.width - t.width + 1, oh = f.height - t.height + 1;
    std::vector<std::uint32_t> out(static_cast<std::size_t>(ow) * oh);
    for (int y = 0; y < oh; ++y)
        for (int x = 0; x < ow; ++x) {
            std::uint64_t s = 0;
            for (int j = 0; j < t.height; ++j)
                for (int i = 0; i < t.width; ++i)
                    s += static_cast<std::uint64_t>(f.pixels[(y + j) * f.width + x + i]) * t.pixels[j * t.width + i];
            out[static_cast<std::size_t>(y) * ow + x] = static_cast<std::uint32_t>(s);
        }
    return out;
}

TEST(CpuFastNumerator, DirectAndFftAreExact) {
    const std::pair<Size, Size> cases[] = {
        {{50, 40}, {7, 5}}, {{64, 33}, {16, 16}}, {{97, 61}, {31, 17}}, {{300, 200}, {64, 48}}};
    std::uint32_t seed = 50;
    for (const auto& [fs, ts] : cases) {
        const OwnedImage f = random_image(fs.width, fs.height, ++seed);
        const OwnedImage t = random_image(ts.width, ts.height, ++seed);
        const auto expect = brute_sit(f, t);
        const int ow = fs.width - ts.width + 1;
        std::vector<std::uint32_t> direct(expect.size()), fft(expect.size());
        direct_numerator(f.view(), t.view(), direct.data(), ow);
        FftNumerator num;
        num.set_template(t.view());
        num.run(f.view(), fft.data(), ow);
        ASSERT_EQ(direct, expect) << fs.width << "x" << fs.height;
        ASSERT_EQ(fft, expect) << fs.width << "x" << fs.height;
    }
}

TEST(CpuFastNumerator, FftExactAtLargestTemplateOnAFullHdFrame) {
    // Worst case for the FFT's rounding: the largest SIT values (256x256 template of 255s
    // over bright pixels) on a large transform.
    OwnedImage f = random_image(1920, 1080, 9);
    for (auto& p : f.pixels) p = static_cast<std::uint8_t>(200 + p % 56);
    OwnedImage t = random_image(256, 256, 10);
    for (auto& p : t.pixels) p = static_cast<std::uint8_t>(200 + p % 56);
    FftNumerator num;
    num.set_template(t.view());
    const int ow = 1920 - 255, oh = 1080 - 255;
    std::vector<std::uint32_t> fft(static_cast<std::size_t>(ow) * oh);
    num.run(f.view(), fft.data(), ow);
    // Spot-check a grid of positions against brute force.
    for (int y = 0; y < oh; y += 97)
        for (int x = 0; x < ow; x += 131) {
            std::uint64_t s = 0;
            for (int j = 0; j < 256; ++j)
                for (int i = 0; i < 256; ++i)
                    s += static_cast<std::uint64_t>(f.pixels[(y + j) * 1920 + x + i]) * t.pixels[j * 256 + i];
            ASSERT_EQ(fft[static_cast<std::size_t>(y) * ow + x], s) << x << "," << y;
        }
}

TEST(CpuKernels, EveryCpuKernelMatchesRefOnBothNumeratorPaths) {
    auto ref = make_cpu_ref();
    // Small template -> direct path; large template on a big roi -> FFT path.
    const std::pair<Size, Size> cases[] = {{{120, 90}, {9, 7}}, {{400, 300}, {100, 100}}};
    EXPECT_FALSE(cpu_fast_prefers_fft(cases[0].first, cases[0].second, cpu_isa_best()));
    EXPECT_TRUE(cpu_fast_prefers_fft(cases[1].first, cases[1].second, cpu_isa_best()));
    std::uint32_t seed = 70;
    for (const auto& [fs, ts] : cases) {
        const OwnedImage f = random_image(fs.width, fs.height, ++seed);
        const OwnedImage t = random_image(ts.width, ts.height, ++seed);
        const Rect roi{0, 0, fs.width, fs.height};
        const auto expect = run_kernel(*ref, f, t, roi);
        for (const KernelEntry& e : kernel_registry()) {
            // cpu_vnni and cpu_avx2 only where the CPU (and CORRTRACK_CPU_ISA) allow.
            if (e.device != Device::kCpu || std::string(e.name) == "cpu_ref" || !e.available()) continue;
            auto k = e.create();
            const auto got = run_kernel(*k, f, t, roi);
            for (std::size_t i = 0; i < got.size(); ++i)
                ASSERT_NEAR(got[i], expect[i], 1e-4) << e.name << " index " << i;
        }
    }
}

TEST(Problem, ValidationNamesTheReason) {
    EXPECT_EQ(validate_problem(NccProblem::full_frame({100, 80}, {16, 16})), "");
    EXPECT_NE(validate_problem(NccProblem::full_frame({100, 80}, {257, 16})).find("exceeds"), std::string::npos);
    EXPECT_NE(validate_problem(NccProblem::full_frame({100, 80}, {0, 16})).find("empty"), std::string::npos);
    EXPECT_NE(validate_problem(NccProblem::full_frame({100, 80}, {120, 16})).find("larger"), std::string::npos);
    NccProblem outside = NccProblem::full_frame({100, 80}, {8, 8});
    outside.roi = {90, 0, 20, 20};
    EXPECT_NE(validate_problem(outside).find("outside"), std::string::npos);
    std::string why;
    EXPECT_EQ(make_correlator("no_such_kernel", &why), nullptr);
    EXPECT_NE(why.find("unknown kernel 'no_such_kernel'"), std::string::npos);
}

TEST(Peak, SubPixelVertexOfAParabola) {
    // f(x, y) = 1 - (x - 3.3)^2 / 10 - (y - 2.8)^2 / 10 sampled on a grid: the separable
    // parabola fit recovers the vertex exactly.
    std::vector<float> map(8 * 6);
    for (int y = 0; y < 6; ++y)
        for (int x = 0; x < 8; ++x) map[y * 8 + x] = 1.0f - ((x - 3.3f) * (x - 3.3f) + (y - 2.8f) * (y - 2.8f)) / 10.0f;
    const Peak pk = find_peak(MapView{map.data(), 8, 6, 8});
    EXPECT_EQ(pk.x, 3);
    EXPECT_EQ(pk.y, 3);
    EXPECT_NEAR(pk.sub_x, 3.3f, 1e-4);
    EXPECT_NEAR(pk.sub_y, 2.8f, 1e-4);
}

TEST(Peak, SecondPeakAndPsr) {
    std::vector<float> map(40 * 40, 0.0f);
    for (int i = 0; i < 1600; ++i) map[i] = (i % 7) * 0.01f;  // sidelobe texture 0..0.06
    map[10 * 40 + 10] = 0.9f;
    map[30 * 40 + 30] = 0.5f;
    const Peak pk = find_peak(MapView{map.data(), 40, 40, 40});
    EXPECT_EQ(pk.x, 10);
    EXPECT_EQ(pk.y, 10);
    EXPECT_FLOAT_EQ(pk.score, 0.9f);
    EXPECT_FLOAT_EQ(pk.second, 0.5f);
    EXPECT_GT(pk.psr, 10.0f);
}

}  // namespace
}  // namespace corrtrack
