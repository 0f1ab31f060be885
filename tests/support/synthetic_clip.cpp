// Synthetic clips for the io, pipeline, tracker and CLI tests; see synthetic_clip.h.
#include "tests/support/synthetic_clip.h"

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>

#include "app/io/video_writer.h"

namespace corrtrack {
namespace {

constexpr int kSuper = 4;  // samples per pixel along each axis
constexpr double kTwoPi = 6.283185307179586;

// The 4x4 sample offsets are symmetric about the pixel centre, so the mean of a plane wave
// over them is the wave at the centre times the mean of cos(2 pi f offset) along x and y:
// exactly what 16 samples give, for the cost of one.
double sample_gain(double f) {
    double g = 0;
    for (int s = 0; s < kSuper; ++s) g += std::cos(kTwoPi * f * ((s + 0.5) / kSuper - 0.5));
    return g / kSuper;
}

template <typename Wave>
std::vector<Wave> random_waves(std::mt19937& rng, int count, double min_period, double max_period,
                               double total_amplitude) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::vector<Wave> waves(static_cast<std::size_t>(count));
    double sum = 0;
    for (Wave& w : waves) {
        const double angle = kTwoPi * unit(rng);
        const double period = min_period + (max_period - min_period) * unit(rng);
        w.fx = std::cos(angle) / period;
        w.fy = std::sin(angle) / period;
        w.phase = kTwoPi * unit(rng);
        w.amplitude = 0.5 + 0.5 * unit(rng);
        w.pixel_gain = sample_gain(w.fx) * sample_gain(w.fy);
        sum += w.amplitude;
    }
    for (Wave& w : waves) w.amplitude *= total_amplitude / sum;
    return waves;
}

std::vector<TruthBox> write_frames(const std::string& path, const SyntheticClipSpec& spec, std::string* error) {
    std::error_code ec;
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    VideoWriterOptions options;
    options.fps = spec.fps;
    options.crf = spec.crf;
    options.codec = spec.codec;
    auto writer = VideoWriter::open(path, {spec.width, spec.height}, options, error);
    if (!writer) return {};
    SyntheticScene scene(spec);
    std::vector<std::uint8_t> luma;
    for (int i = 0; i < spec.frames; ++i) {
        scene.render(i, luma);
        if (!writer->write_gray(luma.data(), static_cast<std::size_t>(spec.width), error)) return {};
    }
    if (!writer->close(error)) return {};
    return scene.boxes();
}

}  // namespace

SyntheticScene::SyntheticScene(const SyntheticClipSpec& spec) : spec_(spec) {
    std::mt19937 rng(spec.seed);
    // Object waves are finer than the object so it has structure inside; the background's are
    // coarser and different, so the object never matches the background well.
    object_waves_ = random_waves<Wave>(rng, 7, 5.0, 16.0, 90.0);
    background_waves_ = random_waves<Wave>(rng, 9, 9.0, 45.0, 80.0);
    background_.resize(static_cast<std::size_t>(spec.width) * spec.height);
    for (int y = 0; y < spec.height; ++y)
        for (int x = 0; x < spec.width; ++x)
            background_[static_cast<std::size_t>(y) * spec.width + x] =
                pixel_average(background_waves_, x + 0.5, y + 0.5);
}

double SyntheticScene::texture(const std::vector<Wave>& waves, double u, double v) {
    double value = 128.0;
    for (const Wave& w : waves) value += w.amplitude * std::sin(kTwoPi * (w.fx * u + w.fy * v) + w.phase);
    return value;
}

// Mean of the 4x4 samples of the pixel centred at (cu, cv); see sample_gain.
double SyntheticScene::pixel_average(const std::vector<Wave>& waves, double cu, double cv) {
    double value = 128.0;
    for (const Wave& w : waves)
        value += w.amplitude * w.pixel_gain * std::sin(kTwoPi * (w.fx * cu + w.fy * cv) + w.phase);
    return value;
}

TruthBox SyntheticScene::box(int frame) const {
    const double t = frame;
    const double phase = kTwoPi * t / spec_.wobble_period;
    // The centre moves as the unscaled box's would; the size scales about it.
    const double cx =
        spec_.start_x + spec_.object_width / 2.0 + spec_.velocity_x * t + spec_.wobble_amplitude * std::sin(phase);
    const double cy = spec_.start_y + spec_.object_height / 2.0 + spec_.velocity_y * t +
                      spec_.wobble_amplitude * std::sin(phase + 1.3);
    const double s = std::pow(spec_.scale_per_frame, t);
    TruthBox b;
    b.w = spec_.object_width * s;
    b.h = spec_.object_height * s;
    b.x = cx - b.w / 2;
    b.y = cy - b.h / 2;
    return b;
}

std::vector<TruthBox> SyntheticScene::boxes() const {
    std::vector<TruthBox> out;
    for (int i = 0; i < spec_.frames; ++i) out.push_back(box(i));
    return out;
}

void SyntheticScene::render(int frame, std::vector<std::uint8_t>& luma, bool noise) const {
    const int W = spec_.width, H = spec_.height;
    const TruthBox b = box(frame);
    // Object-local texture coordinates: scaled with the object when it changes size.
    const double inv = spec_.object_width / b.w;
    const bool scaled = spec_.scale_per_frame != 1.0;
    const int x0 = std::max(0, static_cast<int>(std::floor(b.x)));
    const int y0 = std::max(0, static_cast<int>(std::floor(b.y)));
    const int x1 = std::min(W, static_cast<int>(std::ceil(b.x + b.w)));
    const int y1 = std::min(H, static_cast<int>(std::ceil(b.y + b.h)));
    std::mt19937 rng(spec_.seed * 7919u + static_cast<std::uint32_t>(frame) * 104729u + 17u);
    std::normal_distribution<double> gauss(0.0, spec_.noise_sigma > 0 ? spec_.noise_sigma : 1.0);
    luma.resize(static_cast<std::size_t>(W) * H);
    for (int y = 0; y < H; ++y) {
        for (int x = 0; x < W; ++x) {
            double v = background_[static_cast<std::size_t>(y) * W + x];
            const bool fully_inside = x >= b.x && x + 1 <= b.x + b.w && y >= b.y && y + 1 <= b.y + b.h;
            if (fully_inside && !scaled) {
                v = pixel_average(object_waves_, x + 0.5 - b.x, y + 0.5 - b.y);
            } else if (x >= x0 && x < x1 && y >= y0 && y < y1) {  // on the edge, or scaled
                double sum = 0;
                for (int sy = 0; sy < kSuper; ++sy) {
                    const double py = y + (sy + 0.5) / kSuper;
                    for (int sx = 0; sx < kSuper; ++sx) {
                        const double px = x + (sx + 0.5) / kSuper;
                        const bool inside = px >= b.x && px < b.x + b.w && py >= b.y && py < b.y + b.h;
                        sum += inside ? texture(object_waves_, (px - b.x) * inv, (py - b.y) * inv)
                                      : texture(background_waves_, px, py);
                    }
                }
                v = sum / (kSuper * kSuper);
            }
            if (noise && spec_.noise_sigma > 0) v += gauss(rng);
            luma[static_cast<std::size_t>(y) * W + x] = static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
        }
    }
}

std::vector<TruthBox> write_synthetic_clip(const std::string& path, const SyntheticClipSpec& spec, std::string* error) {
    return write_frames(path, spec, error);
}

std::vector<TruthBox> write_synthetic_sequence(const std::string& pattern, const SyntheticClipSpec& spec,
                                               std::string* error) {
    return write_frames(pattern, spec, error);
}

std::vector<TruthBox> write_otb_folder(const std::string& dir, const SyntheticClipSpec& spec, std::string* error) {
    std::vector<TruthBox> truth = write_frames(dir + "/img/%05d.jpg", spec, error);
    if (truth.empty()) return truth;
    std::ofstream gt(dir + "/groundtruth_rect.txt");
    char line[128];
    for (const TruthBox& b : truth) {
        std::snprintf(line, sizeof line, "%.4f,%.4f,%.4f,%.4f\n", b.x + 1, b.y + 1, b.w, b.h);
        gt << line;
    }
    if (!gt) {
        if (error) *error = "cannot write " + dir + "/groundtruth_rect.txt";
        return {};
    }
    return truth;
}

double mean_abs_diff(const std::uint8_t* a, std::size_t pitch_a, const std::uint8_t* b, std::size_t pitch_b, int w,
                     int h) {
    if (w <= 0 || h <= 0) return 0;
    double sum = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) sum += std::abs(int(a[y * pitch_a + x]) - int(b[y * pitch_b + x]));
    return sum / (static_cast<double>(w) * h);
}

TempDir::TempDir(const std::string& tag) {
    const char* base = std::getenv("TMPDIR");
    std::string templ = std::string(base && *base ? base : "/tmp") + "/corrtrack-" + tag + "-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) throw std::runtime_error("mkdtemp failed for " + templ);
    path_ = buf.data();
}

TempDir::~TempDir() {
    if (std::getenv("CORRTRACK_KEEP_TEMP")) return;
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
}

}  // namespace corrtrack
