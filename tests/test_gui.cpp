// The desktop GUI under a virtual X server (Xvfb + Mesa software GL): the screenshot mode's PNG
// shows the tracked box where the tracker says, the heatmap in the colormap's colours and the
// panels; xdotool drives a drag, a step, a kernel switch and Q like a user would.
// Built only with the GUI. Starts its own Xvfb when $DISPLAY is unset.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <stb_image.h>

#include "app/track/tracker.h"
#include "corrtrack/correlator.h"
#include "app/io/frame_source.h"
#include "render/colormap.h"
#include "render/gui_export.h"
#include "tests/support/run_cli.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

const std::string kSample = std::string(CORRTRACK_SOURCE_DIR) + "/assets/sample.mp4";
// The walking man at the left of the sample's first frame (as in assets/sample.box).
const char* kSampleBox = "252,218,34,92";

bool have_program(const char* name) {
    return std::system(("command -v " + std::string(name) + " >/dev/null 2>&1").c_str()) == 0;
}

// A display for the whole test program: $DISPLAY when set, else an Xvfb of our own on a free
// display number (Xvfb -displayfd picks it, so parallel test runs do not collide).
class XDisplay : public ::testing::Environment {
public:
    static bool available() { return available_; }
    static const std::string& why_not() { return why_not_; }

    void SetUp() override {
        if (const char* d = std::getenv("DISPLAY"); d && *d) {
            available_ = true;
            return;
        }
        if (!have_program("Xvfb")) {
            why_not_ = "no $DISPLAY and no Xvfb (Debian: xvfb)";
            return;
        }
        int fds[2];
        if (pipe(fds) != 0) return;
        pid_ = fork();
        if (pid_ == 0) {
            close(fds[0]);
            const int null = open("/dev/null", O_WRONLY);
            dup2(null, 1);
            dup2(null, 2);
            const std::string fd = std::to_string(fds[1]);
            execlp("Xvfb", "Xvfb", "-displayfd", fd.c_str(), "-screen", "0", "1600x900x24", "-nolisten", "tcp",
                   static_cast<char*>(nullptr));
            _exit(127);
        }
        close(fds[1]);
        std::string number;
        pollfd p{fds[0], POLLIN, 0};
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
        while (std::chrono::steady_clock::now() < deadline && number.find('\n') == std::string::npos) {
            if (poll(&p, 1, 200) <= 0) continue;
            char buf[32];
            const ssize_t n = read(fds[0], buf, sizeof buf);
            if (n <= 0) break;
            number.append(buf, n);
        }
        close(fds[0]);
        if (number.find('\n') == std::string::npos) {
            why_not_ = "Xvfb did not start";
            return;
        }
        display_ = ":" + number.substr(0, number.find('\n'));
        setenv("DISPLAY", display_.c_str(), 1);
        available_ = true;
    }

    void TearDown() override {
        if (pid_ > 0) {
            kill(pid_, SIGTERM);
            waitpid(pid_, nullptr, 0);
            unsetenv("DISPLAY");
        }
    }

private:
    pid_t pid_ = -1;
    std::string display_;
    static inline bool available_ = false;
    static inline std::string why_not_ = "no display";
};

[[maybe_unused]] ::testing::Environment* const kDisplay = ::testing::AddGlobalTestEnvironment(new XDisplay);

#define REQUIRE_DISPLAY()                                                \
    do {                                                                 \
        if (!XDisplay::available()) GTEST_SKIP() << XDisplay::why_not(); \
    } while (0)

struct Image {
    int width = 0, height = 0;
    std::vector<unsigned char> rgb;
    bool load(const std::string& path) {
        int c = 0;
        unsigned char* p = stbi_load(path.c_str(), &width, &height, &c, 3);
        if (!p) return false;
        rgb.assign(p, p + static_cast<std::size_t>(width) * height * 3);
        stbi_image_free(p);
        return true;
    }
    const unsigned char* at(int x, int y) const { return &rgb[(static_cast<std::size_t>(y) * width + x) * 3]; }
    bool inside(int x, int y) const { return x >= 0 && y >= 0 && x < width && y < height; }
};

int dist2(const unsigned char* p, int r, int g, int b) {
    return (p[0] - r) * (p[0] - r) + (p[1] - g) * (p[1] - g) + (p[2] - b) * (p[2] - b);
}

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

Printed parse_printed(const std::string& out) {
    Printed p;
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream l(line);
        std::string key;
        l >> key;
        if (key == "frame")
            l >> p.frame;
        else if (key == "window")
            l >> p.window_w >> p.window_h;
        else if (key == "view")
            l >> p.x0 >> p.y0 >> p.scale;
        else if (key == "panel")
            l >> p.panel[0] >> p.panel[1] >> p.panel[2] >> p.panel[3];
        else if (key == "target") {
            int id;
            std::string word;
            std::array<double, 4> b;
            l >> id >> word >> b[0] >> b[1] >> b[2] >> b[3];
            p.box[id] = b;
        } else if (key == "search" || key == "heatmap") {
            int id;
            std::array<double, 4> b;
            l >> id >> b[0] >> b[1] >> b[2] >> b[3];
            (key == "search" ? p.search : p.heatmap)[id] = b;
        }
    }
    return p;
}

// Fraction of points along a box outline (frame coordinates, mapped through the letterbox)
// that have the box colour within 3 px.
double outline_hits(const Image& img, const Printed& p, std::array<double, 4> b, int r, int g, int bl) {
    const double sx0 = p.sx(b[0]), sy0 = p.sy(b[1]), sx1 = p.sx(b[0] + b[2]), sy1 = p.sy(b[1] + b[3]);
    int hits = 0, total = 0;
    for (int k = 1; k < 16; ++k) {
        const double t = k / 16.0;
        const double pts[4][2] = {{sx0 + t * (sx1 - sx0), sy0},
                                  {sx0 + t * (sx1 - sx0), sy1},
                                  {sx0, sy0 + t * (sy1 - sy0)},
                                  {sx1, sy0 + t * (sy1 - sy0)}};
        for (const auto& q : pts) {
            ++total;
            bool hit = false;
            for (int dy = -3; dy <= 3 && !hit; ++dy)
                for (int dx = -3; dx <= 3 && !hit; ++dx) {
                    const int x = static_cast<int>(std::lround(q[0])) + dx,
                              y = static_cast<int>(std::lround(q[1])) + dy;
                    hit = img.inside(x, y) && dist2(img.at(x, y), r, g, bl) < 40 * 40;
                }
            hits += hit;
        }
    }
    return static_cast<double>(hits) / total;
}

// Fraction of pixels inside the heatmap rectangle (away from its edge, the box outline and
// the label) within 20 levels of a colormap entry.
double heatmap_hits(const Image& img, const Printed& p, int id, Colormap cm) {
    const auto h = p.heatmap.at(id), b = p.box.at(id);
    const ColormapLut& lut = colormap_lut(cm);
    const double bx0 = p.sx(b[0]), by0 = p.sy(b[1]), bx1 = p.sx(b[0] + b[2]), by1 = p.sy(b[1] + b[3]);
    int hits = 0, total = 0;
    for (int y = static_cast<int>(p.sy(h[1])) + 3; y < p.sy(h[1] + h[3]) - 3; y += 2)
        for (int x = static_cast<int>(p.sx(h[0])) + 3; x < p.sx(h[0] + h[2]) - 3; x += 2) {
            if (!img.inside(x, y) || x >= p.panel[0]) continue;
            const bool near_outline = (std::fabs(x - bx0) < 5 || std::fabs(x - bx1) < 5) && y > by0 - 5 && y < by1 + 5;
            const bool near_top = (std::fabs(y - by0) < 5 || std::fabs(y - by1) < 5) && x > bx0 - 5 && x < bx1 + 5;
            const bool label = y > by0 - 30 && y < by0 && x > bx0 - 5 && x < bx0 + 100;
            if (near_outline || near_top || label) continue;
            ++total;
            int best = 1 << 30;
            for (const auto& c : lut) best = std::min(best, dist2(img.at(x, y), c[0], c[1], c[2]));
            hits += best < 20 * 20;
        }
    return total ? static_cast<double>(hits) / total : 0.0;
}

struct CsvRow {
    long frame;
    int target;
    double x, y, w, h;
};

std::vector<CsvRow> read_csv(const std::string& path) {
    std::vector<CsvRow> rows;
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
        CsvRow r;
        double pts;
        if (std::sscanf(line.c_str(), "%ld,%lf,%d,%lf,%lf,%lf,%lf", &r.frame, &pts, &r.target, &r.x, &r.y, &r.w,
                        &r.h) == 7)
            rows.push_back(r);
    }
    return rows;
}

class Gui : public ::testing::Test {
protected:
    void SetUp() override { dir_ = std::make_unique<TempDir>("gui"); }
    std::string file(const std::string& name) const { return dir_->file(name); }
    std::unique_ptr<TempDir> dir_;
};

TEST_F(Gui, ScreenshotShowsTrackedBoxHeatmapAndPanels) {
    REQUIRE_DISPLAY();
    const std::string png = file("shot.png"), csv = file("gui.csv");
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = test::run_cli("gui " + kSample + " --box " + kSampleBox + " --kernel cpu_fast --screenshot " + png +
                                     " --frames 20 --window 1280x720 --print-box --csv " + csv,
                                 dir_->path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_FALSE(r.signalled);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 60.0);
    const Printed p = parse_printed(r.out);
    EXPECT_EQ(p.frame, 19);
    ASSERT_EQ(p.box.count(0), 1u) << r.out;
    ASSERT_EQ(p.heatmap.count(0), 1u) << r.out;

    Image img;
    ASSERT_TRUE(img.load(png)) << png;
    EXPECT_EQ(img.width, 1280);
    EXPECT_EQ(img.height, 720);
    EXPECT_EQ(p.window_w, 1280);
    EXPECT_EQ(p.window_h, 720);

    // The box colour (target 0: 60,255,90) lies along the outline where the tracker puts the
    // box, and not along the same outline moved by 12 frame pixels.
    auto moved = p.box.at(0);
    moved[0] += 12;
    moved[1] += 12;
    const double on_box = outline_hits(img, p, p.box.at(0), 60, 255, 90),
                 off_box = outline_hits(img, p, moved, 60, 255, 90);
    std::printf("box colour along the outline: %.2f (moved 12 px: %.2f)\n", on_box, off_box);
    EXPECT_GT(on_box, 0.9);
    EXPECT_LT(off_box, 0.5);

    // The printed box is frame 19's row of the CSV, and the CSV is what `track` writes.
    const auto rows = read_csv(csv);
    ASSERT_EQ(rows.size(), 20u);
    EXPECT_NEAR(rows.back().x, p.box.at(0)[0], 0.01);
    EXPECT_NEAR(rows.back().y, p.box.at(0)[1], 0.01);
    const std::string track_csv = file("track.csv");
    const auto t = test::run_cli(
        "track " + kSample + " --box " + kSampleBox + " --kernel cpu_fast --frames 20 -q --csv " + track_csv,
        dir_->path());
    ASSERT_EQ(t.exit_code, 0) << t.err;
    const auto track_rows = read_csv(track_csv);
    ASSERT_EQ(track_rows.size(), rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        EXPECT_EQ(rows[i].frame, track_rows[i].frame);
        EXPECT_DOUBLE_EQ(rows[i].x, track_rows[i].x) << "frame " << rows[i].frame;
        EXPECT_DOUBLE_EQ(rows[i].y, track_rows[i].y) << "frame " << rows[i].frame;
    }

    // Panels: ImGui's dark style, window background (15,15,15), collapsing headers
    // (30,56,87) and the active title bar (41,74,122) in the column on the right.
    long bg = 0, header = 0, title = 0, total = 0, video_ui = 0;
    for (int y = 100; y < 600; ++y)
        for (int x = 100; x < 700; ++x) video_ui += dist2(img.at(x, y), 41, 74, 122) <= 12;
    for (int y = 0; y < img.height; ++y)
        for (int x = static_cast<int>(p.panel[0]); x < img.width; ++x) {
            ++total;
            const unsigned char* c = img.at(x, y);
            bg += dist2(c, 15, 15, 15) <= 12;
            header += dist2(c, 30, 56, 87) <= 12;
            title += y < 20 && dist2(c, 41, 74, 122) <= 12;
        }
    std::printf("panel: %.2f background, %.3f headers, %ld title pixels; video area: %ld title-coloured\n",
                static_cast<double>(bg) / total, static_cast<double>(header) / total, title, video_ui);
    EXPECT_GT(bg, total / 5) << "panel background";
    EXPECT_GT(header, total / 100) << "panel headers";
    EXPECT_GT(title, (img.width - p.panel[0]) * 10) << "panel title bar";
    EXPECT_LT(video_ui, 500) << "panel colours in the video";
}

TEST_F(Gui, HeatmapUsesTheChosenColormap) {
    REQUIRE_DISPLAY();
    // Opaque heatmap, so its pixels are the colormap's own colours; with the heatmap off the
    // same pixels are video and the check must fail there.
    struct Case {
        const char* args;
        Colormap colormap;
        bool expect;
    } cases[] = {{"--colormap turbo --blend 1", Colormap::kTurbo, true},
                 {"--colormap viridis --blend 1", Colormap::kViridis, true},
                 {"--heatmap off", Colormap::kTurbo, false}};
    for (const Case& c : cases) {
        const std::string png = file("heat.png");
        const auto r = test::run_cli("gui " + kSample + " --box " + kSampleBox + " --kernel cpu_fast --screenshot " +
                                         png + " --frames 12 --print-box " + c.args,
                                     dir_->path());
        ASSERT_EQ(r.exit_code, 0) << c.args << ": " << r.err;
        const Printed p = parse_printed(r.out);
        ASSERT_EQ(p.heatmap.count(0), 1u) << r.out;
        Image img;
        ASSERT_TRUE(img.load(png));
        const double hits = heatmap_hits(img, p, 0, c.colormap);
        std::printf("%s: %.2f of the heatmap's pixels in %s colours\n", c.args, hits, to_string(c.colormap));
        if (c.expect)
            EXPECT_GT(hits, 0.95) << c.args;
        else
            EXPECT_LT(hits, 0.5) << c.args;
    }
}

TEST_F(Gui, BadInputFailsCleanlyAndBareInputPicksGuiOrTrack) {
    REQUIRE_DISPLAY();
    auto r =
        test::run_cli("gui " + file("missing.mp4") + " --screenshot " + file("x.png") + " --frames 1", dir_->path());
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_FALSE(r.signalled);
    EXPECT_NE(r.err.find("missing.mp4"), std::string::npos) << r.err;
    r = test::run_cli("gui --window 10x10", dir_->path());
    EXPECT_EQ(r.exit_code, 2) << r.err;

    // `corrtrack INPUT` with a display: the GUI (which knows --screenshot)...
    r = test::run_cli(kSample + " --box " + kSampleBox + " --screenshot " + file("bare.png") + " --frames 2",
                      dir_->path());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    Image img;
    EXPECT_TRUE(img.load(file("bare.png")));
    // ...and without one: the headless tracker.
    const std::string cmd = std::string("env -u DISPLAY -u WAYLAND_DISPLAY ") + CORRTRACK_BINARY + " " + kSample +
                            " --box " + kSampleBox + " --frames 3 -q --csv " + file("bare.csv") + " >/dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    EXPECT_EQ(read_csv(file("bare.csv")).size(), 3u);
}

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

std::vector<nlohmann::json> read_log(const std::string& path) {
    std::vector<nlohmann::json> events;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line))
        if (!line.empty() && line.back() == '}') events.push_back(nlohmann::json::parse(line, nullptr, false));
    return events;
}

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
    const auto t0 = std::chrono::steady_clock::now();
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
    EXPECT_EQ(gui.wait(15), 0) << test::read_text(file("err.txt"));
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 60.0);

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

// --decode nvdec in the GUI. Without a GPU it falls back to software decode, says why once, and
// the screenshot's video area is pixel for pixel the one of --decode sw (same frames, same
// boxes); with a GPU the run must work too (NVDEC frames, interop or the upload path under
// Xvfb's Mesa GL) and look the same within decoder rounding.
TEST_F(Gui, DecodeNvdecScreenshotMatchesSoftwareDecode) {
    REQUIRE_DISPLAY();
    auto shot = [&](const std::string& decode, const std::string& png, const std::string& log) {
        return test::run_cli("gui " + kSample + " --box " + kSampleBox + " --kernel cpu_fast --decode " + decode +
                                 " --screenshot " + png + " --frames 12 --window 1280x720 --print-box --log " + log +
                                 " --csv " + file("decode_" + decode + ".csv"),
                             dir_->path());
    };
    const auto sw = shot("sw", file("sw.png"), file("sw.log"));
    ASSERT_EQ(sw.exit_code, 0) << sw.err;
    const auto nv = shot("nvdec", file("nvdec.png"), file("nvdec.log"));
    ASSERT_EQ(nv.exit_code, 0) << nv.err;
    ASSERT_FALSE(nv.signalled);
    const Printed ps = parse_printed(sw.out), pn = parse_printed(nv.out);
    EXPECT_EQ(pn.frame, 11);
    ASSERT_EQ(pn.box.count(0), 1u) << nv.out;
    EXPECT_NE(sw.out.find("decode sw"), std::string::npos) << sw.out;

    auto open_event = [](const std::string& log) {
        for (const auto& e : read_log(log))
            if (e.value("event", "") == "open") return e;
        return nlohmann::json{};
    };
    const nlohmann::json nv_open = open_event(file("nvdec.log"));
    ASSERT_FALSE(nv_open.is_null());
    EXPECT_EQ(open_event(file("sw.log"))["decode"], "sw");
    if (!cuda_available()) {
        EXPECT_EQ(nv_open["decode"], "sw") << nv_open.dump();
        EXPECT_NE(nv_open["decode_note"].get<std::string>().find("NVDEC"), std::string::npos) << nv_open.dump();
        EXPECT_NE(nv.err.find("NVDEC"), std::string::npos) << "the fallback is announced: " << nv.err;
        EXPECT_NE(nv.out.find("decode sw"), std::string::npos) << nv.out;
        EXPECT_NE(nv.out.find("frames_to_gl texture upload"), std::string::npos) << nv.out;
    } else {
        std::printf("with a GPU: --decode nvdec ran as %s; %s\n", nv_open["decode"].get<std::string>().c_str(),
                    nv.out.substr(nv.out.find("frames_to_gl")).c_str());
    }

    // Same boxes frame for frame: the same decoder without a GPU; with one, NVDEC's raw Y plane
    // (limited range, where software GRAY8 expands it) moves boxes by well under a pixel.
    const double tol = cuda_available() ? 1.0 : 0.0;
    const auto rows_sw = read_csv(file("decode_sw.csv")), rows_nv = read_csv(file("decode_nvdec.csv"));
    ASSERT_EQ(rows_nv.size(), 12u);
    ASSERT_EQ(rows_nv.size(), rows_sw.size());
    for (std::size_t i = 0; i < rows_sw.size(); ++i) {
        EXPECT_NEAR(rows_nv[i].x, rows_sw[i].x, tol) << "frame " << i;
        EXPECT_NEAR(rows_nv[i].y, rows_sw[i].y, tol) << "frame " << i;
    }

    // The video area (left of the panel, above the status bar) of both screenshots.
    Image a, b;
    ASSERT_TRUE(a.load(file("sw.png")));
    ASSERT_TRUE(b.load(file("nvdec.png")));
    ASSERT_EQ(a.width, b.width);
    ASSERT_EQ(a.height, b.height);
    EXPECT_EQ(ps.x0, pn.x0);
    EXPECT_EQ(ps.scale, pn.scale);
    long differ = 0, total = 0;
    double sum = 0;
    for (int y = 0; y < a.height - 40; ++y)
        for (int x = 0; x < static_cast<int>(pn.panel[0]); ++x) {
            ++total;
            const unsigned char *p = a.at(x, y), *q = b.at(x, y);
            const int d = std::abs(p[0] - q[0]) + std::abs(p[1] - q[1]) + std::abs(p[2] - q[2]);
            differ += d != 0;
            sum += d / 3.0;
        }
    std::printf("video area: %ld of %ld pixels differ, mean |diff| %.3f\n", differ, total, sum / total);
    if (!cuda_available())
        EXPECT_EQ(differ, 0) << "software fallback must show exactly the software decode's frame";
    else
        EXPECT_LT(sum / total, 3.0);
    EXPECT_GT(outline_hits(b, pn, pn.box.at(0), 60, 255, 90), 0.9) << "the box in the NVDEC run's screenshot";

    // A bad mode is refused before any window opens, as `track` refuses it.
    const auto bad = test::run_cli("gui --decode gpu --screenshot " + file("bad.png"), dir_->path());
    const auto bad_track = test::run_cli("track " + kSample + " --decode gpu", dir_->path());
    EXPECT_NE(bad.exit_code, 0);
    EXPECT_FALSE(bad.signalled);
    EXPECT_EQ(bad.exit_code, bad_track.exit_code) << bad.err;
    EXPECT_NE(bad.err.find("sw, nvdec or auto"), std::string::npos) << bad.err;
}

// The GUI tracks all targets with one MultiTracker and drops or re-selects one with
// remove_target: the targets left must track exactly as if the removed one had never been there.
TEST(GuiTracker, RemoveTargetLeavesTheOthersAsTheyWere) {
    SyntheticClipSpec spec;
    spec.width = 240;
    spec.height = 180;
    spec.frames = 12;
    const SyntheticScene scene(spec);
    std::vector<std::uint8_t> luma;
    auto frame = [&](int i) {
        scene.render(i, luma);
        return ImageView{luma.data(), spec.width, spec.height, static_cast<std::size_t>(spec.width),
                         MemorySpace::kHost};
    };
    const TruthBox t = scene.box(0);
    const BoxF moving{t.x, t.y, t.w, t.h}, still{150, 110, 36, 30}, other{20, 120, 30, 30};
    for (const char* kernel : {"cpu_fast", "auto"}) {
        TrackerOptions o;
        o.kernel = kernel;
        MultiTracker both(o), alone(o);
        std::string error;
        ASSERT_EQ(both.add_target(frame(0), other, &error), 0) << error;
        ASSERT_EQ(both.add_target(frame(0), moving, &error), 1) << error;
        ASSERT_EQ(both.add_target(frame(0), still, &error), 2) << error;
        ASSERT_EQ(alone.add_target(frame(0), moving, &error), 0) << error;
        ASSERT_EQ(alone.add_target(frame(0), still, &error), 1) << error;
        for (int i = 1; i < spec.frames; ++i) {
            const auto& rb = both.update(frame(i));
            ASSERT_EQ(rb.size(), static_cast<std::size_t>(both.size()));
            const std::vector<TrackResult> r_both(rb.begin(), rb.end());
            const auto& ra = alone.update(frame(i));
            const int first = both.size() - 2;  // the moving target's index in `both`
            // Bit for bit on the CPU; a GPU kernel may lay the atlas out differently around
            // the extra target, so allow float noise there.
            const double tol = both.on_gpu() ? 1e-3 : 0.0;
            for (int k = 0; k < 2; ++k) {
                EXPECT_NEAR(r_both[first + k].box.x, ra[k].box.x, tol) << kernel << " frame " << i << " target " << k;
                EXPECT_NEAR(r_both[first + k].box.y, ra[k].box.y, tol) << kernel << " frame " << i << " target " << k;
                EXPECT_NEAR(r_both[first + k].score, ra[k].score, tol) << kernel << " frame " << i << " target " << k;
            }
            if (i == 4) {
                both.remove_target(0);
                EXPECT_EQ(both.size(), 2);
            }
        }
        // Ids stay: the removed one is gone, the others keep theirs.
        EXPECT_FALSE(both.remove_target(0));
        EXPECT_EQ(both.ids(), (std::vector<TargetId>{1, 2}));
        // set_options keeps the kernel (and stream): only set_kernel swaps it.
        const Stream stream = both.stream();
        TrackerOptions changed = o;
        changed.kernel = "cpu_ref";
        changed.search_factor = 3.0;
        both.set_options(changed);
        EXPECT_EQ(both.kernel_name(), kernel);
        EXPECT_EQ(both.options().kernel, kernel);
        EXPECT_EQ(both.options().search_factor, 3.0);
        EXPECT_EQ(both.stream(), stream);
    }
}

// The GUI's recording goes through the CLI's video queue and annotate_frame(): every frame
// recorded comes back from the file, with the box drawn in the target's colour. Host RGB
// frames only (no GL needed: the frame sink is read back only for frames without host RGB).
TEST(GuiExport, RecordingWritesEveryFrameThroughTheVideoQueue) {
    TempDir dir("gui_export");
    GuiModel model;
    model.video_path = dir.path() + "/rec.mp4";
    EventLog log;
    GuiExport out(model, log);
    const Size size{160, 120};
    out.toggle_recording(true, 10.0, size);
    ASSERT_TRUE(out.recording()) << model.export_message;
    Frame f;
    f.width = size.width;
    f.height = size.height;
    f.rgb.assign(static_cast<std::size_t>(size.width) * 3 * size.height, 100);
    std::unique_ptr<FrameSink> sink = make_cpu_frame_sink();
    AnnotatedTarget t;
    t.box = {40, 30, 48, 40};
    t.color = {60, 255, 90};
    const int kFrames = 12;
    for (int i = 0; i < kFrames; ++i) {
        f.index = i;
        out.record(f, *sink, {t});
    }
    EXPECT_EQ(model.recorded_frames, kFrames);
    out.toggle_recording(true, 10.0, size);
    EXPECT_FALSE(out.recording());
    EXPECT_FALSE(model.export_error) << model.export_message;
    EXPECT_NE(model.export_message.find("(12 frames)"), std::string::npos) << model.export_message;

    std::string error;
    SourceOptions so;
    so.input = model.video_path;
    so.want_rgb = true;
    auto video = FrameSource::open(so, &error);
    ASSERT_TRUE(video) << error;
    Frame g;
    long n = 0;
    int green = 0;
    while (video->read(g) == ReadStatus::kFrame) {
        ++n;
        // The box's top edge (row 30, 2 px thick outwards) is green on the grey frame.
        const std::uint8_t* p = g.rgb.data() + (30 * g.width + 64) * 3;
        green = std::max(green, p[1] - p[0]);
    }
    EXPECT_EQ(n, kFrames);
    EXPECT_GT(green, 60) << "the box is not drawn";
}

}  // namespace
}  // namespace corrtrack
