// The tracker's numeric options are one table (tracker_option_ranges, app/track/options.cpp)
// read by the CLI (add_tracker_options), validate() and the Python keywords
// (python/src/tracker.cpp). This checks the three against the documented rows below, field by
// field: every CLI flag has a row, each row's ends are accepted and just outside refused by
// both the CLI and validate(), the flag sets the field the row names, and Python exposes the
// same fields.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "app/cli/cli_common.h"
#include "app/track/options.h"

namespace corrtrack {
namespace {

using Member = std::variant<double TrackerOptions::*, int TrackerOptions::*>;

struct RangedOption {
    const char* flag;    // the CLI's
    const char* member;  // the TrackerOptions field, which is also the Python keyword
    Member ptr;
    double lo, hi;  // the documented range, ends included
};

#define ROW(flag, member, lo, hi) \
    { flag, #member, &TrackerOptions::member, lo, hi }
const RangedOption kRanged[] = {
    ROW("--search-factor", search_factor, 1.0, 10.0),
    ROW("--window-speed", window_speed, 0.0, 10.0),
    ROW("--max-template", max_template_side, 4, 256),
    ROW("--min-template", min_template_side, 0, 64),
    ROW("--blend-rate", blend_rate, 0.0, 1.0),
    ROW("--keyframe-interval", keyframe_interval, 1, 1e6),
    ROW("--update-min-score", update_min_score, -1.0, 1.0),
    ROW("--update-min-psr", update_min_psr, 0.0, 100.0),
    ROW("--update-relative", update_relative, 0.0, 1.0),
    ROW("--lost-score", lost_score, -1.0, 1.0),
    ROW("--lost-psr", lost_psr, 0.0, 100.0),
    ROW("--recover-score", recover_score, -1.0, 1.0),
    ROW("--recover-psr", recover_psr, 0.0, 100.0),
    ROW("--scales", scales, 1, 25),
    ROW("--scale-step", scale_step, 1.0, 2.0),
    ROW("--scale-penalty", scale_penalty, 0.0, 1.0),
    ROW("--scale-rate", scale_rate, 0.0, 1.0),
    ROW("--scale-anchor", scale_anchor, 0.0, 1.0),
    ROW("--anchor", anchor, 0.0, 1.0),
    ROW("--motion-penalty", motion_penalty, 0.0, 10.0),
    ROW("--velocity-gain", velocity_gain, 0.0, 1.0),
    ROW("--colour", colour, 0.0, 1.0),
    ROW("--colour-rate", colour_rate, 0.0, 1.0),
    ROW("--colour-extent", colour_extent, 0.0, 1.0),
    ROW("--distractor-weight", distractor_weight, 0.0, 1.0),
    ROW("--lookalike-claim", lookalike_claim, 0.0, 1.0),
    ROW("--filter", filter, 0.0, 1.0),
    ROW("--filter-rate", filter_rate, 0.0, 1.0),
    ROW("--filter-balance", filter_balance, 0.0, 100.0),
    ROW("--filter-support", filter_support, 0.0, 10.0),
    ROW("--cue-targets", cue_targets, 0, 1e6),
    ROW("--gradient", gradient, 0.0, 1.0),
    ROW("--memory", memory, 0, 16),
    ROW("--redetect-budget", redetect_budget, -1, 1e9),
    ROW("--redetect-confirm", redetect_confirm, 1, 100),
    ROW("--redetect-margin", redetect_margin, 0.0, 2.0),
    ROW("--min-box-side", min_box_side, 1.0, 1e4),
    ROW("--core", core, 0.3, 1.0),
};
#undef ROW
// Options without a numeric range, by flag -> field.
const std::map<std::string, std::string> kUnranged = {
    {"--kernel", "kernel"}, {"--update", "update"}, {"--scale-fit", "scale_fit"}};

bool is_int(const RangedOption& r) { return std::holds_alternative<int TrackerOptions::*>(r.ptr); }

std::string text(const RangedOption& r, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, is_int(r) ? "%.0f" : "%.17g", v);
    return buf;
}

// Just outside [lo, hi]: the next integer, or a relative step far above double rounding.
double below(const RangedOption& r) { return is_int(r) ? r.lo - 1 : r.lo - 1e-6 * std::max(1.0, std::fabs(r.lo)); }
double above(const RangedOption& r) { return is_int(r) ? r.hi + 1 : r.hi + 1e-6 * std::max(1.0, std::fabs(r.hi)); }

double get(const TrackerOptions& o, const RangedOption& r) {
    return std::visit([&](auto p) { return static_cast<double>(o.*p); }, r.ptr);
}
void set(TrackerOptions& o, const RangedOption& r, double v) {
    std::visit([&](auto p) { o.*p = static_cast<std::remove_reference_t<decltype(o.*p)>>(v); }, r.ptr);
}

// Parses `flag value` the way `corrtrack track` does; false when the CLI refuses it.
bool cli_accepts(const std::string& flag, const std::string& value, TrackerOptions* o) {
    CLI::App app;
    add_tracker_options(app, *o);
    try {
        app.parse(flag + " " + value, false);
        return true;
    } catch (const CLI::ParseError&) {
        return false;
    }
}

TEST(CliTrackerOptions, EveryFlagHasARowAndEveryRowAFlag) {
    CLI::App app;
    TrackerOptions o;
    add_tracker_options(app, o);
    std::set<std::string> flags, rows;
    for (const CLI::Option* opt : app.get_options())
        if (!opt->get_lnames().empty() && opt->get_lnames()[0] != "help") flags.insert("--" + opt->get_lnames()[0]);
    for (const RangedOption& r : kRanged) rows.insert(r.flag);
    for (const auto& [flag, member] : kUnranged) rows.insert(flag);
    EXPECT_EQ(flags, rows);
}

TEST(CliTrackerOptions, CliAndValidateAcceptTheEndsAndRefuseJustOutside) {
    for (const RangedOption& r : kRanged) {
        SCOPED_TRACE(r.flag);
        for (const double v : {r.lo, r.hi}) {
            TrackerOptions o;
            EXPECT_TRUE(cli_accepts(r.flag, text(r, v), &o)) << v;
            EXPECT_EQ(get(o, r), v) << "the flag sets another field than " << r.member;
            TrackerOptions direct;
            set(direct, r, v);
            EXPECT_EQ(validate(direct), "") << v;
        }
        for (const double v : {below(r), above(r)}) {
            TrackerOptions o;
            EXPECT_FALSE(cli_accepts(r.flag, text(r, v), &o)) << v;
            TrackerOptions direct;
            set(direct, r, v);
            EXPECT_NE(validate(direct), "") << r.member << " = " << v;
        }
    }
}

// The table the CLI, validate() and Python read: the same rows, fields and ranges as above.
TEST(CliTrackerOptions, TheSharedTableHoldsTheDocumentedRows) {
    const auto& table = tracker_option_ranges();
    ASSERT_EQ(table.size(), std::size(kRanged));
    for (const RangedOption& r : kRanged) {
        const auto it = std::find_if(table.begin(), table.end(),
                                     [&](const TrackerOptionRange& t) { return std::string(t.flag) == r.flag; });
        ASSERT_NE(it, table.end()) << r.flag;
        EXPECT_STREQ(it->field, r.member);
        EXPECT_EQ(it->lo, r.lo) << r.flag;
        EXPECT_EQ(it->hi, r.hi) << r.flag;
        EXPECT_EQ(it->integer != nullptr, is_int(r)) << r.flag;
        EXPECT_EQ((it->real != nullptr) + (it->integer != nullptr), 1) << r.flag;
    }
}

// python/src/tracker.cpp takes the numeric keywords from the table (keyed by field name) and
// maps the others as {"key", field(&TrackerOptions::member)}: together, the CLI's fields.
TEST(CliTrackerOptions, PythonKeywordsAreTheCliFields) {
    std::ifstream in(std::string(CORRTRACK_SOURCE_DIR) + "/python/src/tracker.cpp");
    ASSERT_TRUE(in) << "python/src/tracker.cpp not found";
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string src = ss.str();
    ASSERT_NE(src.find("f.emplace(r.field,"), std::string::npos) << "Python no longer reads tracker_option_ranges()";
    std::set<std::string> python;
    for (const TrackerOptionRange& r : tracker_option_ranges()) python.insert(r.field);
    const std::regex entry(R"re(\{"(\w+)",\s*field\(&TrackerOptions::(\w+)\)\})re");
    for (auto it = std::sregex_iterator(src.begin(), src.end(), entry); it != std::sregex_iterator(); ++it) {
        EXPECT_EQ((*it)[1], (*it)[2]) << "Python keyword and field differ";
        python.insert((*it)[1]);
    }
    // "update" is parsed from its name (none | keyframe | blend), not through field().
    if (src.find("{\"update\",") != std::string::npos) python.insert("update");
    std::set<std::string> cli;
    for (const RangedOption& r : kRanged) cli.insert(r.member);
    for (const auto& [flag, member] : kUnranged) cli.insert(member);
    EXPECT_EQ(python, cli);
}

}  // namespace
}  // namespace corrtrack
