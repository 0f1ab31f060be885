// Bad input through the CLI, as an adversarial user tries it: option values, output paths that
// would destroy inputs, damaged and resolution-changing media, full disks, pipes and FIFOs that
// stall. Every case: the documented exit code, a clear message, no crash, no hang, and no
// input touched. The bad-input table of docs/reliability.md lists these cases.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <thread>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "app/io/frame_source.h"
#include "app/io/video_writer.h"
#include "tests/support/clip_suite.h"
#include "tests/support/damage.h"
#include "tests/support/run_cli.h"
#include "tests/support/read_source.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

namespace fs = std::filesystem;
using test::read_bytes;
using test::run_cli;

class BadInput : public test::ClipSuite<BadInput> {
public:
    static constexpr const char* kTag = "badinput";

protected:
    static std::string box() { return "--box " + test::box_text(truth_[0]); }
    static std::string track(const std::string& rest) {
        return "track " + clip() + " " + box() + " -k cpu_fast " + rest;
    }
};

struct Case {
    std::string args;
    int exit_code;
    std::string message;  // must appear in stderr
};

void expect_case(const Case& c, const std::string& scratch) {
    const auto r = run_cli(c.args, scratch);
    EXPECT_FALSE(r.signalled) << c.args << ": crashed or hung: " << r.err;
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": stderr: " << r.err;
}

// Every numeric option is range-checked where it is declared: NaN, inf, huge and zero values
// that make no sense are usage errors (exit 2) with the option named, never a crash or a hang.
TEST_F(BadInput, OptionValuesOutOfRangeAreUsageErrors) {
    const std::vector<Case> cases = {
        {track("--update keyframe --keyframe-interval 0"), 2, "--keyframe-interval"},
        {track("--scales 1000"), 2, "--scales"},
        {track("--scales 0"), 2, "--scales"},
        {track("--scale-step inf"), 2, "not a finite number"},
        {track("--scale-step 0.5"), 2, "--scale-step"},
        {track("--search-factor 1e6"), 2, "--search-factor"},
        {track("--search-factor nan"), 2, "not a finite number"},
        {track("--blend-rate nan"), 2, "--blend-rate"},
        {track("--anchor nan"), 2, "--anchor"},
        {track("--anchor -inf"), 2, "--anchor"},
        {track("--lost-score 2"), 2, "--lost-score"},
        {track("--max-template 100000"), 2, "--max-template"},
        {track("--motion-penalty 1e308"), 2, "--motion-penalty"},
        {track("--read-timeout nan"), 2, "--read-timeout"},
        {track("--read-timeout 0"), 2, "--read-timeout"},
        {track("--read-timeout 1e300"), 2, "--read-timeout"},
        {track("--frames 0"), 2, "0 frames would process nothing"},
        {track("--frames -5"), 2, "--frames"},
        {track("--frames 99999999999999999999"), 2, "--frames"},
        {track("--scales abc"), 2, "--scales"},
        {track("--nvdec-streams 0"), 2, "--nvdec-streams"},
        {track("--nvdec-rate 0"), 2, "--nvdec-rate"},
        {track("--nvdec-rate nan"), 2, "--nvdec-rate"},
        {"bench --sizes 100000x100000 --kernels cpu_fast", 2, "too large"},
        {"bench --templates 99999x3 --kernels cpu_fast", 2, "too large"},
        {"bench --runs 0", 2, "--runs"},
        {"bench --max-seconds nan", 2, "--max-seconds"},
        {"bench --hang-seconds nan", 2, "--hang-seconds"},
        {"bench --batch 100000", 2, "--batch"},
        {"bench --e2e " + clip() + " --e2e-frames 0", 2, "0 frames would process nothing"},
        {"eval " + d() + " --scale-step inf", 2, "--scale-step"},
    };
    for (const Case& c : cases) expect_case(c, d());
}

// Outputs that would overwrite an input, or each other, are refused before anything runs, with
// a usage error; symlinks, "..", and hard links do not get past the check.
TEST_F(BadInput, OutputsNeverOverwriteInputsOrEachOther) {
    const std::string original = read_bytes(clip());
    // An image sequence, an OTB folder with ground truth, a box file, a link to the clip.
    std::string error;
    SyntheticClipSpec small = spec_;
    small.frames = 5;
    ASSERT_FALSE(write_synthetic_sequence(d() + "/seq/%05d.png", small, &error).empty()) << error;
    ASSERT_FALSE(write_otb_folder(d() + "/otb", small, &error).empty()) << error;
    std::ofstream(d() + "/target.box") << truth_[0].x << "," << truth_[0].y << "," << truth_[0].w << "," << truth_[0].h
                                       << "\n";
    fs::create_symlink(clip(), d() + "/link.mp4");
    fs::create_hard_link(clip(), d() + "/hard.mp4");
    fs::create_directories(d() + "/sub");
    const std::string seq_frame = read_bytes(d() + "/seq/00001.png");
    const std::string gt = read_bytes(d() + "/otb/groundtruth_rect.txt");
    const std::string box_file = read_bytes(d() + "/target.box");

    const std::string otb_box = "--box 60,70,40,32 -k cpu_fast";
    const std::vector<Case> cases = {
        {track("--json " + clip()), 2, "would overwrite the input"},
        {track("--otb " + clip()), 2, "would overwrite the input"},
        {track("--csv " + clip()), 2, "would overwrite the input"},
        {track("--video " + clip()), 2, "would overwrite the input"},
        {track("--json " + d() + "/sub/../clip.mp4"), 2, "would overwrite the input"},
        {track("--json " + d() + "/link.mp4"), 2, "would overwrite the input"},
        {track("--json " + d() + "/hard.mp4"), 2, "would overwrite the input"},
        {"track " + d() + "/seq/%05d.png " + otb_box + " --video " + d() + "/seq/%05d.png", 2, "would overwrite"},
        {"track " + d() + "/seq/%05d.png " + otb_box + " --csv " + d() + "/seq/00003.png", 2, "would overwrite"},
        {"track " + d() + "/seq " + otb_box + " --video " + d() + "/seq/%05d.png", 2, "would overwrite"},
        {"track " + clip() + " --box-file " + d() + "/target.box -k cpu_fast --csv " + d() + "/target.box", 2,
         "would overwrite the box file"},
        {"track " + d() + "/otb " + otb_box + " --otb " + d() + "/otb/groundtruth_rect.txt", 2, "would overwrite"},
        {"track " + d() + "/otb " + otb_box + " --csv " + d() + "/otb/img/00002.jpg", 2, "would overwrite"},
        {track("--csv " + d() + "/same.txt --json " + d() + "/same.txt"), 2, "would write the same file"},
        {track("--csv " + d() + "/same.txt --otb " + d() + "/sub/../same.txt"), 2, "would write the same file"},
        {track("--json " + d() + "/sub"), 1, "it is a folder"},
        {track("--video " + d() + "/out.unknownext"), 2, "no container"},
        {"eval " + d() + "/otb --json " + d() + "/otb/groundtruth_rect.txt -k cpu_fast", 2, "would overwrite"},
        {"bench --kernels cpu_fast --csv " + d() + "/b.txt --json " + d() + "/b.txt", 2, "same file"},
        {"bench --e2e " + clip() + " --json " + clip(), 2, "would overwrite"},
    };
    for (const Case& c : cases) expect_case(c, d());
    EXPECT_EQ(read_bytes(clip()), original) << "the input video was modified";
    EXPECT_EQ(read_bytes(d() + "/seq/00001.png"), seq_frame);
    EXPECT_EQ(read_bytes(d() + "/otb/groundtruth_rect.txt"), gt);
    EXPECT_EQ(read_bytes(d() + "/target.box"), box_file);
    EXPECT_FALSE(fs::exists(d() + "/same.txt"));
}

// A run that fails leaves an existing output as it was (outputs are renamed into place only
// when complete), and no temporary file behind.
TEST_F(BadInput, FailedRunLeavesOldOutputsUntouched) {
    const std::string old = "previous results\n";
    test::write_bytes(d() + "/keep.csv", old);
    test::write_bytes(d() + "/keep.json", old);
    std::ofstream(d() + "/notvideo.mp4") << "not a video\n";
    const std::string outputs =
        " --csv " + d() + "/keep.csv --json " + d() + "/keep.json --otb " + d() + "/keep.json.txt";
    test::write_bytes(d() + "/keep.json.txt", old);
    // The input fails to open; the target cannot start (the outputs were open by then).
    for (const std::string& args : {"track " + d() + "/notvideo.mp4 --box 1,1,10,10" + outputs,
                                    "track " + clip() + " --box 400,10,20,20 -k cpu_fast" + outputs}) {
        const auto r = run_cli(args, d());
        EXPECT_EQ(r.exit_code, 1) << r.err;
        EXPECT_EQ(read_bytes(d() + "/keep.csv"), old) << args;
        EXPECT_EQ(read_bytes(d() + "/keep.json"), old) << args;
        EXPECT_EQ(read_bytes(d() + "/keep.json.txt"), old) << args;
    }
    for (const auto& e : fs::directory_iterator(d()))
        EXPECT_NE(e.path().filename().string().rfind(".keep", 0), 0u) << "temporary left: " << e.path();
}

// Write errors are reported with exit 1 as they happen (not only at the end), for every
// output; the others are still completed.
TEST_F(BadInput, WriteErrorsExitOneAndNameTheOutput) {
    if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
    fs::create_symlink("/dev/full", d() + "/full.mkv");
    const std::vector<Case> cases = {
        {track("--otb /dev/full"), 1, "/dev/full': No space left on device"},
        {track("--json /dev/full"), 1, "/dev/full': No space left on device"},
        {track("--csv /dev/full"), 1, "/dev/full': No space left on device"},
        {track("--video " + d() + "/full.mkv"), 1, "full.mkv"},
        {"eval " + d() + " --json /dev/full", 1, ""},
    };
    for (const Case& c : cases) expect_case(c, d());
    // Checked as written: the CSV fails at the first frame and the run stops there, while the
    // JSON is completed for the frames done.
    const auto r = run_cli(track("--csv /dev/full --json " + d() + "/partial.json"), d());
    EXPECT_EQ(r.exit_code, 1) << r.err;
    const auto doc = nlohmann::json::parse(read_bytes(d() + "/partial.json"));
    EXPECT_LE(doc["frames"].get<long>(), 1);
    EXPECT_EQ(doc["results"].size(), doc["frames"].get<std::size_t>());
}

// The CSV frame column is the frame's index in the source: a frame that does not decode, or
// that the demuxer skips, leaves a gap; the good frame after it keeps its row; the OTB file
// keeps one line per source frame; the summary counts the loss and the exit is 3 (0 with
// --allow-damaged).
TEST_F(BadInput, LostFramesAreCountedByTheirSourceIndex) {
    for (const test::Damage damage : {test::Damage::kPayload, test::Damage::kBlock}) {
        const std::string tag = damage == test::Damage::kPayload ? "payload" : "block";
        SCOPED_TRACE(tag);
        std::string error;
        SyntheticClipSpec s = spec_;
        s.codec = "mjpeg";  // intra only: one bad packet is exactly one lost frame
        s.crf = 10;
        const std::string clip = d() + "/mj_" + tag + ".mkv", out = d() + "/mj_" + tag;
        ASSERT_FALSE(write_synthetic_clip(clip, s, &error).empty()) << error;
        ASSERT_TRUE(test::zero_packet(clip, 37, damage, &error)) << error;
        const std::string args = "track " + clip + " " + box() + " -k cpu_fast --csv " + out + ".csv --otb " + out +
                                 ".txt --json " + out + ".json";
        auto r = run_cli(args, d());
        EXPECT_EQ(r.exit_code, 3) << r.err;
        EXPECT_NE(r.err.find("1 frame(s) missing or undecodable (frame 37)"), std::string::npos) << r.err;
        EXPECT_NE(r.out.find("damaged: 1 frame(s) not decoded"), std::string::npos) << r.out;
        std::ifstream csv(out + ".csv");
        std::string line;
        std::getline(csv, line);
        std::vector<long> frames;
        while (std::getline(csv, line)) frames.push_back(std::stol(line));
        ASSERT_EQ(frames.size(), 39u);
        for (std::size_t i = 0; i < frames.size(); ++i) EXPECT_EQ(frames[i], static_cast<long>(i < 37 ? i : i + 1));
        std::ifstream otb(out + ".txt");
        std::vector<std::string> lines;
        while (std::getline(otb, line)) lines.push_back(line);
        ASSERT_EQ(lines.size(), 40u);
        EXPECT_EQ(lines[37], "NaN,NaN,NaN,NaN");
        EXPECT_NE(lines[38], "NaN,NaN,NaN,NaN");
        const auto doc = nlohmann::json::parse(read_bytes(out + ".json"));
        EXPECT_EQ(doc["source"]["lost"], 1);
        EXPECT_EQ(doc["source"]["lost_frames"][0], 37);
        r = run_cli(args + " --allow-damaged", d());
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_NE(r.err.find("--allow-damaged"), std::string::npos) << r.err;
        // --frames that covers the lost frame: still damaged; one that stops before it: fine.
        r = run_cli(args + " --frames 38", d());
        EXPECT_EQ(r.exit_code, 3) << r.err;
        EXPECT_NE(r.err.find("1 frame(s) up to frame 38 missing or undecodable"), std::string::npos) << r.err;
        EXPECT_EQ(run_cli(args + " --frames 30", d()).exit_code, 0);
    }
}

// One frame short of what the container declares is a damaged file, not within a tolerance.
TEST_F(BadInput, OneMissingFrameAtTheEndIsReported) {
    std::string error;
    ASSERT_TRUE(test::cut_before_packet(clip(), d() + "/short.mp4", 39, &error)) << error;
    const auto r = run_cli("track " + d() + "/short.mp4 " + box() + " -k cpu_fast --csv " + d() + "/short.csv", d());
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("ended early: 39 of 40 frames read"), std::string::npos) << r.err;
}

// A stream whose resolution changes mid-way (larger here, as broadcast and damaged files do):
// the run continues, later frames are scaled to the first frame's size so that boxes stay in
// one coordinate system, the change is reported once, and the annotated video gets every frame.
TEST_F(BadInput, ResolutionChangeMidStreamIsFollowed) {
    std::string error;
    ASSERT_TRUE(test::write_resolution_change_ts(d() + "/grow.ts", 320, 240, 12, 480, 360, 12, &error)) << error;
    const auto r = run_cli("track " + d() + "/grow.ts --box 60,70,40,32 -k cpu_fast --csv " + d() +
                               "/grow.csv --video " + d() + "/grow.mkv",
                           d());
    EXPECT_FALSE(r.signalled) << r.err;
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::string note = "is 480x360 where the first frame was 320x240";
    ASSERT_NE(r.err.find(note), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(note, r.err.find(note) + 1), std::string::npos) << "reported once: " << r.err;
    EXPECT_NE(r.out.find("resized     12 frame(s) scaled to 320x240"), std::string::npos) << r.out;
    auto video = open_source(d() + "/grow.mkv", &error);
    ASSERT_TRUE(video) << error;
    Frame f;
    long n = 0;
    while (video->read(f) == ReadStatus::kFrame) {
        EXPECT_EQ(f.size(), (Size{320, 240}));
        ++n;
    }
    EXPECT_EQ(n, 24);
    // An image sequence whose later images are larger takes the same path.
    SyntheticClipSpec a = spec_, b = spec_;
    a.frames = 6;
    b.width = 400;
    b.height = 300;
    b.frames = 12;
    ASSERT_FALSE(write_synthetic_sequence(d() + "/mixed/%05d.png", a, &error).empty()) << error;
    ASSERT_FALSE(write_synthetic_sequence(d() + "/big/%05d.png", b, &error).empty()) << error;
    for (int i = 7; i <= 12; ++i) {
        char from[64], to[64];
        std::snprintf(from, sizeof from, "/big/%05d.png", i);
        std::snprintf(to, sizeof to, "/mixed/%05d.png", i);
        fs::copy_file(d() + from, d() + to);
    }
    const auto s =
        run_cli("track " + d() + "/mixed/%05d.png " + box() + " -k cpu_fast --video " + d() + "/mixed.mkv", d());
    EXPECT_FALSE(s.signalled) << s.err;
    EXPECT_EQ(s.exit_code, 0) << s.err;
    EXPECT_NE(s.err.find("frame 6 is 400x300 where the first frame was 320x240"), std::string::npos) << s.err;
}

// A FIFO with no writer, a FIFO whose writer stalls and a pipe on standard input whose writer
// stalls all end after the read timeout with exit 1, keeping the frames already tracked.
TEST_F(BadInput, PipesAndFifosThatStallHitTheReadTimeout) {
    const std::string fifo = d() + "/nowriter.fifo";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    auto t0 = std::chrono::steady_clock::now();
    auto r = run_cli("track " + fifo + " --box 1,1,10,10 --read-timeout 1", d());
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("read timeout"), std::string::npos) << r.err;
    EXPECT_LT(secs, 20);

    // Half a Matroska clip, then the writer keeps the FIFO or pipe open and sends nothing.
    std::string error;
    ASSERT_FALSE(write_synthetic_clip(d() + "/stream.mkv", spec_, &error).empty()) << error;
    const std::string bytes = read_bytes(d() + "/stream.mkv");
    const std::string half = bytes.substr(0, bytes.size() / 2);
    std::signal(SIGPIPE, SIG_IGN);  // the writer outlives the reader
    auto stalled_writer = [&](int fd, const std::atomic<bool>& done) {
        return std::thread([fd, &half, &done] {
            std::size_t at = 0;
            while (at < half.size()) {
                const ssize_t n = ::write(fd, half.data() + at, half.size() - at);
                if (n <= 0) break;
                at += static_cast<std::size_t>(n);
            }
            while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(20));
            ::close(fd);
        });
    };
    for (const bool use_stdin : {false, true}) {
        SCOPED_TRACE(use_stdin ? "pipe on standard input" : "FIFO");
        const std::string csv = d() + (use_stdin ? "/pipe.csv" : "/fifo.csv");
        const std::string input = use_stdin ? "-" : d() + "/stall.fifo";
        int fds[2] = {-1, -1};
        if (use_stdin) {
            ASSERT_EQ(::pipe(fds), 0);
        } else {
            ASSERT_EQ(mkfifo(input.c_str(), 0600), 0);
        }
        std::atomic<bool> done{false};
        t0 = std::chrono::steady_clock::now();
        const auto s = test::spawn_cli(
            {"track", input, "--box", "60,70,40,32", "-k", "cpu_fast", "--read-timeout", "1", "--csv", csv}, d(),
            "stall", use_stdin ? fds[0] : -1);
        if (use_stdin) {
            ::close(fds[0]);
        } else {
            fds[1] = ::open(input.c_str(), O_WRONLY);  // waits for corrtrack to open its end
            ASSERT_GE(fds[1], 0);
        }
        std::thread writer = stalled_writer(fds[1], done);
        r = test::wait_cli(s, 60);
        secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        done = true;
        writer.join();
        EXPECT_FALSE(r.signalled) << "hung: " << r.err;
        EXPECT_EQ(r.exit_code, 1) << r.err;
        EXPECT_NE(r.err.find("read timeout"), std::string::npos) << r.err;
        EXPECT_LT(secs, 20);
        std::ifstream in(csv);
        long rows = -1;
        for (std::string line; std::getline(in, line);) ++rows;
        EXPECT_GT(rows, 5) << "the frames before the stall are kept";
    }
}

}  // namespace
}  // namespace corrtrack
