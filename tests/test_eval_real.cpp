// OTB one-pass evaluation on the real sequences in ../shared/data/sequences (never copied
// into the repository). Skipped with a message when they are absent. The bars sit a little
// under what the CPU path measured (see docs/results.md), so a tracking regression fails.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "tests/support/run_cli.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

TEST(EvalReal, OtbMetricsOnSharedSequences) {
    const std::string data = CORRTRACK_DATA_DIR;
    if (!std::filesystem::is_directory(data))
        GTEST_SKIP() << "real sequences not found at " << data << " (set -DCORRTRACK_DATA_DIR); skipping";
    TempDir dir("eval");
    const auto r = test::run_cli("eval " + data + " --kernel cpu_fast --json " + dir.file("eval.json") + " --plot " +
                                     dir.file("eval.png") + " --results " + dir.file("results"),
                                 dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::printf("%s", r.out.c_str());
    const auto doc = nlohmann::json::parse(test::read_text(dir.file("eval.json")));
    const double auc = doc["mean"]["auc"], prec = doc["mean"]["prec20"];
    // Measured on the CPU path (cpu_fast, default options) over all 32 sequences: mean AUC
    // 0.578, P@20 0.796 (0.519 / 0.726 before the colour cue, 0.542 / 0.742 before the colour
    // extent, 0.550 / 0.742 before the correlation filter, 0.554 / 0.735 before it was
    // constrained to the box, 0.565 / 0.749 before still look-alikes claimed their places,
    // 0.565 / 0.756 before the first template weighed the scale pick, 0.582 / 0.788 before the
    // template learnt at a relative bar).
    // The NCC sums are exact and the
    // filter's FFTs deterministic on one machine (another CPU's FFTW may round them
    // differently), so the margin absorbs platform noise.
    EXPECT_GE(auc, 0.55) << "mean AUC regressed";
    EXPECT_GE(prec, 0.75) << "mean P@20 regressed";
    // The lost flag is not noise: 0.47 of its flags are on wrong boxes (IoU < 0.1), where 0.14
    // of all boxes are wrong (0.45 before the relative learning bar, 0.61 before the scale anchor, whose boxes hold through
    // otb_soccer's occlusion while flagged; 0.83 before the filter was constrained to the box).
    EXPECT_GE(doc["mean"]["lost_flag_precision"].get<double>(), 0.4);
    for (const auto& [name, seq] : doc["sequences"].items()) {
        EXPECT_GT(seq["frames"].get<long>(), 0) << name;
        EXPECT_GT(seq["fps"].get<double>(), 0) << name;
        EXPECT_TRUE(std::filesystem::exists(dir.file("results/" + name + ".txt"))) << name;
    }
    EXPECT_EQ(doc["sequences"].size(), 32u);
    const std::string png = test::read_text(dir.file("eval.png"));
    ASSERT_GE(png.size(), 8u);
    EXPECT_EQ(png.substr(1, 3), "PNG");
}

}  // namespace
}  // namespace corrtrack
