#include "tests/support/gui_harness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <stb_image.h>

namespace corrtrack::test {
namespace {

bool g_display_available = false;
std::string g_display_why_not = "no display";

// A display for the whole test program: $DISPLAY when set, else an Xvfb of our own on a free
// display number (Xvfb -displayfd picks it, so parallel test runs do not collide).
class XDisplay : public ::testing::Environment {
public:
    void SetUp() override {
        if (const char* d = std::getenv("DISPLAY"); d && *d) {
            g_display_available = true;
            return;
        }
        if (!have_program("Xvfb")) {
            g_display_why_not = "no $DISPLAY and no Xvfb (Debian: xvfb)";
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
            g_display_why_not = "Xvfb did not start";
            return;
        }
        display_ = ":" + number.substr(0, number.find('\n'));
        setenv("DISPLAY", display_.c_str(), 1);
        g_display_available = true;
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
};

[[maybe_unused]] ::testing::Environment* const kDisplay = ::testing::AddGlobalTestEnvironment(new XDisplay);

}  // namespace

bool have_program(const char* name) {
    return std::system(("command -v " + std::string(name) + " >/dev/null 2>&1").c_str()) == 0;
}

bool display_available() { return g_display_available; }
const std::string& display_why_not() { return g_display_why_not; }

bool Image::load(const std::string& path) {
    int c = 0;
    unsigned char* p = stbi_load(path.c_str(), &width, &height, &c, 3);
    if (!p) return false;
    rgb.assign(p, p + static_cast<std::size_t>(width) * height * 3);
    stbi_image_free(p);
    return true;
}

int dist2(const unsigned char* p, int r, int g, int b) {
    return (p[0] - r) * (p[0] - r) + (p[1] - g) * (p[1] - g) + (p[2] - b) * (p[2] - b);
}

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

std::vector<nlohmann::json> read_log(const std::string& path) {
    std::vector<nlohmann::json> events;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line))
        if (!line.empty() && line.back() == '}') events.push_back(nlohmann::json::parse(line, nullptr, false));
    return events;
}

}  // namespace corrtrack::test
