// The CLI as a user runs it: a full track run with every output, `kernels`, and every kind
// of bad input giving a clear message and a non-zero exit without crashing.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "app/io/camera_modes.h"
#include "app/io/frame_source.h"
#include "app/io/video_writer.h"
#include "tests/support/clip_suite.h"
#include "tests/support/read_source.h"
#include "tests/support/run_cli.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

using test::run_cli;

class Cli : public test::ClipSuite<Cli> {
public:
    static constexpr const char* kTag = "cli";

protected:
    static std::string box_arg(const TruthBox& t) { return "--box " + test::box_text(t); }
};

TEST_F(Cli, TrackWritesEveryOutputWithOneRowPerFrame) {
    const std::string d = dir_->path();
    const auto r = run_cli("track " + d + "/clip.mp4 " + box_arg(truth_[0]) + " --kernel cpu_fast --csv " + d +
                               "/out.csv --json " + d + "/out.json --video " + d + "/out.mp4 --otb " + d + "/out.txt",
                           d);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("frames      40"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("correlate"), std::string::npos) << r.out;

    std::ifstream csv(d + "/out.csv");
    std::string line;
    std::getline(csv, line);
    EXPECT_EQ(line.rfind("frame,pts,target,x,y,w,h,cx,cy,score,confidence,lost", 0), 0u) << line;
    long rows = 0;
    double err_sum = 0;
    while (std::getline(csv, line)) {
        long frame;
        double pts, x, y, w, h, cx, cy;
        int target;
        ASSERT_EQ(std::sscanf(line.c_str(), "%ld,%lf,%d,%lf,%lf,%lf,%lf,%lf,%lf", &frame, &pts, &target, &x, &y, &w, &h,
                              &cx, &cy),
                  9);
        EXPECT_EQ(frame, rows);  // every frame exactly once, in order
        EXPECT_NEAR(pts, rows / spec_.fps, 1e-3);
        err_sum += std::hypot(cx - truth_[frame].cx(), cy - truth_[frame].cy());
        ++rows;
    }
    EXPECT_EQ(rows, 40);
    EXPECT_LT(err_sum / rows, 0.5);  // through the default H.264 file path too

    const auto doc = nlohmann::json::parse(test::read_text(d + "/out.json"));
    EXPECT_EQ(doc["frames"], 40);
    EXPECT_EQ(doc["results"].size(), 40u);
    EXPECT_EQ(doc["kernel"], "cpu_fast");

    std::ifstream otb(d + "/out.txt");
    long otb_rows = 0;
    double ox, oy;
    while (std::getline(otb, line)) {
        ASSERT_EQ(std::sscanf(line.c_str(), "%lf,%lf", &ox, &oy), 2);
        if (otb_rows == 0) EXPECT_NEAR(ox, truth_[0].x + 1, 0.01);  // 1-based
        ++otb_rows;
    }
    EXPECT_EQ(otb_rows, 40);

    const ReadAll video = read_file(d + "/out.mp4");
    EXPECT_EQ(video.count, 40) << video.error;
    EXPECT_EQ(video.last_size.width, spec_.width);
}

TEST_F(Cli, RealtimePacesToTimestampsAndCountsLateFrames) {
    const std::string d = dir_->path();
    // Fast enough: 40 frames at 25 fps take about 1.6 s and none is late.
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run_cli(
        "track " + d + "/clip.mp4 " + box_arg(truth_[0]) + " --kernel cpu_fast --realtime --json " + d + "/rt.json", d);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_GE(secs, 39 / spec_.fps);
    auto doc = nlohmann::json::parse(test::read_text(d + "/rt.json"));
    EXPECT_EQ(doc["frames"].get<long>() + doc["late_dropped"].get<long>(), 40);
    // Too slow for real time (brute force on a 120x96 template): late frames are dropped and
    // counted, and every frame is either one result row or one counted drop.
    r = run_cli("track " + d + "/clip.mp4 --box 20,20,120,96 --max-template 128 --kernel cpu_ref --realtime --csv " +
                    d + "/slow.csv --json " + d + "/slow.json",
                d);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    doc = nlohmann::json::parse(test::read_text(d + "/slow.json"));
    const long rows = doc["frames"], late = doc["late_dropped"];
    EXPECT_GT(late, 0);
    EXPECT_EQ(rows + late, 40);
    EXPECT_NE(r.out.find("late        " + std::to_string(late)), std::string::npos) << r.out;
}

TEST_F(Cli, KernelsListsTheRegistry) {
    const auto r = run_cli("kernels", dir_->path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("cpu_ref"), std::string::npos);
    EXPECT_NE(r.out.find("cpu_fast"), std::string::npos);
    EXPECT_NE(r.out.find("cuda_dp4a"), std::string::npos);
}

struct BadCase {
    const char* name;
    std::string args;
    const char* message;  // must appear in stderr
};

TEST_F(Cli, BadInputGivesAClearMessageAndNonZeroExit) {
    const std::string d = dir_->path();
    {
        std::ofstream(d + "/empty.mp4");
        std::ofstream(d + "/text.mp4") << "this is not a video, just some text\n";
        // A truncated copy of a real clip: the first 40% of the bytes.
        const auto size = std::filesystem::file_size(d + "/clip.mp4");
        std::string bytes = test::read_text(d + "/clip.mp4");
        std::ofstream(d + "/truncated.mp4", std::ios::binary).write(bytes.data(), static_cast<long>(size * 2 / 5));
        // A clip whose first frame is flat grey where the box goes.
        std::string error;
        auto w = VideoWriter::open(d + "/flat.mp4", {160, 120}, VideoWriterOptions{}, &error);
        ASSERT_TRUE(w) << error;
        std::vector<std::uint8_t> grey(160 * 120, 100);
        for (int i = 0; i < 160 * 60; ++i) grey[i] = static_cast<std::uint8_t>((i * 7919) % 256);
        for (int k = 0; k < 5; ++k) ASSERT_TRUE(w->write_gray(grey.data(), 160, &error)) << error;
        ASSERT_TRUE(w->close(&error)) << error;
    }
    const std::string clip = d + "/clip.mp4 ";
    const BadCase cases[] = {
        {"missing file", "track " + d + "/no_such.mp4 --box 1,1,10,10", "no_such.mp4"},
        {"empty file", "track " + d + "/empty.mp4 --box 1,1,10,10", "empty.mp4"},
        {"text named .mp4", "track " + d + "/text.mp4 --box 1,1,10,10", "text.mp4"},
        {"truncated video", "track " + d + "/truncated.mp4 " + box_arg(truth_[0]), "truncated.mp4"},
        {"box outside the frame", "track " + clip + "--box 400,10,20,20", "outside"},
        {"box larger than the frame", "track " + clip + "--box 0,0,500,400", "larger than"},
        {"zero-size box", "track " + clip + "--box 10,10,0,20", "zero"},
        {"malformed box", "track " + clip + "--box 10,10,abc", "not x,y,w,h"},
        {"flat template", "track " + d + "/flat.mp4 --box 20,70,30,30", "flat"},
        {"unknown kernel", "track " + clip + box_arg(truth_[0]) + " --kernel warp9000", "unknown kernel 'warp9000'"},
        {"unknown kernel in eval", "eval " + d + " --kernel warp9000", "warp9000"},
        {"missing dataset", "eval " + d + "/nowhere", "nowhere"},
        {"bad update policy", "track " + clip + box_arg(truth_[0]) + " --update sometimes", "--update"},
        {"bad decode mode", "track " + clip + box_arg(truth_[0]) + " --decode gpu", "--decode"},
    };
    for (const BadCase& c : cases) {
        const auto r = run_cli(c.args, d);
        EXPECT_NE(r.exit_code, 0) << c.name << ": " << r.err;
        EXPECT_FALSE(r.signalled) << c.name << " crashed or hung (exit " << r.exit_code << "): " << r.err;
        EXPECT_NE(r.err.find(c.message), std::string::npos) << c.name << ": stderr was: " << r.err;
    }
    // Usage errors (flags and their values) exit 2, input errors 1, as docs/usage.md says.
    EXPECT_EQ(run_cli("track " + clip + box_arg(truth_[0]) + " --decode gpu", d).exit_code, 2);
    EXPECT_EQ(run_cli("track " + clip + box_arg(truth_[0]) + " --scales", d).exit_code, 2);
    EXPECT_EQ(run_cli("track " + d + "/no_such.mp4 --box 1,1,10,10", d).exit_code, 1);
}

// --camera-size/-fps/-format on track and gui: bad values are usage errors that say what is
// accepted; on a file they are refused; a camera that is not there (no hardware here) names
// the mode asked for.
TEST_F(Cli, CameraOptionsAreCheckedAndReachTheCamera) {
    const std::string d = dir_->path(), clip = d + "/clip.mp4";
    struct Case {
        std::string args, message;
    };
    std::vector<Case> usage = {
        {"track /dev/video97 --box 1,1,10,10 --camera-size 1920", "--camera-size: must be WIDTHxHEIGHT"},
        {"track /dev/video97 --box 1,1,10,10 --camera-size 0x0", "between 16x16 and 16384x16384"},
        {"track /dev/video97 --box 1,1,10,10 --camera-size 1920x1080p", "WIDTHxHEIGHT"},
        {"track /dev/video97 --box 1,1,10,10 --camera-fps 0", "--camera-fps"},
        {"track /dev/video97 --box 1,1,10,10 --camera-fps nan", "--camera-fps"},
        {"track /dev/video97 --box 1,1,10,10 --camera-fps 5000", "--camera-fps"},
        {"track /dev/video97 --box 1,1,10,10 --camera-format bayer", "--camera-format: must be one of mjpeg"},
        {"track " + clip + " --box 1,1,10,10 --camera-size 640x480", "apply to cameras (/dev/videoN)"},
        {"track " + clip + " --box 1,1,10,10 --video-quality insane",
         "--video-quality: must be fast, balanced or best"},
    };
#if CORRTRACK_HAVE_GUI  // the gui command exists only where the GUI is built (not the sanitizer build)
    usage.push_back({"gui /dev/video97 --camera-format rgb32", "--camera-format: must be one of"});
    usage.push_back({"gui /dev/video97 --camera-size 1x1", "--camera-size"});
#endif
    for (const Case& c : usage) {
        const auto r = run_cli(c.args, d);
        EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.err;
        EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": stderr was: " << r.err;
    }
    const auto r = run_cli(
        "track /dev/video97 --box 1,1,10,10 --camera-size 1920x1080 --camera-fps 30 "
        "--camera-format MJPG --read-timeout 1",
        d);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("camera '/dev/video97' refused 1920x1080 @ 30 fps mjpeg: No such file or directory"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("its modes could not be listed (cannot open: No such file or directory)"), std::string::npos)
        << r.err;
}

TEST_F(Cli, CamerasCommandSaysNoCamerasCleanly) {
    const auto r = run_cli("cameras", dir_->path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    if (camera_paths().empty())
        EXPECT_EQ(r.out, "no cameras found (no /dev/video* device)\n");
    else
        EXPECT_NE(r.out.find("/dev/video"), std::string::npos) << r.out;
    const auto bad = run_cli("cameras /dev/null", dir_->path());
    EXPECT_EQ(bad.exit_code, 1);
    EXPECT_NE(bad.out.find("/dev/null\n  not a V4L2 device"), std::string::npos) << bad.out;
}

// The video is drawn and encoded on its own thread: it still has exactly one frame per
// tracked frame (read back with FrameSource), for whole runs and --frames, at every quality.
TEST_F(Cli, OutputVideoHasEveryTrackedFrame) {
    const std::string d = dir_->path();
    const std::string sample = std::string(CORRTRACK_SOURCE_DIR) + "/assets/sample.mp4";
    for (const auto& [extra, quality, expected] :
         {std::tuple{"", "fast", 120L}, {"--frames 37", "best", 37L}, {"", "balanced", 120L}}) {
        const auto r = run_cli("track " + sample + " " + extra + " --video-quality " + quality + " --kernel cpu_fast " +
                                   "--video " + d + "/v.mp4 --json " + d + "/v.json",
                               d);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_NE(r.out.find("video       "), std::string::npos) << r.out;
        EXPECT_NE(r.out.find(", " + std::to_string(expected) + " frames; the tracker waited"), std::string::npos)
            << r.out;
        const auto doc = nlohmann::json::parse(test::read_text(d + "/v.json"));
        EXPECT_EQ(doc["frames"].get<long>(), expected);
        EXPECT_EQ(doc["video"]["frames"].get<long>(), expected);
        SourceOptions so;
        so.input = d + "/v.mp4";
        std::string error;
        auto video = FrameSource::open(so, &error);
        ASSERT_TRUE(video) << error;
        Frame f;
        long n = 0;
        while (video->read(f) == ReadStatus::kFrame) ++n;
        EXPECT_EQ(n, expected) << quality;
    }
}

// The video shows the input in its own colours with the boxes drawn on it: on a 4:2:0 limited-
// range clip (the sample: the decoder's planes are copied to the encoder) and on a lossless
// 4:4:4 full-range one (converted to 4:2:0, range kept), frame 0's box outline is green and the
// picture away from it matches the input's.
TEST_F(Cli, OutputVideoShowsTheBoxesOnTheInputsColours) {
    const std::string d = dir_->path();
    const std::string sample = std::string(CORRTRACK_SOURCE_DIR) + "/assets/sample.mp4";
    for (const auto& [input, box] : {std::pair{sample, std::string()}, {clip(), " " + box_arg(truth_[0])}}) {
        SCOPED_TRACE(input);
        const auto r = run_cli("track " + input + box + " --kernel cpu_fast --frames 3 --video " + d +
                                   "/boxes.mkv --csv " + d + "/boxes.csv",
                               d);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        std::ifstream csv(d + "/boxes.csv");
        std::string line;
        std::getline(csv, line);
        std::getline(csv, line);
        long frame;
        double pts, x, y, w, h;
        int target;
        ASSERT_EQ(std::sscanf(line.c_str(), "%ld,%lf,%d,%lf,%lf,%lf,%lf", &frame, &pts, &target, &x, &y, &w, &h), 7);
        std::string error;
        auto in = open_source(input, &error), out = open_source(d + "/boxes.mkv", &error);
        ASSERT_TRUE(in && out) << error;
        Frame fi, fo;
        ASSERT_EQ(in->read(fi), ReadStatus::kFrame);
        ASSERT_EQ(out->read(fo), ReadStatus::kFrame);
        ASSERT_EQ(fo.size(), fi.size());
        auto at = [](const Frame& f, int px, int py, int c) {
            return static_cast<double>(f.rgb.data()[(static_cast<std::size_t>(py) * f.width + px) * 3 + c]);
        };
        // The top edge of the 2-px box (60, 255, 90), its corners left out: drawn into the 4:2:0
        // planes, chroma and all, so the line keeps its colour.
        const int x0 = static_cast<int>(std::lround(x)), y0 = static_cast<int>(std::lround(y));
        const int x1 = static_cast<int>(std::lround(x + w)) - 1;
        double edge[3] = {0, 0, 0};
        for (int px = x0 + 2; px <= x1 - 2; ++px)
            for (int c = 0; c < 3; ++c) edge[c] += at(fo, px, y0, c) / (x1 - x0 - 3);
        EXPECT_NEAR(edge[0], 60, 20);
        EXPECT_NEAR(edge[1], 255, 20);
        EXPECT_NEAR(edge[2], 90, 20);
        // Away from the box (frame 0 has no search window or inset): the input's colours.
        double diff = 0;
        long n = 0;
        for (int py = 0; py < fi.height; ++py)
            for (int px = 0; px < fi.width; ++px) {
                if (px >= x0 - 4 && px <= x1 + 4 && py >= y0 - 4 && py <= static_cast<int>(std::lround(y + h)) + 4)
                    continue;
                for (int c = 0; c < 3; ++c) diff += std::abs(at(fo, px, py, c) - at(fi, px, py, c));
                n += 3;
            }
        EXPECT_LT(diff / n, 3.0) << "colours shifted: a range or matrix tag is wrong";
    }
}

}  // namespace
}  // namespace corrtrack
