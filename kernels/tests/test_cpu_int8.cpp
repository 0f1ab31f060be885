// The int8 numerators (AVX2, AVX-512 VNNI) bit for bit against brute force, on the ISAs this
// CPU has; CORRTRACK_CPU_ISA forcing the fallback (same maps, kernels reported unavailable);
// the work pool running every item exactly once.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "corrtrack/correlator.h"
#include "cpu/cpu_kernels.h"
#include "cpu/int8_numerator.h"
#include "corrtrack/work_pool.h"
#include "tests/support/random_image.h"

namespace corrtrack {
namespace {

using test::OwnedImage;
using test::random_image;

// Sets CORRTRACK_CPU_ISA for one scope, restoring what was there.
class IsaCap {
public:
    explicit IsaCap(const char* value) {
        if (const char* old = std::getenv("CORRTRACK_CPU_ISA")) old_ = old, had_ = true;
        setenv("CORRTRACK_CPU_ISA", value, 1);
    }
    ~IsaCap() {
        if (had_)
            setenv("CORRTRACK_CPU_ISA", old_.c_str(), 1);
        else
            unsetenv("CORRTRACK_CPU_ISA");
    }

private:
    std::string old_;
    bool had_ = false;
};

std::vector<CpuIsa> isas_here() {
    std::vector<CpuIsa> v;
    for (CpuIsa isa : {CpuIsa::kAvx2, CpuIsa::kVnni})
        if (cpu_isa_detected() >= isa) v.push_back(isa);
    return v;
}

// SIT of every valid position of t over the view v, in 64 bits.
std::vector<std::uint64_t> brute_sit(ImageView v, const OwnedImage& t) {
    const int ow = v.width - t.width + 1, oh = v.height - t.height + 1;
    std::vector<std::uint64_t> out(static_cast<std::size_t>(ow) * oh);
    for (int y = 0; y < oh; ++y)
        for (int x = 0; x < ow; ++x) {
            std::uint64_t s = 0;
            for (int j = 0; j < t.height; ++j)
                for (int i = 0; i < t.width; ++i)
                    s += static_cast<std::uint64_t>(v.row(y + j)[x + i]) * t.pixels[j * t.width + i];
            out[static_cast<std::size_t>(y) * ow + x] = s;
        }
    return out;
}

TEST(Int8Numerator, ExactAgainstBruteForce) {
    if (isas_here().empty()) GTEST_SKIP() << "this CPU has no AVX2";
    // Widths and heights around the kernels' blocks (4 rows; 16 or 64 columns), templates of
    // every width modulo 4, 1x1, and sub-views whose pitch is wider than the view.
    struct Case {
        Size frame, templ;
        Rect roi;
    };
    const Case cases[] = {
        {{50, 40}, {7, 5}, {0, 0, 50, 40}},        {{64, 33}, {16, 16}, {0, 0, 64, 33}},
        {{97, 61}, {31, 17}, {0, 0, 97, 61}},      {{300, 200}, {64, 48}, {0, 0, 300, 200}},
        {{20, 9}, {1, 1}, {0, 0, 20, 9}},          {{5, 5}, {5, 5}, {0, 0, 5, 5}},
        {{400, 300}, {3, 2}, {0, 0, 400, 300}},    {{700, 90}, {130, 30}, {0, 0, 700, 90}},
        {{200, 150}, {18, 22}, {13, 7, 150, 120}}, {{260, 140}, {129, 9}, {3, 11, 257, 129}},
    };
    std::uint32_t seed = 300;
    for (const Case& c : cases) {
        const OwnedImage f = random_image(c.frame.width, c.frame.height, ++seed);
        const OwnedImage t = random_image(c.templ.width, c.templ.height, ++seed);
        const ImageView v = f.view().sub(c.roi);
        const auto expect = brute_sit(v, t);
        for (CpuIsa isa : isas_here()) {
            Int8Numerator num(isa);
            num.set_template(t.view());
            // Guard words past the map: a write beyond the last valid position fails.
            std::vector<std::uint32_t> got(expect.size() + 64, 0xdeadbeef);
            num.run(v, got.data(), v.width - t.width + 1);
            for (std::size_t i = 0; i < expect.size(); ++i)
                ASSERT_EQ(got[i], expect[i]) << cpu_isa_name(isa) << " " << c.frame.width << "x" << c.frame.height
                                             << " t" << c.templ.width << "x" << c.templ.height << " at " << i;
            for (std::size_t i = expect.size(); i < got.size(); ++i) ASSERT_EQ(got[i], 0xdeadbeefu);
        }
    }
}

// A tracker learns its template every frame and sets it again on the same numerator, whose
// storage is reused: a smaller or narrower template must leave nothing of the last one behind.
TEST(Int8Numerator, ATemplateSetAgainReplacesTheLastOne) {
    if (isas_here().empty()) GTEST_SKIP() << "this CPU has no AVX2";
    const OwnedImage f = random_image(180, 120, 41);
    const Size sizes[] = {{64, 48}, {13, 9}, {31, 40}, {6, 6}, {64, 48}};
    for (CpuIsa isa : isas_here()) {
        Int8Numerator num(isa);
        std::uint32_t seed = 900;
        for (Size s : sizes) {
            const OwnedImage t = random_image(s.width, s.height, ++seed);
            num.set_template(t.view());
            const auto expect = brute_sit(f.view(), t);
            std::vector<std::uint32_t> got(expect.size());
            num.run(f.view(), got.data(), f.width - t.width + 1);
            for (std::size_t i = 0; i < expect.size(); ++i)
                ASSERT_EQ(got[i], expect[i]) << cpu_isa_name(isa) << " t" << s.width << "x" << s.height << " at " << i;
        }
    }
}

TEST(Int8Numerator, LargestSumsAtTheLargestTemplate) {
    // 256x256 template of 255s over 255s: SIT = 65536 * 255^2 = 4,261,478,400, the most a
    // 32-bit lane must hold (above 2^31: the lanes' signed sums must wrap back exactly).
    OwnedImage f{300, 270, std::vector<std::uint8_t>(300 * 270, 255)};
    OwnedImage t{256, 256, std::vector<std::uint8_t>(256 * 256, 255)};
    f.at(7, 3) = 0;  // one dark pixel: windows that hold it lose exactly 255 * 255
    for (CpuIsa isa : isas_here()) {
        Int8Numerator num(isa);
        num.set_template(t.view());
        const int ow = 300 - 255, oh = 270 - 255;
        std::vector<std::uint32_t> got(static_cast<std::size_t>(ow) * oh);
        num.run(f.view(), got.data(), ow);
        for (int y = 0; y < oh; ++y)
            for (int x = 0; x < ow; ++x) {
                const bool dark = x <= 7 && y <= 3;
                ASSERT_EQ(got[static_cast<std::size_t>(y) * ow + x], 4261478400u - (dark ? 65025u : 0u))
                    << cpu_isa_name(isa) << " at " << x << "," << y;
            }
    }
}

TEST(Int8Numerator, FullHdFrameSpotChecks) {
    // A frame large enough for the work pool, the stripes and the padded tail.
    const OwnedImage f = random_image(1920, 1080, 11);
    const OwnedImage t = random_image(64, 64, 12);
    const int ow = 1920 - 63, oh = 1080 - 63;
    for (CpuIsa isa : isas_here()) {
        Int8Numerator num(isa);
        num.set_template(t.view());
        std::vector<std::uint32_t> got(static_cast<std::size_t>(ow) * oh);
        num.run(f.view(), got.data(), ow);
        for (int y = 0; y < oh; y += (y + 8 >= oh ? 1 : 37))
            for (int x = 0; x < ow; x += (x + 70 >= ow ? 1 : 61)) {
                std::uint64_t s = 0;
                for (int j = 0; j < 64; ++j)
                    for (int i = 0; i < 64; ++i)
                        s += static_cast<std::uint64_t>(f.pixels[(y + j) * 1920 + x + i]) * t.pixels[j * 64 + i];
                ASSERT_EQ(got[static_cast<std::size_t>(y) * ow + x], s) << cpu_isa_name(isa) << " " << x << "," << y;
            }
    }
}

TEST(Int8Kernels, MapsEqualCpuRefBitForBit) {
    // The vectorised epilogue does ncc_from_sums' arithmetic on the same exact integers, so
    // the floats are the same, flat windows (score 0) included.
    OwnedImage f = random_image(211, 157, 31);
    test::fill_rect(f, {40, 30, 50, 40}, 77);
    const OwnedImage t = random_image(23, 19, 32);
    const NccProblem p = NccProblem::full_frame(f.view().size(), t.view().size());
    const Size o = p.out_size();
    auto run = [&](const char* name) {
        auto k = make_correlator(name);
        std::vector<float> out(static_cast<std::size_t>(o.width) * o.height, NAN);
        k->set_template(t.view(), nullptr);
        k->run(f.view(), p, {out.data(), o.width, o.height, static_cast<std::size_t>(o.width)}, nullptr);
        return out;
    };
    const std::vector<float> ref = run("cpu_ref");
    int flat = 0;
    for (float v : ref) flat += v == 0.0f;
    EXPECT_GT(flat, 100);
    for (const char* name : {"cpu_fast", "cpu_avx2", "cpu_vnni"}) {
        if (!find_kernel(name)->available()) continue;
        const std::vector<float> got = run(name);
        for (std::size_t i = 0; i < ref.size(); ++i) ASSERT_EQ(got[i], ref[i]) << name << " at " << i;
    }
}

TEST(CpuIsaCap, EnvironmentForcesTheFallbackWithTheSameMaps) {
    const OwnedImage f = random_image(333, 211, 21);
    const OwnedImage t = random_image(29, 23, 22);
    const NccProblem p = NccProblem::full_frame(f.view().size(), t.view().size());
    const Size o = p.out_size();
    auto run = [&] {
        auto k = make_correlator("cpu_fast");
        std::vector<float> out(static_cast<std::size_t>(o.width) * o.height, NAN);
        k->set_template(t.view(), nullptr);
        k->run(f.view(), p, {out.data(), o.width, o.height, static_cast<std::size_t>(o.width)}, nullptr);
        return out;
    };
    const std::vector<float> best = run();
    for (const char* cap : {"scalar", "avx2"}) {
        IsaCap guard(cap);
        EXPECT_LE(cpu_isa_best(), std::string(cap) == "scalar" ? CpuIsa::kScalar : CpuIsa::kAvx2);
        EXPECT_FALSE(find_kernel("cpu_vnni")->available());
        EXPECT_NE(unavailable_reason(*find_kernel("cpu_vnni")).find("VNNI"), std::string::npos);
        std::string why;
        EXPECT_EQ(make_correlator("cpu_vnni", &why), nullptr);
        const std::vector<float> capped = run();
        ASSERT_EQ(capped.size(), best.size());
        for (std::size_t i = 0; i < best.size(); ++i) ASSERT_EQ(capped[i], best[i]) << cap << " at " << i;
    }
    IsaCap guard("scalar");
    EXPECT_FALSE(find_kernel("cpu_avx2")->available());
}

TEST(WorkPool, EveryItemOnceAndConcurrentCallers) {
    std::vector<std::atomic<int>> hits(5000);
    parallel_for(5000, [&](int i) { hits[i].fetch_add(1); });
    for (auto& h : hits) ASSERT_EQ(h.load(), 1);
    // Two callers at once: one holds the workers, the other runs its items itself.
    std::atomic<long> sum{0};
    auto caller = [&] {
        for (int r = 0; r < 50; ++r) parallel_for(200, [&](int i) { sum.fetch_add(i); });
    };
    std::thread a(caller), b(caller);
    a.join();
    b.join();
    EXPECT_EQ(sum.load(), 2L * 50 * (199 * 200 / 2));
    EXPECT_GE(work_pool_workers(), 0);
}

}  // namespace
}  // namespace corrtrack
