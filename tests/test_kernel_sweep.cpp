// Every registered kernel against cpu_ref on the checked cases of the case list that the bench
// also draws from (app/bench/cases.h): random frames, asymmetric templates from 1x1 to 128x128
// plus the largest supported (256x256), widths that are not a multiple of 4, rois at the frame
// edges, flat windows, a flat template, the bench's centred tracking window, and its cheaper
// timed cases themselves (1080p and 4K windows). Outputs sit inside NaN guard bands and are
// poisoned before each run, so a stray or missing write fails. Batched cases stack 2 to 4
// templates (one roi for all, an atlas of rois a roi height apart, the bench's --batch atlas of
// windows) and check the stacked maps. CUDA kernels run on device copies; without a GPU they
// are skipped with a message. The data comes from tests/support/random_image.h (not the
// bench's generator).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <utility>
#include <string>

#include "app/bench/cases.h"
#include "corrtrack/correlator.h"
#include "tests/support/random_image.h"

namespace corrtrack {
namespace {

using test::OwnedImage;

using bench::KernelCase;
using bench::Layout;

struct Prepared {
    OwnedImage frame, templ;
    NccProblem problem;
    std::vector<float> expected;
};

constexpr int kGuard = 3;  // guard columns/rows of NaN around every output map

// The whole output of a problem: one map per template, stacked vertically.
Size stacked_out_size(const NccProblem& p) {
    const Size o = p.out_size();
    return {o.width, o.height * p.templates};
}

// A case's data and the oracle's maps: a random frame of the problem's frame size (a window
// batch's atlas), `batch` random asymmetric templates stacked vertically, a flat patch in the
// last roi and a flat template where the case asks for them.
Prepared prepare(const KernelCase& kc, std::uint32_t seed) {
    Prepared p;
    p.problem = kc.problem();
    const Size frame = p.problem.frame;
    p.frame = test::random_image(frame.width, frame.height, seed);
    p.templ = test::random_image(kc.templ.width, kc.templ.height * p.problem.templates, seed + 1000);
    if (kc.flat_template >= 0) {
        // A single flat template keeps the value the sweep always used for it (99).
        const std::uint8_t value = p.problem.templates == 1 ? 99 : 77;
        test::fill_rect(p.templ, {0, kc.flat_template * kc.templ.height, kc.templ.width, kc.templ.height}, value);
    }
    if (kc.flat_patch) {
        const Rect last = p.problem.roi_of(p.problem.templates - 1);
        test::fill_rect(p.frame,
                        {last.x + 1, last.y + 1, std::min(last.width - 1, kc.templ.width + 6),
                         std::min(last.height - 1, kc.templ.height + 4)},
                        141);
    }
    const Size o = stacked_out_size(p.problem);
    p.expected.assign(static_cast<std::size_t>(o.width) * o.height, NAN);
    auto ref = make_correlator("cpu_ref");
    ref->set_template(p.templ.view(), nullptr);
    ref->run(p.frame.view(), p.problem, {p.expected.data(), o.width, o.height, static_cast<std::size_t>(o.width)},
             nullptr);
    return p;
}

// prepare() once per case and seed for the whole binary: every kernel is checked against the
// same data, and the oracle (and the 1080p and 4K frames) are made only once.
const Prepared& prepared(const KernelCase& kc, std::uint32_t seed) {
    static std::map<std::pair<std::string, std::uint32_t>, Prepared> cache;
    const NccProblem pr = kc.problem();
    const std::string key = kc.key() + "|" + std::to_string(pr.roi.x) + "," + std::to_string(pr.roi.y) + "," +
                            std::to_string(pr.roi.width) + "," + std::to_string(pr.roi.height) + "|" +
                            std::to_string(pr.templates) + "|" + std::to_string(pr.template_roi_step);
    auto it = cache.find({key, seed});
    if (it == cache.end()) it = cache.emplace(std::make_pair(key, seed), prepare(kc, seed)).first;
    return it->second;
}

// Compares a guarded run with the expected maps: every position within 1e-4, no write outside.
int count_mismatches(const std::vector<float>& got, std::size_t pitch, const Prepared& p, const std::string& where) {
    const Size o = stacked_out_size(p.problem);
    int bad = 0;
    for (int y = -kGuard; y < o.height + kGuard; ++y)
        for (int x = -kGuard; x < static_cast<int>(pitch) - kGuard; ++x) {
            const float v = got[(y + kGuard) * pitch + (x + kGuard)];
            const bool inside = x >= 0 && y >= 0 && x < o.width && y < o.height;
            if (!inside) {
                if (!std::isnan(v) && bad++ < 5) ADD_FAILURE() << where << ": stray write at " << x << "," << y;
                continue;
            }
            const float e = p.expected[static_cast<std::size_t>(y) * o.width + x];
            if (!(std::fabs(v - e) <= 1e-4f) && bad++ < 5)
                ADD_FAILURE() << where << ": at " << x << "," << y << " (map " << y / p.problem.out_size().height
                              << ") got " << v << " want " << e;
        }
    return bad;
}

// Runs `k` and returns the whole guarded map (host copy).
std::vector<float> run_guarded(Correlator& k, const Prepared& p, Device device, Layout layout, std::size_t* pitch_out) {
    const Size o = stacked_out_size(p.problem);
    const std::size_t pitch = o.width + 2 * kGuard + 5;  // odd extra so rows are not aligned
    const std::size_t rows = o.height + 2 * kGuard;
    std::vector<float> host(pitch * rows, NAN);
    *pitch_out = pitch;
    if (device == Device::kCpu) {
        // The same layouts on the host: copy the frame into a buffer with the case's pitch and offset.
        const std::size_t hp =
            p.frame.width + (layout == Layout::kOddPitch ? 3 : (layout == Layout::kUnalignedBase ? 16 : 0));
        const std::size_t off = layout == Layout::kUnalignedBase ? 5 : 0;
        std::vector<std::uint8_t> buf(hp * p.frame.height + off);
        for (int y = 0; y < p.frame.height; ++y)
            std::memcpy(&buf[off + y * hp], &p.frame.pixels[static_cast<std::size_t>(y) * p.frame.width],
                        p.frame.width);
        const ImageView frame{buf.data() + off, p.frame.width, p.frame.height, hp, MemorySpace::kHost};
        k.set_template(p.templ.view(), nullptr);
        k.run(frame, p.problem, {host.data() + kGuard * pitch + kGuard, o.width, o.height, pitch}, nullptr);
        return host;
    }
    cudaStream_t stream;
    EXPECT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    std::uint8_t* d_frame = nullptr;
    std::size_t frame_pitch = 0, frame_offset = 0;
    float* d_out = nullptr;
    if (layout == Layout::kAligned) {
        EXPECT_EQ(cudaMallocPitch(&d_frame, &frame_pitch, p.frame.width, p.frame.height), cudaSuccess);
    } else {
        frame_pitch = p.frame.width + (layout == Layout::kOddPitch ? 3 : 16);
        frame_offset = layout == Layout::kUnalignedBase ? 5 : 0;
        EXPECT_EQ(cudaMalloc(&d_frame, frame_pitch * p.frame.height + frame_offset), cudaSuccess);
    }
    EXPECT_EQ(cudaMemcpy2D(d_frame + frame_offset, frame_pitch, p.frame.pixels.data(), p.frame.width, p.frame.width,
                           p.frame.height, cudaMemcpyHostToDevice),
              cudaSuccess);
    EXPECT_EQ(cudaMalloc(&d_out, host.size() * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(d_out, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
    const ImageView frame{d_frame + frame_offset, p.frame.width, p.frame.height, frame_pitch, MemorySpace::kDevice};
    // The template goes in from host memory here; the NVDEC path hands device templates.
    k.set_template(p.templ.view(), stream);
    k.run(frame, p.problem, {d_out + kGuard * pitch + kGuard, o.width, o.height, pitch, MemorySpace::kDevice}, stream);
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(host.data(), d_out, host.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    cudaFree(d_frame);
    cudaFree(d_out);
    cudaStreamDestroy(stream);
    return host;
}

class KernelSweep : public ::testing::TestWithParam<std::string> {};

TEST_P(KernelSweep, MatchesCpuRef) {
    const KernelEntry* entry = find_kernel(GetParam());
    ASSERT_NE(entry, nullptr);
    if (!entry->available()) GTEST_SKIP() << GetParam() << ": " << unavailable_reason(*entry) << ", sweep skipped";
    auto kernel = entry->create();
    const auto cases = bench::cases_for(bench::kCheck, false);
    int checked = 0;
    for (std::size_t c = 0; c < cases.size(); ++c) {
        const KernelCase& sc = cases[c];
        const Prepared& p = prepared(sc, 1234 + static_cast<std::uint32_t>(c) * 17);
        std::string why;
        if (!kernel->supports(p.problem, &why)) {
            EXPECT_FALSE(why.empty()) << GetParam() << " refuses a case without a reason";
            std::printf("  %s: case %zu (%dx%d templ) not supported: %s\n", GetParam().c_str(), c, sc.templ.width,
                        sc.templ.height, why.c_str());
            continue;
        }
        std::size_t pitch = 0;
        const auto got = run_guarded(*kernel, p, entry->device, sc.layout, &pitch);
        const std::string where = GetParam() + " case " + std::to_string(c) + " templ " +
                                  std::to_string(sc.templ.width) + "x" + std::to_string(sc.templ.height) + " roi " +
                                  std::to_string(p.problem.roi.x) + "," + std::to_string(p.problem.roi.y) + " " +
                                  std::to_string(p.problem.roi.width) + "x" + std::to_string(p.problem.roi.height);
        ASSERT_EQ(count_mismatches(got, pitch, p, where), 0) << where;
        ++checked;
    }
    EXPECT_GT(checked, static_cast<int>(cases.size()) / 2) << GetParam() << " supports too few cases";
}

// Kernels that must run batches (the tracker's multi-target launch relies on them;
// cuda_mma_fused and _w4 are only available from sm_80 on, cuda_wgmma* on sm_90a builds on
// compute capability 9.0, where they run every batch case).
bool must_support_batches(const std::string& name) {
    return name == "cpu_fast" || name == "cpu_avx2" || name == "cpu_vnni" || name == "cuda_dp4a" ||
           name.rfind("cuda_dp4a_ilp", 0) == 0 || name.rfind("cuda_mma_fused", 0) == 0 ||
           name.rfind("cuda_wgmma", 0) == 0;
}

TEST_P(KernelSweep, BatchedTemplatesMatchCpuRef) {
    const KernelEntry* entry = find_kernel(GetParam());
    ASSERT_NE(entry, nullptr);
    if (!entry->available())
        GTEST_SKIP() << GetParam() << ": " << unavailable_reason(*entry) << ", batch sweep skipped";
    auto kernel = entry->create();
    const auto cases = bench::cases_for(bench::kCheck, true);
    for (std::size_t c = 0; c < cases.size(); ++c) {
        const KernelCase& bc = cases[c];
        const Prepared& p = prepared(bc, 777 + static_cast<std::uint32_t>(c) * 31);
        const NccProblem& prob = p.problem;
        const std::string where =
            GetParam() + " batch case " + std::to_string(c) + ": " + std::to_string(prob.templates) + " templates " +
            std::to_string(bc.templ.width) + "x" + std::to_string(bc.templ.height) + " step " +
            std::to_string(prob.template_roi_step) + " roi " + std::to_string(prob.roi.x) + "," +
            std::to_string(prob.roi.y) + " " + std::to_string(prob.roi.width) + "x" + std::to_string(prob.roi.height);
        ASSERT_EQ(validate_problem(prob), "") << where;
        std::string why;
        if (!kernel->supports(prob, &why)) {
            EXPECT_FALSE(why.empty()) << where << ": refused without a reason";
            EXPECT_FALSE(must_support_batches(GetParam())) << where << ": must support batches, says: " << why;
            std::printf("  %s: not supported: %s\n", where.c_str(), why.c_str());
            continue;
        }
        std::size_t pitch = 0;
        const auto got = run_guarded(*kernel, p, entry->device, bc.layout, &pitch);
        ASSERT_EQ(count_mismatches(got, pitch, p, where), 0) << where;
    }
}

// The oracle itself: a batched cpu_ref run equals one single-template run per template over
// its shifted roi, so the stacking and the step mean what correlator.h says.
TEST(BatchedProblem, CpuRefBatchEqualsOneRunPerTemplate) {
    auto ref = make_correlator("cpu_ref");
    const auto cases = bench::cases_for(bench::kCheck, true);
    for (std::size_t c = 0; c < cases.size(); ++c) {
        const Prepared& p = prepared(cases[c], 777 + static_cast<std::uint32_t>(c) * 31);
        const NccProblem& batch = p.problem;
        std::string why;
        ASSERT_TRUE(ref->supports(batch, &why)) << "cpu_ref must support batch case " << c << ": " << why;
        const Size o = batch.out_size();
        const int tw = batch.templ.width, th = batch.templ.height;
        for (int k = 0; k < batch.templates; ++k) {
            const ImageView t{p.templ.pixels.data() + static_cast<std::size_t>(k) * tw * th, tw, th,
                              static_cast<std::size_t>(tw), MemorySpace::kHost};
            NccProblem single = batch;
            single.templates = 1;
            single.template_roi_step = 0;
            single.roi = batch.roi_of(k);
            std::vector<float> got(static_cast<std::size_t>(o.width) * o.height, NAN);
            ref->set_template(t, nullptr);
            ref->run(p.frame.view(), single, {got.data(), o.width, o.height, static_cast<std::size_t>(o.width)},
                     nullptr);
            for (std::size_t i = 0; i < got.size(); ++i)
                ASSERT_EQ(got[i], p.expected[static_cast<std::size_t>(k) * got.size() + i])
                    << "case " << c << " template " << k << " index " << i;
        }
    }
}

TEST(BatchedProblem, ValidateChecksTheStepAndTheLastRoi) {
    NccProblem p{{64, 100}, {8, 8}, {4, 10, 32, 30}, 3, 30};  // rows 10..99: just fits
    EXPECT_EQ(validate_problem(p), "");
    p.template_roi_step = 31;  // the last roi ends at row 101
    const std::string off = validate_problem(p);
    EXPECT_NE(off.find("template 2"), std::string::npos) << off;
    EXPECT_NE(off.find("64x100 frame"), std::string::npos) << off;
    p.template_roi_step = -1;
    EXPECT_NE(validate_problem(p).find("negative"), std::string::npos) << validate_problem(p);
    p.template_roi_step = 0;
    p.templates = 40;  // every template on the first roi: the frame height does not matter
    EXPECT_EQ(validate_problem(p), "");
    for (const KernelEntry& e : kernel_registry()) {
        if (!e.available()) continue;
        NccProblem bad{{64, 100}, {8, 8}, {4, 10, 32, 30}, 3, 31};
        std::string why;
        EXPECT_FALSE(e.create()->supports(bad, &why)) << e.name;
        EXPECT_FALSE(why.empty()) << e.name;
    }
}

std::vector<std::string> kernel_names() {
    std::vector<std::string> names;
    for (const KernelEntry& e : kernel_registry())
        if (std::string(e.name) != "cpu_ref") names.push_back(e.name);
    for (const KernelEntry& e : kernel_variants()) names.push_back(e.name);
    return names;
}

INSTANTIATE_TEST_SUITE_P(Registry, KernelSweep, ::testing::ValuesIn(kernel_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace corrtrack
