// The GUI tests' harness: a display for the whole test binary (an Xvfb of its own when
// $DISPLAY is unset; gui_harness.cpp registers it), the bundled sample and its box, the
// screenshot PNG, what `gui --print-box` reports, the --csv rows and the --log events.
// Built only with the GUI. Thread rules: plain functions, called from the test's thread.
#pragma once

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "render/colormap.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack::test {

inline const std::string kSample = std::string(CORRTRACK_SOURCE_DIR) + "/assets/sample.mp4";
// The walking man at the left of the sample's first frame (as in assets/sample.box).
inline const char* const kSampleBox = "252,218,34,92";

bool have_program(const char* name);

// Whether the test binary has a display, and why not.
bool display_available();
const std::string& display_why_not();

#define REQUIRE_DISPLAY()                                                                                  \
    do {                                                                                                   \
        if (!::corrtrack::test::display_available()) GTEST_SKIP() << ::corrtrack::test::display_why_not(); \
    } while (0)

// A screenshot PNG, RGB.
struct Image {
    int width = 0, height = 0;
    std::vector<unsigned char> rgb;
    bool load(const std::string& path);
    const unsigned char* at(int x, int y) const { return &rgb[(static_cast<std::size_t>(y) * width + x) * 3]; }
    bool inside(int x, int y) const { return x >= 0 && y >= 0 && x < width && y < height; }
};

int dist2(const unsigned char* p, int r, int g, int b);

// What `gui --print-box` reports.
struct Printed {
    long frame = -1;
    int window_w = 0, window_h = 0;
    double x0 = 0, y0 = 0, scale = 0;
    double panel[4] = {};
    std::map<int, std::array<double, 4>> box, search, heatmap;
    double sx(double fx) const { return x0 + scale * fx; }
    double sy(double fy) const { return y0 + scale * fy; }
};

Printed parse_printed(const std::string& out);

// Fraction of points along a box outline (frame coordinates, mapped through the letterbox)
// that have the box colour within 3 px.
double outline_hits(const Image& img, const Printed& p, std::array<double, 4> b, int r, int g, int bl);

// Fraction of pixels inside the heatmap rectangle (away from its edge, the box outline and
// the label) within 20 levels of a colormap entry.
double heatmap_hits(const Image& img, const Printed& p, int id, Colormap cm);

struct CsvRow {
    long frame;
    int target;
    double x, y, w, h;
};

std::vector<CsvRow> read_csv(const std::string& path);

// The --log file's events, one JSON object a line.
std::vector<nlohmann::json> read_log(const std::string& path);

}  // namespace corrtrack::test

namespace corrtrack {

// The fixture of the GUI runs: a fresh scratch folder per test.
class Gui : public ::testing::Test {
protected:
    void SetUp() override { dir_ = std::make_unique<TempDir>("gui"); }
    std::string file(const std::string& name) const { return dir_->file(name); }
    std::unique_ptr<TempDir> dir_;
};

}  // namespace corrtrack
