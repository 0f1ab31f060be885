// Ctrl-C, kill and a closed terminal, with a real process and real signals: the first signal
// stops the reading, the frame in flight is finished and every output is completed (CSV rows
// whole, JSON and OTB written, the MP4 finalised and playable), exit 128 + signal; a second
// signal ends the process at once.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "app/io/frame_source.h"
#include "tests/support/damage.h"
#include "tests/support/read_source.h"
#include "tests/support/run_cli.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Rows in the newest temporary file of `name` in dir (the CSV while it is being written).
long temp_rows(const std::string& dir, const std::string& name) {
    long rows = -1;
    for (const auto& e : fs::directory_iterator(dir)) {
        if (e.path().filename().string().rfind("." + name + ".", 0) != 0) continue;
        std::ifstream in(e.path());
        long n = 0;
        for (std::string line; std::getline(in, line);) ++n;
        rows = std::max(rows, n - 1);
    }
    return rows;
}

bool wait_for(const std::function<bool()>& done, double seconds) {
    const auto until = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < until) {
        if (done()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

class Signals : public ::testing::TestWithParam<int> {};

TEST_P(Signals, FirstSignalFinishesTheFrameAndCompletesEveryOutput) {
    const int sig = GetParam();
    TempDir dir("signals");
    const std::string d = dir.path();
    std::string error;
    SyntheticClipSpec spec;
    spec.frames = 80;
    const auto truth = write_synthetic_clip(d + "/clip.mkv", spec, &error);
    ASSERT_EQ(truth.size(), 80u) << error;
    // The input is a FIFO fed with 60% of the clip, then held open without data: the run is
    // certainly in progress, waiting for more, when the signal comes.
    const std::string fifo = d + "/in.fifo";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    const std::string bytes = test::read_bytes(d + "/clip.mkv");
    std::signal(SIGPIPE, SIG_IGN);
    const auto s =
        test::spawn_cli({"track", fifo, "--box", "60,70,40,32", "-k", "cpu_fast", "--read-timeout", "120", "--csv",
                         d + "/out.csv", "--json", d + "/out.json", "--otb", d + "/out.txt", "--video", d + "/out.mp4"},
                        d);
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    std::atomic<bool> done{false};
    std::thread writer([&] {
        std::size_t at = 0, want = bytes.size() * 3 / 5;
        while (at < want) {
            const ssize_t n = ::write(fd, bytes.data() + at, want - at);
            if (n <= 0) break;
            at += static_cast<std::size_t>(n);
        }
        while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        ::close(fd);
    });
    const bool started = wait_for([&] { return temp_rows(d, "out.csv") >= 10; }, 120);
    ::kill(s.pid, sig);
    const auto r = test::wait_cli(s, 60);
    done = true;
    writer.join();
    ASSERT_TRUE(started) << "no rows appeared: " << test::read_text(s.err);
    EXPECT_FALSE(r.signalled) << "killed by the signal instead of stopping: " << r.err;
    EXPECT_EQ(r.exit_code, 128 + sig) << r.err;
    EXPECT_NE(r.err.find("stopping"), std::string::npos) << r.err;

    // CSV: whole rows, one per frame from 0.
    std::ifstream csv(d + "/out.csv");
    std::string line;
    std::getline(csv, line);
    long rows = 0;
    while (std::getline(csv, line)) {
        EXPECT_EQ(std::count(line.begin(), line.end(), ','), 18) << "cut row: " << line;
        EXPECT_EQ(std::stol(line), rows);
        ++rows;
    }
    EXPECT_GE(rows, 10);
    EXPECT_LT(rows, 80);
    // JSON: a complete document with every row and the signal named.
    const auto doc = nlohmann::json::parse(test::read_bytes(d + "/out.json"));
    EXPECT_EQ(doc["frames"].get<long>(), rows);
    EXPECT_EQ(doc["results"].size(), static_cast<std::size_t>(rows));
    EXPECT_EQ(doc["interrupted"], sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP");
    // OTB: one line per frame.
    std::ifstream otb(d + "/out.txt");
    long otb_rows = 0;
    while (std::getline(otb, line)) ++otb_rows;
    EXPECT_EQ(otb_rows, rows);
    // MP4: finalised (index written), every frame there.
    const ReadAll video = read_file(d + "/out.mp4");
    EXPECT_EQ(video.status, ReadStatus::kEnd) << video.error;
    EXPECT_EQ(video.count, rows);
    for (const auto& e : fs::directory_iterator(d))
        EXPECT_NE(e.path().filename().string().rfind(".out", 0), 0u) << "temporary left: " << e.path();
}

INSTANTIATE_TEST_SUITE_P(IntTermHup, Signals, ::testing::Values(SIGINT, SIGTERM, SIGHUP));

// When the first signal cannot finish (an output blocks: a FIFO nobody reads), a second one
// ends the process at once with 128 + that signal.
TEST(SecondSignal, EndsTheProcessAtOnce) {
    TempDir dir("signals");
    const std::string d = dir.path();
    std::string error;
    SyntheticClipSpec spec;
    spec.frames = 60;
    ASSERT_FALSE(write_synthetic_clip(d + "/clip.mkv", spec, &error).empty()) << error;
    const std::string fifo = d + "/rows.fifo";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);  // never reads
    ASSERT_GE(reader, 0);
    ::fcntl(reader, F_SETPIPE_SZ, 4096);
    const auto s =
        test::spawn_cli({"track", d + "/clip.mkv", "--box", "60,70,40,32", "-k", "cpu_fast", "--csv", fifo}, d);
    // The pipe fills up and the run blocks writing a row.
    int queued = 0;
    const bool full = wait_for(
        [&] {
            int now = 0;
            ::ioctl(reader, FIONREAD, &now);
            const bool stable = now == queued && now > 2048;
            queued = now;
            return stable;
        },
        60);
    ::kill(s.pid, SIGTERM);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    int status = 0;
    EXPECT_EQ(::waitpid(s.pid, &status, WNOHANG), 0) << "the first signal cannot finish while the output blocks";
    const auto t0 = Clock::now();
    ::kill(s.pid, SIGINT);
    const auto r = test::wait_cli(s, 10);
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    ::close(reader);
    EXPECT_TRUE(full) << "the CSV FIFO never filled";
    EXPECT_FALSE(r.signalled) << r.err;
    EXPECT_EQ(r.exit_code, 128 + SIGINT) << r.err;
    // 128 + SIGINT already says the second signal ended the run (the blocked run could not
    // end otherwise); the bound is only a generous hang guard, far above an exit's milliseconds.
    EXPECT_LT(secs, 5);
}

}  // namespace
}  // namespace corrtrack
