// Several inputs in one `corrtrack track` process (CPU path): the same boxes as separate runs,
// per-stream outputs named after the inputs, a bad input ending alone, the exit code of the
// worst stream, the --inputs list, stream names and per-stream output paths, SIGINT.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/cli/track_streams.h"
#include "tests/support/clip_suite.h"
#include "tests/support/damage.h"
#include "tests/support/fake_clock.h"
#include "tests/support/run_cli.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

using test::box_text;
using test::run_cli;
namespace fs = std::filesystem;

class Streams : public test::SuiteDir<Streams> {
public:
    static constexpr const char* kTag = "streams";

protected:
    static void SetUpTestSuite() {
        SuiteDir::SetUpTestSuite();
        std::string error;
        spec_a_.frames = 40;
        truth_a_ = write_synthetic_clip(dir_->file("cama.mp4"), spec_a_, &error);
        ASSERT_EQ(truth_a_.size(), 40u) << error;
        // Another scene, moving the other way.
        spec_b_.frames = 30;
        spec_b_.seed = 7;
        spec_b_.start_x = 220;
        spec_b_.start_y = 150;
        spec_b_.velocity_x = -1.3;
        spec_b_.velocity_y = -0.8;
        truth_b_ = write_synthetic_clip(dir_->file("camb.mp4"), spec_b_, &error);
        ASSERT_EQ(truth_b_.size(), 30u) << error;
    }
    static std::string a() { return d() + "/cama.mp4 --box " + box_text(truth_a_[0]); }
    static std::string b() { return d() + "/camb.mp4 --box " + box_text(truth_b_[0]); }
    // The CSV's rows without the timing columns (frame .. redetected).
    static std::vector<std::string> boxes_of(const std::string& csv) {
        std::ifstream in(csv);
        std::vector<std::string> rows;
        std::string line;
        std::getline(in, line);  // header
        while (std::getline(in, line)) {
            std::size_t pos = 0;
            for (int comma = 0; comma < 13 && pos != std::string::npos; ++comma) pos = line.find(',', pos + 1);
            rows.push_back(line.substr(0, pos));
        }
        return rows;
    }
    static inline SyntheticClipSpec spec_a_, spec_b_;
    static inline std::vector<TruthBox> truth_a_, truth_b_;
};

TEST_F(Streams, TwoClipsInOneProcessGiveTheBoxesOfTwoSeparateRuns) {
    auto r = run_cli("track " + a() + " -k cpu_fast --csv " + d() + "/sep_a.csv", d());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = run_cli("track " + b() + " -k cpu_fast --csv " + d() + "/sep_b.csv", d());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto sep_a = boxes_of(d() + "/sep_a.csv"), sep_b = boxes_of(d() + "/sep_b.csv");
    ASSERT_EQ(sep_a.size(), 40u);
    ASSERT_EQ(sep_b.size(), 30u);
    for (const char* jobs : {"", " --jobs 1"}) {
        SCOPED_TRACE(jobs);
        const std::string o = d() + "/both";
        r = run_cli("track --input " + a() + " --input " + b() + " -k cpu_fast" + jobs + " --csv " + o +
                        ".csv --json " + o + ".json --otb " + o + ".txt",
                    d());
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_FALSE(std::filesystem::exists(o + ".csv"));  // only per-stream files
        EXPECT_EQ(boxes_of(o + ".cama.csv"), sep_a);
        EXPECT_EQ(boxes_of(o + ".camb.csv"), sep_b);
        // The tracked centres are right, not only equal.
        double err = 0;
        std::ifstream csv(o + ".camb.csv");
        std::string line;
        std::getline(csv, line);
        long rows = 0;
        while (std::getline(csv, line)) {
            long frame;
            double pts, x, y, w, h, cx, cy;
            int target;
            ASSERT_EQ(std::sscanf(line.c_str(), "%ld,%lf,%d,%lf,%lf,%lf,%lf,%lf,%lf", &frame, &pts, &target, &x, &y, &w,
                                  &h, &cx, &cy),
                      9);
            err += std::hypot(cx - truth_b_[frame].cx(), cy - truth_b_[frame].cy());
            ++rows;
        }
        EXPECT_LT(err / rows, 0.5);
        // Per-stream JSON and OTB text with one row / line per frame.
        EXPECT_EQ(nlohmann::json::parse(test::read_text(o + ".cama.json"))["results"].size(), 40u);
        const auto jb = nlohmann::json::parse(test::read_text(o + ".camb.json"));
        EXPECT_EQ(jb["results"].size(), 30u);
        EXPECT_EQ(jb["stream"], "camb");
        long lines = 0;
        std::ifstream otb(o + ".cama.txt");
        while (std::getline(otb, line)) ++lines;
        EXPECT_EQ(lines, 40);
        // The summary: per stream and in all, text and JSON.
        const auto doc = nlohmann::json::parse(test::read_text(o + ".json"));
        ASSERT_EQ(doc["streams"].size(), 2u);
        EXPECT_EQ(doc["streams"][0]["name"], "cama");
        EXPECT_EQ(doc["streams"][0]["frames"], 40);
        EXPECT_EQ(doc["streams"][1]["frames"], 30);
        EXPECT_EQ(doc["streams"][1]["status"], "clean");
        EXPECT_EQ(doc["streams"][1]["outputs"]["csv"], o + ".camb.csv");
        EXPECT_GT(doc["streams"][0]["latency_ms"]["median"].get<double>(), 0);
        EXPECT_EQ(doc["aggregate"]["frames"], 70);
        EXPECT_EQ(doc["aggregate"]["failed"], 0);
        EXPECT_GT(doc["aggregate"]["fps"].get<double>(), 0);
        EXPECT_EQ(doc["aggregate"]["live_dropped"], 0);
        EXPECT_EQ(doc["exit_code"], 0);
        EXPECT_NE(r.out.find("streams     2"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("cama.mp4: clean, 40 frames"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("all         70 frames"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("wrote csv   " + o + ".camb.csv"), std::string::npos) << r.out;
        // Which decoder each stream got: the CPU tracker decodes on the CPU whatever --decode says.
        EXPECT_EQ(doc["streams"][0]["decode"], "sw");
        EXPECT_TRUE(doc["streams"][0]["decode_why"].is_null());
        EXPECT_EQ(doc["aggregate"]["decoders"]["sw"], 2);
        EXPECT_EQ(doc["aggregate"]["decoders"]["nvdec"], 0);
        EXPECT_EQ(doc["nvdec_streams"], 8);
        EXPECT_NE(r.out.find("decode      auto: 0 streams on NVDEC, 2 on the CPU\n"), std::string::npos) << r.out;
    }
}

TEST_F(Streams, AMissingOrCorruptInputEndsAloneAndTheOthersComplete) {
    test::write_bytes(d() + "/corrupt.mp4", std::string(5000, '\x5a'));
    const std::string o = d() + "/bad";
    const auto r = run_cli("track --input " + a() + " --input " + d() + "/missing.mp4 --box 10,10,20,20 --input " +
                               d() + "/corrupt.mp4 --box 10,10,20,20 --input " + b() + " -k cpu_fast --csv " + o +
                               ".csv --json " + o + ".json",
                           d());
    EXPECT_EQ(r.exit_code, 1) << r.err;  // a stream failed
    EXPECT_FALSE(r.signalled);
    EXPECT_NE(r.err.find("corrtrack track [missing]: cannot open"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("corrtrack track [corrupt]: "), std::string::npos) << r.err;
    EXPECT_EQ(boxes_of(o + ".cama.csv").size(), 40u);
    EXPECT_EQ(boxes_of(o + ".camb.csv").size(), 30u);
    EXPECT_FALSE(std::filesystem::exists(o + ".missing.csv"));
    EXPECT_FALSE(std::filesystem::exists(o + ".corrupt.csv"));
    const auto doc = nlohmann::json::parse(test::read_text(o + ".json"));
    EXPECT_EQ(doc["aggregate"]["failed"], 2);
    EXPECT_EQ(doc["streams"][1]["status"], "failed");
    EXPECT_NE(doc["streams"][1]["error"].get<std::string>().find("missing.mp4"), std::string::npos);
    EXPECT_EQ(doc["streams"][3]["status"], "clean");
    EXPECT_NE(r.out.find("missing.mp4: failed"), std::string::npos) << r.out;
}

TEST_F(Streams, ADamagedStreamGivesExit3AndFailureOutranksIt) {
    std::string error;
    ASSERT_TRUE(test::cut_before_packet(d() + "/cama.mp4", d() + "/short.mp4", 39, &error)) << error;
    const std::string shrt = d() + "/short.mp4 --box " + box_text(truth_a_[0]);
    auto r = run_cli("track --input " + shrt + " --input " + b() + " -k cpu_fast -q --csv " + d() + "/dmg.csv", d());
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("corrtrack track [short]: "), std::string::npos) << r.err;
    EXPECT_EQ(boxes_of(d() + "/dmg.short.csv").size(), 39u);
    EXPECT_EQ(boxes_of(d() + "/dmg.camb.csv").size(), 30u);
    r = run_cli("track --input " + shrt + " --input " + b() + " -k cpu_fast -q --allow-damaged", d());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    r = run_cli("track --input " + shrt + " --input " + d() + "/missing.mp4 --box 1,1,9,9 -k cpu_fast -q", d());
    EXPECT_EQ(r.exit_code, 1) << r.err;
}

TEST_F(Streams, InputsListGivesTheSameStreams) {
    {
        std::ofstream list(d() + "/cams.txt");
        list << "# cameras of the yard\n\n"
             << d() << "/cama.mp4 " << box_text(truth_a_[0]) << "   # the gate\r\n"
             << "\"" << d() << "/camb.mp4\"\t" << box_text(truth_b_[0]) << "\n";
    }
    const auto r = run_cli("track --inputs " + d() + "/cams.txt -k cpu_fast -q --csv " + d() + "/list.csv", d());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(boxes_of(d() + "/list.cama.csv").size(), 40u);
    EXPECT_EQ(boxes_of(d() + "/list.camb.csv").size(), 30u);
    // A list of one is a single-input run: outputs as given.
    {
        std::ofstream one(d() + "/one.txt");
        one << d() << "/camb.mp4 " << box_text(truth_b_[0]) << "\n";
    }
    EXPECT_EQ(run_cli("track --inputs " + d() + "/one.txt -k cpu_fast -q --csv " + d() + "/one.csv", d()).exit_code, 0);
    EXPECT_EQ(boxes_of(d() + "/one.csv").size(), 30u);
}

TEST_F(Streams, BadListLinesAndMixedSyntaxAreUsageErrorsWithTheLine) {
    {
        std::ofstream list(d() + "/badlist.txt");
        list << "# ok\n" << d() << "/cama.mp4 1,2,30,30\n" << d() << "/camb.mp4 1,2,3\n";
    }
    auto r = run_cli("track --inputs " + d() + "/badlist.txt", d());
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("badlist.txt line 3: box '1,2,3' is not x,y,w,h"), std::string::npos) << r.err;
    {
        std::ofstream list(d() + "/nobox.txt");
        list << d() << "/cama.mp4\n";
    }
    r = run_cli("track --inputs " + d() + "/nobox.txt", d());
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("nobox.txt line 1: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("has no box"), std::string::npos) << r.err;
    r = run_cli("track --inputs " + d() + "/does_not_exist.txt", d());
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("cannot read input list"), std::string::npos) << r.err;
    // INPUT with --input, a --box before the first --input, no input at all.
    EXPECT_EQ(run_cli("track " + a() + " --input " + b(), d()).exit_code, 2);
    r = run_cli("track --box 1,1,9,9 --input " + b(), d());
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("follows the --input"), std::string::npos) << r.err;
    r = run_cli("track --box 1,1,9,9", d());
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("no input"), std::string::npos) << r.err;
    EXPECT_EQ(run_cli("track --input " + a() + " --input " + b() + " --jobs -1", d()).exit_code, 2);
}

TEST_F(Streams, NoPerStreamOutputMayOverwriteAnInputOrAnotherOutput) {
    // Stream "cama" writes --video v.mp4 as v.cama.mp4: here that is the other input.
    std::filesystem::copy_file(d() + "/camb.mp4", d() + "/v.cama.mp4",
                               std::filesystem::copy_options::overwrite_existing);
    const std::string before = test::read_text(d() + "/v.cama.mp4");
    auto r = run_cli(
        "track --input " + a() + " --input " + d() + "/v.cama.mp4 --box 10,10,20,20 --video " + d() + "/v.mp4", d());
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("would overwrite the input"), std::string::npos) << r.err;
    EXPECT_EQ(test::read_text(d() + "/v.cama.mp4"), before);
    // Two flags whose per-stream files meet: --csv s.json and --json s.json both give
    // s.cama.json.
    r = run_cli("track --input " + a() + " --input " + b() + " --csv " + d() + "/s.json --json " + d() + "/s.json",
                d());
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("would write the same file"), std::string::npos) << r.err;
    // A device cannot be split per stream (/dev/null can be shared).
    r = run_cli("track --input " + a() + " --input " + b() + " --csv /dev/zero", d());
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("is a device or FIFO"), std::string::npos) << r.err;
    EXPECT_EQ(run_cli("track --input " + a() + " --input " + b() + " -k cpu_fast -q --csv /dev/null --frames 3", d())
                  .exit_code,
              0);
}

TEST(StreamNames, FromTheInputsFileNameMadeUnique) {
    EXPECT_EQ(stream_name_of("/data/cam1.mp4"), "cam1");
    EXPECT_EQ(stream_name_of("/dev/video0"), "video0");
    EXPECT_EQ(stream_name_of("seq/img/%05d.jpg"), "seq");
    EXPECT_EQ(stream_name_of("otb/Basketball/"), "Basketball");
    EXPECT_EQ(stream_name_of("rtsp://cam.local/live/cam3?user=x"), "cam3");
    EXPECT_EQ(stream_name_of("rtsp://10.0.0.7:554"), "10.0.0.7_554");
    EXPECT_EQ(stream_name_of("-"), "stdin");
    EXPECT_EQ(stream_name_of("pipe:0"), "stdin");
    EXPECT_EQ(stream_name_of("a dir/my clip (1).mkv"), "my_clip__1_");
    EXPECT_EQ(stream_name_of(".hidden.mp4"), "hidden");
    const std::vector<std::string> names =
        unique_stream_names({"a/cam.mp4", "b/cam.mp4", "c/cam-2.mp4", "d/cam.mkv", "/dev/video0"});
    EXPECT_EQ(names, (std::vector<std::string>{"cam", "cam-3", "cam-2", "cam-4", "video0"}));
}

TEST(StreamNames, PerStreamOutputPaths) {
    std::string p, e;
    ASSERT_TRUE(stream_output_path("out.csv", "cam1", "--csv", &p, &e));
    EXPECT_EQ(p, "out.cam1.csv");
    ASSERT_TRUE(stream_output_path("res.d/out", "cam1", "--otb", &p, &e));
    EXPECT_EQ(p, "res.d/out.cam1");
    ASSERT_TRUE(stream_output_path("frames/%05d.png", "cam1", "--video", &p, &e));
    EXPECT_EQ(p, "frames/%05d.cam1.png");
    ASSERT_TRUE(stream_output_path("/dev/null", "cam1", "--csv", &p, &e));
    EXPECT_EQ(p, "/dev/null");
    ASSERT_TRUE(stream_output_path("", "cam1", "--csv", &p, &e));
    EXPECT_EQ(p, "");
    EXPECT_FALSE(stream_output_path("/dev/zero", "cam1", "--json", &p, &e));
}

// --decode auto: NVDEC for the first `limit` streams that could use it, the CPU for the rest;
// places come back as streams end (--jobs), and explicit modes are left as asked.
TEST(NvdecShare, AutoFillsNvdecUpToTheLimitThenTheCpu) {
    NvdecShare share(2);
    std::vector<DecoderChoice> got;
    for (int i = 0; i < 4; ++i) got.push_back(share.take(DecodeMode::kAuto, true));
    EXPECT_EQ(got[0].mode, DecodeMode::kAuto);
    EXPECT_TRUE(got[0].holds_nvdec);
    EXPECT_EQ(got[1].mode, DecodeMode::kAuto);
    EXPECT_TRUE(got[1].holds_nvdec);
    for (int i : {2, 3}) {
        EXPECT_EQ(got[i].mode, DecodeMode::kSoftware);
        EXPECT_FALSE(got[i].holds_nvdec);
        EXPECT_TRUE(got[i].nvdec_full);
    }
    EXPECT_EQ(share.held(), 2);
    // An input NVDEC never serves takes no place, and a CPU stream ending frees none.
    const DecoderChoice camera = share.take(DecodeMode::kAuto, false);
    EXPECT_EQ(camera.mode, DecodeMode::kAuto);
    EXPECT_FALSE(camera.holds_nvdec);
    EXPECT_FALSE(camera.nvdec_full);
    share.give_back(got[3]);
    EXPECT_EQ(share.held(), 2);
    share.give_back(got[0]);
    EXPECT_EQ(share.held(), 1);
    const DecoderChoice next = share.take(DecodeMode::kAuto, true);
    EXPECT_TRUE(next.holds_nvdec);
    EXPECT_EQ(share.held(), 2);
    // sw and nvdec as asked, whatever NVDEC holds.
    EXPECT_EQ(share.take(DecodeMode::kNvdec, true).mode, DecodeMode::kNvdec);
    EXPECT_EQ(share.take(DecodeMode::kSoftware, true).mode, DecodeMode::kSoftware);
    EXPECT_EQ(share.held(), 2);
}

// All at once, the first --nvdec-streams inputs take the NVDEC places whichever thread starts
// first (the CPU tracker then decodes on the CPU anyway, and says nothing about it).
TEST_F(Streams, StreamsTakeNvdecPlacesInInputOrder) {
    TrackArgs args;
    args.quiet = true;
    args.tracker.kernel = "cpu_fast";
    args.max_frames = 3;
    args.nvdec_streams = 2;
    std::vector<StreamPlan> plans(4);
    const std::vector<std::string> inputs = {d() + "/cama.mp4", d() + "/camb.mp4", d() + "/cama.mp4",
                                             d() + "/camb.mp4"};
    const std::vector<std::string> names = unique_stream_names(inputs);
    for (std::size_t i = 0; i < plans.size(); ++i) {
        plans[i].name = names[i];
        plans[i].input = inputs[i];
        plans[i].boxes = {to_box(i % 2 ? truth_b_[0] : truth_a_[0])};
    }
    const StreamSetRun run = run_stream_set(args, plans, "cpu_fast");
    ASSERT_EQ(run.decoders.size(), 4u);
    EXPECT_EQ(run.jobs, 4u);
    for (std::size_t i = 0; i < 4; ++i) {
        SCOPED_TRACE(i);
        EXPECT_EQ(run.decoders[i].holds_nvdec, i < 2);
        EXPECT_EQ(run.decoders[i].nvdec_full, i >= 2);
        EXPECT_EQ(run.results[i]->frames, 3);
        EXPECT_EQ(run.results[i]->decode_mode, "sw");
        EXPECT_EQ(run.results[i]->decode_why, "");
    }
}

// Paced streams share NVDEC by pixel rate: as many as fit, then the CPU; the count rule of the
// full-speed streams goes on beside it.
TEST(NvdecShare, PacedStreamsFillNvdecUpToTheirPixelRate) {
    NvdecShare share(1, 200.0);
    const double p1080 = 1920.0 * 1080 * 30 / 1e6;  // 62.208
    std::vector<DecoderChoice> got;
    for (int i = 0; i < 4; ++i) got.push_back(share.take(DecodeMode::kAuto, true, p1080));
    for (int i = 0; i < 3; ++i) {
        SCOPED_TRACE(i);
        EXPECT_TRUE(got[i].holds_nvdec);
        EXPECT_TRUE(got[i].by_rate);
        EXPECT_EQ(got[i].mode, DecodeMode::kAuto);
        EXPECT_DOUBLE_EQ(got[i].mpix_per_s, p1080);
    }
    EXPECT_FALSE(got[3].holds_nvdec);
    EXPECT_TRUE(got[3].nvdec_full);
    EXPECT_EQ(got[3].mode, DecodeMode::kSoftware);
    EXPECT_EQ(got[3].full_why, "NVDEC full: 187 of 200 Mpixel/s taken by paced streams (--nvdec-rate)");
    EXPECT_NEAR(share.held_rate(), 3 * p1080, 1e-9);
    EXPECT_EQ(share.held(), 0);
    // A smaller stream still fits in what is left (200 - 186.6).
    const DecoderChoice small = share.take(DecodeMode::kAuto, true, 640.0 * 480 * 30 / 1e6);
    EXPECT_TRUE(small.holds_nvdec);
    // The full-speed count is its own: one place, then full.
    const DecoderChoice fast = share.take(DecodeMode::kAuto, true);
    EXPECT_TRUE(fast.holds_nvdec);
    EXPECT_FALSE(fast.by_rate);
    const DecoderChoice fast2 = share.take(DecodeMode::kAuto, true);
    EXPECT_TRUE(fast2.nvdec_full);
    EXPECT_EQ(fast2.full_why, "NVDEC full: 1 streams on it (--nvdec-streams)");
    EXPECT_EQ(share.held(), 1);
    share.give_back(got[0]);
    share.give_back(small);
    EXPECT_NEAR(share.held_rate(), 2 * p1080, 1e-9);
    const DecoderChoice again = share.take(DecodeMode::kAuto, true, p1080);
    EXPECT_TRUE(again.holds_nvdec);
    EXPECT_EQ(share.held(), 1);
    // Given all back, the rate is exactly 0 again, whatever the rounding.
    share.give_back(got[1]);
    share.give_back(got[2]);
    share.give_back(again);
    EXPECT_EQ(share.held_rate(), 0.0);
}

// One paced stream always gets NVDEC, even above the limit: alone, NVDEC is never worse.
TEST(NvdecShare, OnePacedStreamAboveTheRateStillGetsNvdec) {
    NvdecShare share(8, 100.0);
    const double p4k60 = 3840.0 * 2160 * 60 / 1e6;  // 497.7
    const DecoderChoice first = share.take(DecodeMode::kAuto, true, p4k60);
    EXPECT_TRUE(first.holds_nvdec);
    EXPECT_TRUE(share.take(DecodeMode::kAuto, true, 1.0).nvdec_full);
    share.give_back(first);
    EXPECT_EQ(share.held_rate(), 0.0);
    EXPECT_TRUE(share.take(DecodeMode::kAuto, true, 1.0).holds_nvdec);
}

// A file's pixel rate comes from its container; URLs and files that do not open count as 1080p30.
TEST_F(Streams, PacedPixelRateIsWidthTimesHeightTimesFps) {
    const auto rate = [](const std::string& input, bool realtime = true) {
        return nvdec_need(input, DecodeMode::kAuto, realtime).paced_mpix_per_s;
    };
    EXPECT_DOUBLE_EQ(rate(d() + "/cama.mp4"), 320.0 * 240 * 25 / 1e6);
    EXPECT_DOUBLE_EQ(rate(d() + "/no-such-file.mp4"), kUnknownPacedMpixPerS);
    EXPECT_DOUBLE_EQ(rate("rtsp://cam.local/live"), kUnknownPacedMpixPerS);
    EXPECT_DOUBLE_EQ(rate("rtsp://cam.local/live", false), kUnknownPacedMpixPerS);  // paced by its sender
    EXPECT_DOUBLE_EQ(kUnknownPacedMpixPerS, 62.208);
    EXPECT_EQ(rate(d() + "/cama.mp4", false), 0.0);  // a file without --realtime runs at full speed
    // Only auto shares by rate: a stream that asked for a decoder is not opened to measure it.
    const NvdecNeed asked = nvdec_need(d() + "/cama.mp4", DecodeMode::kNvdec, true);
    EXPECT_TRUE(asked.candidate);
    EXPECT_TRUE(asked.paced);
    EXPECT_EQ(asked.paced_mpix_per_s, 0.0);
}

// With --realtime, streams take NVDEC by pixel rate in input order: 2 of the 1.92 Mpixel/s
// clips fit in 4, so the first two hold it and the last two were sent to the CPU by rate.
TEST_F(Streams, RealtimeStreamsTakeNvdecByPixelRateInInputOrder) {
    TrackArgs args;
    args.quiet = true;
    args.tracker.kernel = "cpu_fast";
    args.max_frames = 3;
    args.realtime = true;
    // A clock on which no frame is ever late: a loaded machine must not drop frames (it
    // did, with ctest -j2 on two busy cores), so that each stream tracks its 3.
    test::FakeClock on_time(/*paced=*/false);
    args.pacing_clock = &on_time;
    args.nvdec_rate = 4.0;
    std::vector<StreamPlan> plans(4);
    const std::vector<std::string> inputs(4, d() + "/cama.mp4");
    const std::vector<std::string> names = unique_stream_names(inputs);
    for (std::size_t i = 0; i < plans.size(); ++i) {
        plans[i].name = names[i];
        plans[i].input = inputs[i];
        plans[i].boxes = {to_box(truth_a_[0])};
    }
    const StreamSetRun run = run_stream_set(args, plans, "cpu_fast");
    ASSERT_EQ(run.decoders.size(), 4u);
    for (std::size_t i = 0; i < 4; ++i) {
        SCOPED_TRACE(i);
        EXPECT_TRUE(run.decoders[i].by_rate);
        EXPECT_EQ(run.decoders[i].holds_nvdec, i < 2);
        EXPECT_EQ(run.decoders[i].nvdec_full, i >= 2);
        EXPECT_EQ(run.results[i]->frames, 3);
        EXPECT_EQ(run.results[i]->exit_code, 0);
    }
    EXPECT_EQ(run.decoders[2].full_why, "NVDEC full: 4 of 4 Mpixel/s taken by paced streams (--nvdec-rate)");
}

TEST(NvdecShare, OnlyFilesAndUrlsAreCandidates) {
    TempDir dir("nvdec-share");
    const auto candidate = [](const std::string& input) {
        return nvdec_need(input, DecodeMode::kAuto, false).candidate;
    };
    EXPECT_TRUE(candidate(dir.file("clip.mp4")));  // a file, even before it exists
    EXPECT_TRUE(candidate("rtsp://cam.local/live"));
    EXPECT_FALSE(candidate("/dev/video0"));
    EXPECT_FALSE(candidate(dir.file("img/%05d.jpg")));
    EXPECT_FALSE(nvdec_need("/dev/video0", DecodeMode::kAuto, true).paced);  // a camera is never NVDEC's
}

TEST(InputsList, CommentsQuotesAndLineNumbers) {
    std::vector<InputEntry> entries;
    std::string e;
    ASSERT_TRUE(
        parse_inputs_list("# head\n\n  a.mp4 1,2,3,4 5,6,7,8 # two\n\"my clip.mp4\"\t1,1,9,9\r\nurl://x#frag 1,2,3,4\n",
                          "l.txt", &entries, &e))
        << e;
    ASSERT_EQ(entries.size(), 3u);
    EXPECT_EQ(entries[0].input, "a.mp4");
    EXPECT_EQ(entries[0].boxes.size(), 2u);
    EXPECT_EQ(entries[0].line, 3);
    EXPECT_FLOAT_EQ(entries[0].boxes[1].x, 5);
    EXPECT_EQ(entries[1].input, "my clip.mp4");
    EXPECT_EQ(entries[2].input, "url://x#frag");  // '#' starts a comment only at a field's start
    entries.clear();
    EXPECT_FALSE(parse_inputs_list("a.mp4 1,2,3,4\nb.mp4 nope\n", "l.txt", &entries, &e));
    EXPECT_EQ(e.rfind("l.txt line 2: ", 0), 0u) << e;
    EXPECT_FALSE(parse_inputs_list("\"a.mp4 1,2,3,4\n", "l.txt", &entries, &e));
    EXPECT_EQ(e, "l.txt line 1: unclosed '\"'");
    EXPECT_FALSE(parse_inputs_list("# nothing\n\n", "l.txt", &entries, &e));
    EXPECT_NE(e.find("names no input"), std::string::npos) << e;
}

// The first SIGINT finishes every stream's outputs: rows whole, JSON documents closed, the
// summary written, exit 130. The inputs are FIFOs fed 85% of their clip and then held open:
// both streams are certainly in progress, waiting for more, when the signal comes. (60% was
// too little on the 16-core GPU host: a frame-threaded H.264 decoder holds about as many
// frames as it has threads, so the 30-frame clip gave no row there.)
TEST_F(Streams, SigintFinishesEveryStreamsOutputs) {
    TempDir dir("streams_sigint");
    const std::string f = dir.path(), o = f + "/sig";
    std::vector<std::string> bytes;
    for (const auto& [name, spec] : {std::pair{"cama", spec_a_}, std::pair{"camb", spec_b_}}) {
        std::string error;
        ASSERT_FALSE(write_synthetic_clip(f + "/" + name + ".src.mkv", spec, &error).empty()) << error;
        bytes.push_back(test::read_bytes(f + "/" + name + ".src.mkv"));
        ASSERT_EQ(mkfifo((f + "/" + name + ".mkv").c_str(), 0600), 0);
    }
    std::signal(SIGPIPE, SIG_IGN);
    const auto s = test::spawn_cli(
        {"track", "--input", f + "/cama.mkv", "--box", box_text(truth_a_[0]), "--input", f + "/camb.mkv", "--box",
         box_text(truth_b_[0]), "-k", "cpu_fast", "--read-timeout", "120", "--csv", o + ".csv", "--json", o + ".json"},
        f, "sig");
    std::atomic<bool> release{false};
    std::vector<std::thread> writers;
    for (int i = 0; i < 2; ++i)
        writers.emplace_back([&, i] {
            const int fd = ::open((f + (i == 0 ? "/cama.mkv" : "/camb.mkv")).c_str(), O_WRONLY);
            if (fd < 0) return;
            const std::string& b = bytes[static_cast<std::size_t>(i)];
            for (std::size_t at = 0, want = b.size() * 17 / 20; at < want;) {
                const ssize_t n = ::write(fd, b.data() + at, want - at);
                if (n <= 0) break;
                at += static_cast<std::size_t>(n);
            }
            while (!release) std::this_thread::sleep_for(std::chrono::milliseconds(20));
            ::close(fd);
        });
    // Both streams have written rows (their CSVs' temporaries, .sig.NAME.csv.XXXXXX, grow).
    const auto rows_so_far = [&](const std::string& name) {
        long rows = -1;
        for (const auto& e : fs::directory_iterator(f)) {
            if (e.path().filename().string().rfind(".sig." + name + ".csv.", 0) != 0) continue;
            std::ifstream in(e.path());
            long n = 0;
            for (std::string line; std::getline(in, line);) ++n;
            rows = std::max(rows, n - 1);
        }
        return rows;
    };
    // A guard against a hang only: rows appear within a second where the demuxer takes frames
    // from a partly written FIFO.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    const auto live = [&] { return rows_so_far("cama") >= 3 && rows_so_far("camb") >= 3; };
    while (std::chrono::steady_clock::now() < until && !live())
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const bool both_live = live();
    kill(s.pid, SIGINT);
    const auto r = test::wait_cli(s, 60);
    release = true;
    for (std::thread& w : writers) w.join();
    ASSERT_TRUE(both_live) << "no rows from 85% of each clip through a FIFO within 30 s: " << r.err;
    EXPECT_EQ(r.exit_code, 130) << r.err;
    for (const auto& [name, frames] : {std::pair{"cama", 40u}, std::pair{"camb", 30u}}) {
        SCOPED_TRACE(name);
        const auto rows = boxes_of(o + "." + name + ".csv");
        EXPECT_GE(rows.size(), 3u);
        EXPECT_LT(rows.size(), frames);  // 85% of the bytes cannot hold every frame
        const auto doc = nlohmann::json::parse(test::read_text(o + "." + name + ".json"));
        EXPECT_EQ(doc["results"].size(), rows.size());
        EXPECT_EQ(doc["interrupted"], "SIGINT");
    }
    const auto sum = nlohmann::json::parse(test::read_text(o + ".json"));
    EXPECT_EQ(sum["interrupted"], "SIGINT");
    EXPECT_EQ(sum["exit_code"], 130);
}

}  // namespace
}  // namespace corrtrack
