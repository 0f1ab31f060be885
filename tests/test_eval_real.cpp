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
    // 0.598, P@20 0.810 (0.578 / 0.796 before the tracker modelled the box's core, 0.519 /
    // 0.726 before the colour cue; notes/TRACKING.md has each step). The NCC sums are exact
    // and the filter's FFTs deterministic on one machine (another CPU's FFTW may round them
    // differently), so the margin absorbs platform noise.
    EXPECT_GE(auc, 0.57) << "mean AUC regressed";
    EXPECT_GE(prec, 0.78) << "mean P@20 regressed";
    // The lost flag is not noise: a flag is on a wrong box (IoU < 0.1) far more often than a
    // frame is. 0.36 of the flags are on the 8% of boxes that are wrong, 4.5 times the base rate
    // (0.47 on 14% before the core, 3.5 times: fewer wrong boxes leave fewer to flag).
    const double base_rate = doc["mean"]["wrong_rate"].get<double>();
    long wrong = 0, evaluated = 0;
    for (const auto& [name, seq] : doc["sequences"].items()) {
        wrong += seq["wrong"].get<long>();
        evaluated += seq["evaluated"].get<long>();
    }
    ASSERT_GT(wrong, 0);
    EXPECT_DOUBLE_EQ(base_rate, static_cast<double>(wrong) / evaluated);
    EXPECT_GE(doc["mean"]["lost_flag_precision"].get<double>(), 3.0 * base_rate) << "base rate " << base_rate;
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
