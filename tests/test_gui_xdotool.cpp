// A user's session with the desktop GUI under a virtual X server, driven by xdotool: drag a
// new box, step, switch the kernel through the Kernels panel and quit with Q; the --log events
// and the --csv rows follow each action. Part of test_gui; built only with the GUI.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/gui_harness.h"
#include "tests/support/run_cli.h"

namespace corrtrack {
namespace {

using test::have_program;
using test::kSample;
using test::kSampleBox;
using test::read_csv;
using test::read_log;

// Runs a command in the background; the destructor kills it if it is still running.
class Background {
public:
    explicit Background(const std::string& cmd) {
        pid_ = fork();
        if (pid_ == 0) {
            execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
            _exit(127);
        }
    }
    ~Background() {
        if (pid_ > 0 && !done_) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
    }
    // Exit status, or -1 if still running after timeout_s.
    int wait(double timeout_s) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
        while (std::chrono::steady_clock::now() < deadline) {
            int status = 0;
            if (waitpid(pid_, &status, WNOHANG) == pid_) {
                done_ = true;
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        return -1;
    }
    bool running() {
        int status = 0;
        if (!done_ && waitpid(pid_, &status, WNOHANG) == pid_) done_ = true;
        return !done_;
    }

private:
    pid_t pid_ = -1;
    bool done_ = false;
};

// Waits until the log holds an event satisfying `pred` after index `from`; returns its index.
long wait_for(const std::string& log, std::size_t from, const std::function<bool(const nlohmann::json&)>& pred,
              Background& gui, double timeout_s = 20) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < deadline && gui.running()) {
        const auto events = read_log(log);
        for (std::size_t i = from; i < events.size(); ++i)
            if (pred(events[i])) return static_cast<long>(i);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return -1;
}

int xdo(const std::string& args) { return std::system(("xdotool " + args + " >/dev/null 2>&1").c_str()); }

// The GUI's X window id (its title is "corrtrack"), or "" when none shows up in time.
std::string find_window(double timeout_s = 10) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
        if (std::FILE* f = popen("xdotool search --name '^corrtrack$' 2>/dev/null", "r")) {
            char buf[64] = {};
            const bool got = std::fgets(buf, sizeof buf, f) != nullptr;
            pclose(f);
            if (got && buf[0] >= '0' && buf[0] <= '9') return std::string(buf, std::strcspn(buf, "\n"));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return "";
}

TEST_F(Gui, XdotoolDragStepKernelSwitchAndQuit) {
    REQUIRE_DISPLAY();
    if (!have_program("xdotool")) GTEST_SKIP() << "xdotool not installed";
    const std::string log = file("ui.log"), csv = file("ui.csv");
    Background gui(std::string(CORRTRACK_BINARY) + " gui " + kSample + " --box " + kSampleBox +
                   " --kernel cpu_fast --pause-at-start --window 1280x720 --log " + log + " --csv " + csv + " >" +
                   file("out.txt") + " 2>" + file("err.txt"));

    const long at_layout = wait_for(
        log, 0,
        [](const nlohmann::json& e) { return e.value("event", "") == "layout" && e["kernels"].contains("cpu_ref"); },
        gui);
    ASSERT_GE(at_layout, 0) << test::read_text(file("err.txt"));
    const nlohmann::json layout = read_log(log)[at_layout];
    const double x0 = layout["view"][0], y0 = layout["view"][1], scale = layout["view"][2];

    // Drag a new box around the man in black at the top of the first frame.
    const double fx0 = 498, fy0 = 156, fx1 = 526, fy1 = 238;
    auto sx = [&](double fx) { return std::to_string(std::lround(x0 + scale * fx)); };
    auto sy = [&](double fy) { return std::to_string(std::lround(y0 + scale * fy)); };
    // Window-relative pointer moves, so a window manager placing the window anywhere is fine;
    // the pointer stays over the window, which gives it the keyboard too.
    const std::string win = find_window();
    ASSERT_FALSE(win.empty()) << "no window named corrtrack";
    const std::string move = "mousemove --window " + win + " ";
    ASSERT_EQ(xdo(move + sx(fx0) + " " + sy(fy0) + " sleep 0.3 mousedown 1 sleep 0.3 " + move + sx((fx0 + fx1) / 2) +
                  " " + sy((fy0 + fy1) / 2) + " sleep 0.3 " + move + sx(fx1) + " " + sy(fy1) + " sleep 0.3 mouseup 1"),
              0);
    const long at_init = wait_for(
        log, at_layout,
        [](const nlohmann::json& e) { return e.value("event", "") == "init" && e.value("mode", "") == "reselect"; },
        gui);
    ASSERT_GE(at_init, 0) << "no re-initialisation after the drag";
    const nlohmann::json init = read_log(log)[at_init];
    EXPECT_TRUE(init["ok"].get<bool>()) << init.dump();
    EXPECT_EQ(init["frame"], 0);
    EXPECT_NEAR(init["box"][0].get<double>(), fx0, 2.0) << init.dump();
    EXPECT_NEAR(init["box"][1].get<double>(), fy0, 2.0) << init.dump();
    EXPECT_NEAR(init["box"][2].get<double>(), fx1 - fx0, 2.0) << init.dump();
    EXPECT_NEAR(init["box"][3].get<double>(), fy1 - fy0, 2.0) << init.dump();

    // Step one frame: tracked from the new box.
    ASSERT_EQ(xdo("key Right"), 0);
    const long at_step = wait_for(
        log, at_init, [](const nlohmann::json& e) { return e.value("event", "") == "step"; }, gui);
    ASSERT_GE(at_step, 0);

    // Switch to cpu_ref with a click on its radio button, then step again.
    const auto& k = layout["kernels"]["cpu_ref"];
    const double kx = k[0].get<double>() + k[3].get<double>() / 2, ky = k[1].get<double>() + k[3].get<double>() / 2;
    ASSERT_EQ(
        xdo(move + std::to_string(std::lround(kx)) + " " + std::to_string(std::lround(ky)) + " sleep 0.3 click 1"), 0);
    const long at_kernel = wait_for(
        log, at_step, [](const nlohmann::json& e) { return e.value("event", "") == "kernel"; }, gui);
    ASSERT_GE(at_kernel, 0) << "the click did not switch the kernel";
    const nlohmann::json kernel = read_log(log)[at_kernel];
    EXPECT_EQ(kernel["name"], "cpu_ref");
    EXPECT_TRUE(kernel["ok"].get<bool>());
    ASSERT_EQ(xdo("key Right"), 0);
    const long at_frame = wait_for(
        log, at_kernel, [](const nlohmann::json& e) { return e.value("event", "") == "frame"; }, gui);
    ASSERT_GE(at_frame, 0);
    EXPECT_EQ(read_log(log)[at_frame]["kernel"], "cpu_ref");

    ASSERT_EQ(xdo("key q"), 0);
    // A hang guard (Q must end the process), not a speed: each wait above has its own.
    EXPECT_EQ(gui.wait(15), 0) << test::read_text(file("err.txt"));

    // The CSV: frame 0 from the start box, then frames 1 and 2 tracked on from the dragged box
    // (the man walks a few pixels a frame), far from where the first target was.
    const auto rows = read_csv(csv);
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0].frame, 0);
    EXPECT_NEAR(rows[0].x, 252, 1e-6);
    for (int i = 1; i <= 2; ++i) {
        EXPECT_EQ(rows[i].frame, i);
        EXPECT_NEAR(rows[i].x + rows[i].w / 2, (fx0 + fx1) / 2, 6.0 * i) << "frame " << i;
        EXPECT_NEAR(rows[i].y + rows[i].h / 2, (fy0 + fy1) / 2, 6.0 * i) << "frame " << i;
        EXPECT_NEAR(rows[i].w, fx1 - fx0, 3.0) << "frame " << i;
        EXPECT_NEAR(rows[i].h, fy1 - fy0, 3.0) << "frame " << i;
    }
}

}  // namespace
}  // namespace corrtrack
