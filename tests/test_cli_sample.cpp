// The bundled sample as a new user first runs it (scripts/run.sh): the man in the long coat
// walks past a man in jeans standing at the post and behind the sign beside him (frames
// 104-110); the box must stay on him to the last frame, on the CPU path and, where there is a
// GPU, on its default path (NVDEC frames, the colour planes brought to the host) with the
// CPU's boxes. Part of test_cli.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "corrtrack/correlator.h"
#include "tests/support/run_cli.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

struct Box {
    double x = 0, y = 0, w = 0, h = 0;
    double cx() const { return x + w / 2; }
    double cy() const { return y + h / 2; }
};

double iou(const Box& a, const Box& b) {
    const double ix = std::max(0.0, std::min(a.x + a.w, b.x + b.w) - std::max(a.x, b.x));
    const double iy = std::max(0.0, std::min(a.y + a.h, b.y + b.h) - std::max(a.y, b.y));
    return ix * iy / (a.w * a.h + b.w * b.h - ix * iy);
}

// The box of every frame of a `track --csv` run, in frame order.
std::vector<Box> track_sample(const std::string& args, const TempDir& dir, const std::string& name) {
    const std::string csv = dir.file(name + ".csv");
    const auto r = test::run_cli(
        "track " + std::string(CORRTRACK_SOURCE_DIR) + "/assets/sample.mp4 " + args + " --csv " + csv, dir.path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<Box> boxes;
    std::ifstream in(csv);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
        long frame = 0;
        double pts = 0;
        int target = 0;
        Box b;
        if (std::sscanf(line.c_str(), "%ld,%lf,%d,%lf,%lf,%lf,%lf", &frame, &pts, &target, &b.x, &b.y, &b.w, &b.h) != 7)
            break;
        EXPECT_EQ(frame, static_cast<long>(boxes.size()));
        boxes.push_back(b);
    }
    EXPECT_EQ(boxes.size(), 120u) << name;
    return boxes;
}

// Read off the last frame by eye (docs/images/sample_contact_sheet.jpg): the man in the long
// coat, and the man in jeans at the post the box used to end on.
constexpr Box kCoatAtLast{497, 213, 36, 77};
constexpr Box kJeansAtLast{373, 182, 24, 78};
constexpr double kPostX = 430;  // the post's x: the man in the coat is right of it from frame 110

void expect_on_the_coat(const std::vector<Box>& boxes, const char* what) {
    ASSERT_EQ(boxes.size(), 120u) << what;
    for (std::size_t i = 110; i < boxes.size(); ++i) EXPECT_GT(boxes[i].cx(), kPostX) << what << ", frame " << i;
    const Box& last = boxes.back();
    EXPECT_GE(iou(last, kCoatAtLast), 0.5) << what << ": last box " << last.x << "," << last.y;
    EXPECT_GT(std::hypot(last.cx() - kJeansAtLast.cx(), last.cy() - kJeansAtLast.cy()), 60.0) << what;
}

TEST(Sample, TheBoxStaysOnTheManInTheLongCoat) {
    TempDir dir("sample");
    const std::vector<Box> cpu = track_sample("--kernel cpu_fast", dir, "cpu");
    expect_on_the_coat(cpu, "cpu_fast");
    if (!cuda_available()) {
        std::printf("no GPU: the default GPU path (NVDEC, auto) was not run\n");
        return;
    }
    // The GPU's defaults: decode auto (NVDEC where it opens the input), kernel auto.
    const std::vector<Box> gpu = track_sample("", dir, "gpu");
    expect_on_the_coat(gpu, "GPU defaults");
    ASSERT_EQ(gpu.size(), cpu.size());
    for (std::size_t i = 0; i < cpu.size(); ++i) {
        EXPECT_NEAR(gpu[i].x, cpu[i].x, 1e-3) << "frame " << i;
        EXPECT_NEAR(gpu[i].y, cpu[i].y, 1e-3) << "frame " << i;
        EXPECT_NEAR(gpu[i].w, cpu[i].w, 1e-3) << "frame " << i;
    }
}

}  // namespace
}  // namespace corrtrack
