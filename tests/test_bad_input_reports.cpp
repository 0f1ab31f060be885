// Nothing lost, nothing misreported (issue 28, items 3, 4, 5, 7 and 9): an empty image in a
// sequence, streams shorter than their header declares, a damaged frame near the end, full
// disks and devices as outputs. Every case checks the exit code, the rows of each output and
// the JSON's account of the source. Part of test_bad_input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/support/clip_suite.h"
#include "tests/support/damage.h"
#include "tests/support/run_cli.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

namespace fs = std::filesystem;
using test::read_bytes;
using test::run_cli;

class Reports : public test::ClipSuite<Reports> {
public:
    static constexpr const char* kTag = "reports";

protected:
    static std::string box() { return "--box " + test::box_text(truth_[0]); }
    // track INPUT with the CSV, JSON and OTB outputs named out.*.
    static test::CliResult track(const std::string& input, const std::string& out, const std::string& rest = "") {
        return run_cli("track " + input + " " + box() + " -k cpu_fast --csv " + out + ".csv --json " + out +
                           ".json --otb " + out + ".txt " + rest,
                       d());
    }
    // The frame column of a CSV.
    static std::vector<long> csv_frames(const std::string& path) {
        std::ifstream in(path);
        std::string line;
        std::getline(in, line);
        std::vector<long> frames;
        while (std::getline(in, line)) frames.push_back(std::stol(line));
        return frames;
    }
    static std::vector<std::string> lines(const std::string& path) {
        std::ifstream in(path);
        std::vector<std::string> out;
        for (std::string l; std::getline(in, l);) out.push_back(l);
        return out;
    }
    static std::vector<long> all_but(long n, std::vector<long> gone) {
        std::vector<long> v;
        for (long i = 0; i < n; ++i)
            if (std::find(gone.begin(), gone.end(), i) == gone.end()) v.push_back(i);
        return v;
    }
    static nlohmann::json json(const std::string& path) { return nlohmann::json::parse(read_bytes(path)); }
    // An image sequence of `frames` PNGs (00001.png ...) in its own folder; the pattern.
    static std::string sequence(const std::string& name, int frames) {
        SyntheticClipSpec s = spec_;
        s.frames = frames;
        std::string error;
        const std::string pattern = d() + "/" + name + "/%05d.png";
        fs::create_directories(d() + "/" + name);
        EXPECT_EQ(write_synthetic_sequence(pattern, s, &error).size(), static_cast<std::size_t>(frames)) << error;
        return pattern;
    }
    static std::string image(const std::string& name, int number) {
        char file[32];
        std::snprintf(file, sizeof file, "/%05d.png", number);
        return d() + "/" + name + file;
    }
};

// Item 3: an empty image is a lost frame; the images after it are tracked (exit 3, never a
// clean end with the rest gone).
TEST_F(Reports, EmptyImageInASequenceIsALostFrame) {
    for (const int empty : {1, 3, 4}) {  // 0-based: image 2, 4 and the last of 5
        SCOPED_TRACE("empty image " + std::to_string(empty));
        const std::string name = "empty" + std::to_string(empty);
        const std::string pattern = sequence(name, 5);
        std::ofstream(image(name, empty + 1), std::ios::trunc).flush();
        const std::string out = d() + "/" + name;
        const auto r = track(pattern, out);
        EXPECT_EQ(r.exit_code, 3) << r.err;
        char file[16];
        std::snprintf(file, sizeof file, "%05d.png", empty + 1);
        EXPECT_NE(r.err.find("1 image(s) could not be read, the first " + std::string(file) + " (the file is empty)"),
                  std::string::npos)
            << r.err;
        EXPECT_EQ(csv_frames(out + ".csv"), all_but(5, {empty}));
        const auto otb = lines(out + ".txt");
        ASSERT_EQ(otb.size(), 5u);
        EXPECT_EQ(otb[static_cast<std::size_t>(empty)], "NaN,NaN,NaN,NaN");
        const auto doc = json(out + ".json");
        EXPECT_EQ(doc["source"]["end"], "damaged");
        EXPECT_EQ(doc["frames"], 4);
        EXPECT_EQ(doc["results"].size(), 4u);
        if (empty < 4) {
            EXPECT_EQ(doc["source"]["lost_frames"], nlohmann::json::array({empty}));
        } else {  // nothing after it: the image is missing at the end
            EXPECT_EQ(doc["source"]["missing_at_end"], 1);
        }
    }
}

// Item 4: a Matroska file cut by 460 bytes (its last frame's block ends early) is damaged,
// though its duration x fps count allows for rounding.
TEST_F(Reports, MatroskaCutNearTheEndIsDamaged) {
    SyntheticClipSpec s = spec_;
    s.frames = 25;
    std::string error;
    const std::string whole = d() + "/whole25.mkv", cut = d() + "/cut25.mkv";
    ASSERT_EQ(write_synthetic_clip(whole, s, &error).size(), 25u) << error;
    std::string bytes = read_bytes(whole);
    bytes.resize(bytes.size() - 460);
    ASSERT_TRUE(test::write_bytes(cut, bytes));
    const std::string out = d() + "/cut25";
    const auto r = track(cut, out);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    const auto doc = json(out + ".json");
    EXPECT_EQ(doc["source"]["end"], "damaged");
    const long frames = doc["frames"];
    EXPECT_LT(frames, 25);
    EXPECT_EQ(static_cast<long>(csv_frames(out + ".csv").size()), frames);
    EXPECT_EQ(lines(out + ".txt").size(), 25u) << "one line per declared frame";
    EXPECT_TRUE(r.err.find("ended early") != std::string::npos || r.err.find("cut short") != std::string::npos)
        << r.err;
}

// Item 4: an image sequence whose last images are unreadable ends early against its count.
TEST_F(Reports, SequenceEndingInUnreadableImagesIsDamaged) {
    const std::string pattern = sequence("tail", 6);
    std::ofstream(image("tail", 5), std::ios::trunc).flush();
    std::ofstream(image("tail", 6), std::ios::trunc).flush();
    const std::string out = d() + "/tail";
    const auto r = track(pattern, out);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("2 image(s) could not be read, the first 00005.png (the file is empty)"), std::string::npos)
        << r.err;
    EXPECT_EQ(csv_frames(out + ".csv"), all_but(4, {}));
    EXPECT_EQ(lines(out + ".txt").size(), 6u);
    EXPECT_EQ(json(out + ".json")["source"]["missing_at_end"], 2);
}

// Item 5: a damaged frame near the end loses that frame only; the good last frame is tracked,
// and the OTB file keeps a line per source frame, also for a loss at the very end.
TEST_F(Reports, DamagedFrameNearTheEndKeepsTheFramesAfterIt) {
    SyntheticClipSpec s = spec_;
    s.frames = 25;
    s.codec = "mjpeg";
    s.crf = 10;
    for (const long bad : {23L, 24L}) {
        SCOPED_TRACE("damaged packet " + std::to_string(bad));
        std::string error;
        const std::string clip = d() + "/mj" + std::to_string(bad) + ".mkv", out = d() + "/mj" + std::to_string(bad);
        ASSERT_EQ(write_synthetic_clip(clip, s, &error).size(), 25u) << error;
        ASSERT_TRUE(test::zero_packet(clip, bad, test::Damage::kPayload, &error)) << error;
        const auto r = track(clip, out);
        EXPECT_EQ(r.exit_code, 3) << r.err;
        EXPECT_EQ(csv_frames(out + ".csv"), all_but(25, {bad}));
        const auto otb = lines(out + ".txt");
        ASSERT_EQ(otb.size(), 25u);
        EXPECT_EQ(otb[static_cast<std::size_t>(bad)], "NaN,NaN,NaN,NaN");
        const auto doc = json(out + ".json");
        EXPECT_EQ(doc["source"]["lost_frames"], nlohmann::json::array({bad}));
        EXPECT_EQ(doc["frames"], 24);
    }
}

// Item 5: a PNG sequence with image 29 of 30 damaged: 29 rows, the last image tracked (the
// frame-threaded decoder's error came back from the flush, which ended the input).
TEST_F(Reports, DamagedImageNearTheEndKeepsTheLastImage) {
    const std::string pattern = sequence("png30", 30);
    std::string png = read_bytes(image("png30", 29));
    for (std::size_t i = png.size() / 3; i < png.size() * 2 / 3; ++i) png[i] = '\0';
    ASSERT_TRUE(test::write_bytes(image("png30", 29), png));
    const std::string out = d() + "/png30";
    const auto r = track(pattern, out);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_EQ(csv_frames(out + ".csv"), all_but(30, {28}));
    const auto otb = lines(out + ".txt");
    ASSERT_EQ(otb.size(), 30u);
    EXPECT_EQ(otb[28], "NaN,NaN,NaN,NaN");
    EXPECT_EQ(json(out + ".json")["source"]["lost_frames"], nlohmann::json::array({28}));
}

// Item 7: an output that failed is not reported as written, by the summary or the run JSON;
// when the video fails, every count is the rows the other outputs hold, and the error is said
// once.
TEST_F(Reports, FailedOutputsAreNotReportedAsWritten) {
    if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full here";
    auto r = run_cli("track " + clip() + " " + box() + " -k cpu_fast --csv /dev/full --json " + d() + "/ok.json", d());
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(r.out.find("wrote csv"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("wrote json  " + d() + "/ok.json"), std::string::npos) << r.out;

    // Several streams: b's CSV lands on a full disk (its per-stream path is a link to /dev/full).
    fs::copy_file(clip(), d() + "/b.mp4", fs::copy_options::overwrite_existing);
    fs::remove(d() + "/multi.b.csv");
    fs::create_symlink("/dev/full", d() + "/multi.b.csv");
    r = run_cli("track --input " + clip() + " " + box() + " --input " + d() + "/b.mp4 " + box() +
                    " -k cpu_fast --csv " + d() + "/multi.csv --json " + d() + "/run.json",
                d());
    EXPECT_EQ(r.exit_code, 1) << r.err;
    const auto run = json(d() + "/run.json");
    ASSERT_EQ(run["streams"].size(), 2u);
    EXPECT_EQ(run["streams"][0]["outputs"]["csv"], d() + "/multi.clip.csv");
    EXPECT_FALSE(run["streams"][1]["outputs"].contains("csv")) << run.dump();
    EXPECT_EQ(r.out.find("wrote csv   " + d() + "/multi.b.csv"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("wrote csv   " + d() + "/multi.clip.csv"), std::string::npos) << r.out;

    // The video on a full disk: the summary, the JSON and the rows agree. A noisy 640x480
    // clip fills the muxer's buffer within a few frames, so the write fails mid-run.
    SyntheticClipSpec big = spec_;
    big.width = 640;
    big.height = 480;
    big.frames = 60;
    big.noise_sigma = 30;
    std::string error;
    ASSERT_EQ(write_synthetic_clip(d() + "/noisy.mkv", big, &error).size(), 60u) << error;
    fs::remove(d() + "/fullvid.mkv");
    fs::create_symlink("/dev/full", d() + "/fullvid.mkv");
    const std::string out = d() + "/vid";
    r = track(d() + "/noisy.mkv", out, "--video " + d() + "/fullvid.mkv");
    EXPECT_EQ(r.exit_code, 1) << r.err;
    const auto doc = json(out + ".json");
    const long frames = doc["frames"];
    // Where the run stops depends on when the encoder thread's write fails (on a fast machine
    // only at the close, after every frame): what must hold is that the counts agree.
    EXPECT_GT(frames, 0);
    EXPECT_LE(frames, 60);
    EXPECT_EQ(doc["results"].size(), static_cast<std::size_t>(frames));
    EXPECT_EQ(static_cast<long>(csv_frames(out + ".csv").size()), frames);
    EXPECT_EQ(static_cast<long>(lines(out + ".txt").size()), frames);
    EXPECT_NE(r.out.find("frames      " + std::to_string(frames) + " "), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("wrote video"), std::string::npos) << r.out;
    const std::string said = "fullvid.mkv";
    std::size_t count = 0;
    for (std::size_t at = r.err.find(said); at != std::string::npos; at = r.err.find(said, at + 1)) ++count;
    EXPECT_EQ(count, 1u) << "the video's error once: " << r.err;
}

// Item 9: /dev/stdout is a device whatever stdout is (run_cli sends it to a file): with several
// inputs it is the usage error, and no /dev/stdout.<stream> file is made; with one input the
// CSV goes to stdout.
TEST_F(Reports, DevStdoutIsADeviceWhenStdoutIsAFile) {
    fs::copy_file(clip(), d() + "/c2.mp4", fs::copy_options::overwrite_existing);
    auto r = run_cli("track --input " + clip() + " " + box() + " --input " + d() + "/c2.mp4 " + box() +
                         " -k cpu_fast --csv /dev/stdout",
                     d());
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--csv '/dev/stdout' is a device or FIFO"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists("/dev/stdout.clip"));
    EXPECT_FALSE(fs::exists("/dev/stdout.c2"));
    r = run_cli("track " + clip() + " " + box() + " -k cpu_fast -q --csv /dev/stdout", d());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::istringstream rows(r.out);
    std::string line;
    long n = 0;
    while (std::getline(rows, line)) n += line.rfind("frame,", 0) == 0 ? 0 : 1;
    EXPECT_EQ(r.out.rfind("frame,pts,target", 0), 0u) << r.out.substr(0, 200);
    EXPECT_EQ(n, 40);
}

}  // namespace
}  // namespace corrtrack
