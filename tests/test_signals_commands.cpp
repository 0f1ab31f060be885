// Signals during `eval` (one job and --jobs), `bench` and `bench --e2e`, with a real process: the
// first signal prints "stopping", lets the unit in flight finish (a sequence, a bench case) or
// abandons it (an e2e pass), writes every output with what is done, marks it interrupted and
// exits 128 + the signal. The runs are held at a known point by FIFO inputs (the test opens
// its end when the command opens the other), so that no timing decides where the signal lands.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <functional>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/eval/plot.h"
#include "tests/support/damage.h"
#include "tests/support/run_cli.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

namespace fs = std::filesystem;

const char* signal_text(int sig) { return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP"; }

bool wait_for(const std::function<bool()>& done, double seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
        if (done()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
}

long lines_of(const std::string& path) {
    std::ifstream in(path);
    long n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
}

// An OTB sequence folder: video.mkv and its 1-based ground truth. With `fifo`, the ground truth
// is a FIFO (the run blocks reading it until the test writes it); returns its text.
std::string write_sequence(const std::string& dir, bool fifo) {
    fs::create_directories(dir);
    SyntheticClipSpec spec;
    spec.frames = 30;
    std::string error;
    const auto truth = write_synthetic_clip(dir + "/video.mkv", spec, &error);
    EXPECT_EQ(truth.size(), 30u) << error;
    std::ostringstream gt;
    for (const TruthBox& b : truth) gt << b.x + 1 << "," << b.y + 1 << "," << b.w << "," << b.h << "\n";
    if (fifo) {
        EXPECT_EQ(mkfifo((dir + "/groundtruth_rect.txt").c_str(), 0600), 0);
        return gt.str();
    }
    std::ofstream(dir + "/groundtruth_rect.txt") << gt.str();
    return {};
}

void write_all(int fd, const std::string& bytes) {
    for (std::size_t at = 0; at < bytes.size();) {
        const ssize_t n = ::write(fd, bytes.data() + at, bytes.size() - at);
        if (n <= 0) return;
        at += static_cast<std::size_t>(n);
    }
}

struct EvalCase {
    int jobs, sig;
};

class EvalSignals : public ::testing::TestWithParam<EvalCase> {};

// Sequences a_, b_ (with --jobs 2: both held by a FIFO ground truth, taken at once by the two
// jobs; with one job: a normal a_, then b_ held so), then c_ and d_. The signal comes while the
// held sequences wait for their ground truth; it is then written, they finish, and c_ and d_
// never start.
TEST_P(EvalSignals, FinishesTheSequencesInFlightAndWritesEveryOutput) {
    const auto [jobs, sig] = GetParam();
    TempDir dir("eval_signals");
    const std::string d = dir.path(), data = d + "/data";
    std::vector<std::string> fifo_names =
        jobs == 2 ? std::vector<std::string>{"a_", "b_"} : std::vector<std::string>{"b_"};
    std::vector<std::string> fifo_bytes;
    for (const std::string name : {"a_", "b_", "c_", "d_"}) {
        const bool fifo = std::find(fifo_names.begin(), fifo_names.end(), name) != fifo_names.end();
        const std::string bytes = write_sequence(data + "/" + name, fifo);
        if (fifo) fifo_bytes.push_back(bytes);
    }
    std::signal(SIGPIPE, SIG_IGN);
    const auto s = test::spawn_cli({"eval", data, "-k", "cpu_fast", "--jobs", std::to_string(jobs), "--json",
                                    d + "/eval.json", "--results", d + "/res", "--plot", d + "/plot.png"},
                                   d);
    // Each open returns once the run has opened that sequence for reading: it is in flight.
    std::vector<int> fds;
    for (const std::string& name : fifo_names) {
        fds.push_back(::open((data + "/" + name + "/groundtruth_rect.txt").c_str(), O_WRONLY));
        ASSERT_GE(fds.back(), 0);
    }
    ::kill(s.pid, sig);
    ASSERT_TRUE(wait_for([&] { return test::read_text(s.err).find("stopping") != std::string::npos; }, 60))
        << test::read_text(s.err);
    for (std::size_t i = 0; i < fds.size(); ++i) {
        write_all(fds[i], fifo_bytes[i]);
        ::close(fds[i]);
    }
    const auto r = test::wait_cli(s, 120);
    ASSERT_FALSE(r.signalled) << "killed by the signal instead of stopping: " << r.err;
    EXPECT_EQ(r.exit_code, 128 + sig) << r.err;
    EXPECT_NE(r.err.find(std::string("stopped by ") + signal_text(sig)), std::string::npos) << r.err;

    const auto doc = nlohmann::json::parse(test::read_bytes(d + "/eval.json"));
    EXPECT_EQ(doc["interrupted"], signal_text(sig));
    const std::vector<std::string> done = {"a_", "b_"};
    ASSERT_EQ(doc["sequences"].size(), 2u) << doc.dump();
    for (const std::string& name : done) {
        ASSERT_TRUE(doc["sequences"].contains(name)) << doc.dump();
        EXPECT_EQ(doc["sequences"][name]["frames"], 30);
        EXPECT_GT(doc["sequences"][name]["auc"].get<double>(), 0.5);  // tracked, not a placeholder
        EXPECT_EQ(lines_of(d + "/res/" + name + ".txt"), 30);
    }
    EXPECT_EQ(doc["not_run"], nlohmann::json({"c_", "d_"}));
    EXPECT_EQ(doc["mean"]["sequences"], 2);
    EXPECT_FALSE(fs::exists(d + "/res/c_.txt"));
    // The plot needs gnuplot, which the GPU host lacks (eval then says so; the exit stays 128+N).
    if (plot::gnuplot_available()) EXPECT_GT(fs::file_size(d + "/plot.png"), 1000u);
}

INSTANTIATE_TEST_SUITE_P(OneAndTwoJobs, EvalSignals,
                         ::testing::Values(EvalCase{1, SIGTERM}, EvalCase{2, SIGINT}, EvalCase{1, SIGHUP}),
                         [](const ::testing::TestParamInfo<EvalCase>& info) {
                             return "jobs" + std::to_string(info.param.jobs) + "_" + signal_text(info.param.sig);
                         });

// The kernel sweep: the signal comes once the first case reported (stderr); the case in flight
// finishes, every later one is skipped, and the CSV and JSON hold every row.
TEST(BenchSignals, SkipsTheCasesLeftAndWritesTheOutputs) {
    TempDir dir("bench_signals");
    const std::string d = dir.path();
    // 40 cpu_ref cases of about 0.2 s or more each: far longer than the wait for the first.
    std::string templates;
    for (int t = 8; t < 48; ++t) templates += (templates.empty() ? "" : ",") + std::to_string(t);
    const auto s =
        test::spawn_cli({"bench", "--kernels", "cpu_ref", "--sizes", "640x480", "--templates", templates, "--modes",
                         "full", "--runs", "5", "--warmup", "0", "--csv", d + "/b.csv", "--json", d + "/b.json"},
                        d);
    ASSERT_TRUE(wait_for([&] { return test::read_text(s.err).find("cpu_ref") != std::string::npos; }, 120))
        << test::read_text(s.err);
    ::kill(s.pid, SIGHUP);
    const auto r = test::wait_cli(s, 120);
    ASSERT_FALSE(r.signalled) << r.err;
    EXPECT_EQ(r.exit_code, 128 + SIGHUP) << r.err;
    EXPECT_NE(r.err.find("stopping"), std::string::npos) << r.err;
    const auto doc = nlohmann::json::parse(test::read_bytes(d + "/b.json"));
    EXPECT_EQ(doc["interrupted"], "SIGHUP");
    ASSERT_EQ(doc["results"].size(), 40u);
    long ok = 0, stopped = 0;
    for (const auto& row : doc["results"]) {
        const std::string status = row["status"];
        ok += status == "ok";
        stopped += status.find("stopped by SIGHUP") != std::string::npos;
    }
    EXPECT_GE(ok, 1);
    EXPECT_GE(stopped, 1);
    EXPECT_EQ(ok + stopped, 40) << doc.dump();
    const std::string csv = test::read_text(d + "/b.csv");
    EXPECT_NE(csv.find("# interrupted: SIGHUP"), std::string::npos) << csv.substr(0, 2000);
}

// --e2e: the clip is a FIFO, fed half and held open; the pass in flight is abandoned at once
// (a part of a pass is no measurement), the JSON is written and says so.
TEST(BenchSignals, E2eAbandonsThePassAndWritesTheJson) {
    TempDir dir("e2e_signals");
    const std::string d = dir.path();
    SyntheticClipSpec spec;
    spec.frames = 40;
    std::string error;
    ASSERT_EQ(write_synthetic_clip(d + "/clip.mkv", spec, &error).size(), 40u) << error;
    const std::string bytes = test::read_bytes(d + "/clip.mkv");
    ASSERT_EQ(mkfifo((d + "/in.mkv").c_str(), 0600), 0);
    std::signal(SIGPIPE, SIG_IGN);
    const auto s = test::spawn_cli(
        {"bench", "--e2e", d + "/in.mkv", "--e2e-kernel", "cpu_fast", "--e2e-decode", "sw", "--json", d + "/e.json"},
        d);
    const int fd = ::open((d + "/in.mkv").c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    write_all(fd, bytes.substr(0, bytes.size() / 2));
    ::kill(s.pid, SIGINT);
    const auto r = test::wait_cli(s, 60);
    ::close(fd);
    ASSERT_FALSE(r.signalled) << r.err;
    EXPECT_EQ(r.exit_code, 128 + SIGINT) << r.err;
    EXPECT_NE(r.err.find("stopping"), std::string::npos) << r.err;
    const auto doc = nlohmann::json::parse(test::read_bytes(d + "/e.json"));
    EXPECT_EQ(doc["interrupted"], "SIGINT");
    ASSERT_EQ(doc["clips"].size(), 1u);
    EXPECT_EQ(doc["clips"][0]["modes"].size(), 0u) << doc.dump();
}

}  // namespace
}  // namespace corrtrack
