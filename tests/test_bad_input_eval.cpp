// Bad ground truth for `corrtrack eval` (issue 28, item 8): a first box outside the frame, rows
// with a negative size, with more than four values (a VOT polygon is read as its upright box,
// ",junk" is refused), and a failed sequence named in eval.json under "failed". Part of
// test_bad_input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/eval/otb.h"
#include "tests/support/clip_suite.h"
#include "tests/support/damage.h"
#include "tests/support/run_cli.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

namespace fs = std::filesystem;
using test::read_bytes;
using test::run_cli;

// Two 12-frame OTB folders, "good" and "bad", in a dataset folder of their own; the test
// rewrites bad/groundtruth_rect.txt.
class EvalTruth : public test::SuiteDir<EvalTruth> {
public:
    static constexpr const char* kTag = "evaltruth";

protected:
    static void SetUpTestSuite() {
        test::SuiteDir<EvalTruth>::SetUpTestSuite();
        spec_.frames = 12;
        std::string error;
        truth_ = write_otb_folder(d() + "/ds/good", spec_, &error);
        ASSERT_EQ(truth_.size(), 12u) << error;
        ASSERT_EQ(write_otb_folder(d() + "/ds/bad", spec_, &error).size(), 12u) << error;
        good_truth_ = read_bytes(d() + "/ds/good/groundtruth_rect.txt");
    }
    // Replaces line `line` (1-based) of the true ground truth with `row`, as bad's file.
    static void bad_truth(long line, const std::string& row) {
        std::istringstream in(good_truth_);
        std::string text, l;
        for (long n = 1; std::getline(in, l); ++n) text += (n == line ? row : l) + "\n";
        ASSERT_TRUE(test::write_bytes(d() + "/ds/bad/groundtruth_rect.txt", text));
    }
    static std::string eval(const std::string& json) {
        return "eval " + d() + "/ds -k cpu_fast --quiet --json " + d() + "/" + json;
    }
    static nlohmann::json json(const std::string& name) { return nlohmann::json::parse(read_bytes(d() + "/" + name)); }
    static inline SyntheticClipSpec spec_;
    static inline std::vector<TruthBox> truth_;
    static inline std::string good_truth_;
};

// track refuses a box outside the frame; eval must too, and not clamp it into the frame.
TEST_F(EvalTruth, FirstBoxOutsideTheFrameFailsTheSequence) {
    for (const std::string row : {"5000,5000,40,40", "1e308,1e308,40,40", "10,10,1e308,40"}) {
        SCOPED_TRACE(row);
        ASSERT_NO_FATAL_FAILURE(bad_truth(1, row));
        const auto r = run_cli(eval("out.json"), d());
        EXPECT_FALSE(r.signalled) << r.err;
        EXPECT_EQ(r.exit_code, 1) << r.err;
        EXPECT_NE(r.err.find("bad: first ground-truth box (frame 0): box "), std::string::npos) << r.err;
        EXPECT_NE(r.err.find(" frame"), std::string::npos) << r.err;
        const auto doc = json("out.json");
        EXPECT_FALSE(doc["sequences"].contains("bad")) << doc.dump();
        EXPECT_TRUE(doc["sequences"].contains("good")) << doc.dump();
        ASSERT_TRUE(doc["failed"].contains("bad")) << doc.dump();
        EXPECT_NE(doc["failed"]["bad"].get<std::string>().find("320x240 frame"), std::string::npos) << doc.dump();
        EXPECT_EQ(doc["mean"]["sequences"], 1);
    }
}

// A negative width or height is refused with the file and line, not dropped from scoring.
TEST_F(EvalTruth, NegativeSizeIsRefusedWithFileAndLine) {
    ASSERT_NO_FATAL_FAILURE(bad_truth(5, "100,80,-40,32"));
    const auto r = run_cli(eval("neg.json"), d());
    EXPECT_EQ(r.exit_code, 1) << r.err;
    const std::string where = d() + "/ds/bad/groundtruth_rect.txt:5: negative width or height (-40,32)";
    EXPECT_NE(r.err.find(where), std::string::npos) << r.err;
    EXPECT_EQ(json("neg.json")["failed"]["bad"], where);
}

// ",junk" after four numbers, and five or six values, are refused; never read as x,y,w,h.
TEST_F(EvalTruth, ExtraFieldsAreRefusedWithFileAndLine) {
    const std::string file = d() + "/ds/bad/groundtruth_rect.txt";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"61,71,40,32,junk", file + ":3: 'junk' is not a number"},
        {"61,71,40,32,7", file + ":3: expected x,y,w,h or a polygon of 4 points (8 values), got 5 values"},
        {"61,71,40", file + ":3: expected x,y,w,h or a polygon of 4 points (8 values), got 3 values"},
    };
    for (const auto& [row, message] : cases) {
        SCOPED_TRACE(row);
        ASSERT_NO_FATAL_FAILURE(bad_truth(3, row));
        const auto r = run_cli(eval("extra.json"), d());
        EXPECT_EQ(r.exit_code, 1) << r.err;
        EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
        EXPECT_EQ(json("extra.json")["failed"]["bad"], message);
    }
}

// VOT's 8-value polygons are read as their upright min/max box: the same scores as the
// x,y,w,h file of those boxes.
TEST_F(EvalTruth, VotPolygonsReadAsTheirUprightBox) {
    std::ostringstream poly;
    for (const TruthBox& t : truth_) {
        // A diamond whose corners touch the box's sides, 1-based like the x,y,w,h rows.
        const double x = t.x + 1, y = t.y + 1;
        poly << x + t.w / 2 << "," << y << "," << x + t.w << "," << y + t.h / 2 << "," << x + t.w / 2 << "," << y + t.h
             << "," << x << "," << y + t.h / 2 << "\n";
    }
    ASSERT_TRUE(test::write_bytes(d() + "/ds/bad/groundtruth_rect.txt", poly.str()));
    const auto r = run_cli(eval("poly.json"), d());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto doc = json("poly.json");
    EXPECT_TRUE(doc["failed"].empty()) << doc.dump();
    ASSERT_TRUE(doc["sequences"].contains("bad")) << doc.dump();
    EXPECT_EQ(doc["sequences"]["bad"]["evaluated"], 12);
    EXPECT_NEAR(doc["sequences"]["bad"]["auc"].get<double>(), doc["sequences"]["good"]["auc"].get<double>(), 0.02);
    EXPECT_GT(doc["sequences"]["bad"]["auc"].get<double>(), 0.7);

    std::vector<std::optional<BoxF>> rows;
    std::string error;
    ASSERT_TRUE(parse_groundtruth("11,20,31,20,31,40,11,40\n5\t1\t9\t3\t5\t7\t1\t3\nNaN,1,2,3,4,5,6,7\n0,0,0,0\n", "p",
                                  &rows, &error))
        << error;
    ASSERT_EQ(rows.size(), 4u);
    ASSERT_TRUE(rows[0] && rows[1]);
    EXPECT_EQ(rows[0]->x, 10);
    EXPECT_EQ(rows[0]->y, 19);
    EXPECT_EQ(rows[0]->width, 20);
    EXPECT_EQ(rows[0]->height, 20);
    EXPECT_EQ(rows[1]->x, 0);
    EXPECT_EQ(rows[1]->y, 0);
    EXPECT_EQ(rows[1]->width, 8);
    EXPECT_EQ(rows[1]->height, 6);
    EXPECT_FALSE(rows[2]);
    EXPECT_FALSE(rows[3]);
}

// When every sequence fails, eval.json is still written and says why for each.
TEST_F(EvalTruth, AllFailedStillWritesTheReasons) {
    ASSERT_NO_FATAL_FAILURE(bad_truth(1, "5000,5000,40,40"));
    const auto r = run_cli(eval("none.json") + " --sequences bad", d());
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("no sequence could be evaluated"), std::string::npos) << r.err;
    const auto doc = json("none.json");
    EXPECT_TRUE(doc["sequences"].empty());
    EXPECT_NE(doc["failed"]["bad"].get<std::string>().find("lies outside"), std::string::npos) << doc.dump();
}

}  // namespace
}  // namespace corrtrack
