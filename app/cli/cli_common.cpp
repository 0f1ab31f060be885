#include "app/cli/cli_common.h"

#include <cstdlib>

#include <cerrno>
#include <cmath>
#include <cstdio>

#include "corrtrack/ncc_math.h"

namespace corrtrack {

void add_camera_options(CLI::App& cmd, CameraRequest& request) {
    CameraRequest* r = &request;
    cmd.add_option_function<std::string>(
           "--camera-size",
           [r](const std::string& s) {
               int w = 0, h = 0;
               std::string why;
               if (!parse_camera_size(s, &w, &h, &why)) throw CLI::ValidationError("--camera-size", why);
               r->size = std::to_string(w) + "x" + std::to_string(h);
           },
           "camera frame size WIDTHxHEIGHT (e.g. 1920x1080; default: the camera's; see `corrtrack cameras`)")
        ->type_name("WxH");
    cmd.add_option("--camera-fps", request.fps, "camera frame rate (default: the camera's)")
        ->check(finite_range(0.1, kMaxCameraFps))
        ->type_name("N");
    cmd.add_option_function<std::string>(
           "--camera-format",
           [r](const std::string& s) {
               std::string why;
               if (!parse_camera_format(s, &r->format, &why)) throw CLI::ValidationError("--camera-format", why);
           },
           "camera pixel format: " + camera_format_names() +
               " (most webcams give 1080p only as mjpeg; default: the camera's)")
        ->type_name("NAME");
}

bool check_camera_input(const std::string& input, const CameraRequest& request, std::string* error) {
    if (request.empty() || input.rfind("/dev/video", 0) == 0) return true;
    *error = "--camera-size, --camera-fps and --camera-format apply to cameras (/dev/videoN), not '" + input + "'";
    return false;
}

CLI::Validator finite_range(double lo, double hi) {
    char range[96];
    std::snprintf(range, sizeof range, "%g to %g", lo, hi);
    const std::string text = range;
    return CLI::Validator(
        [lo, hi, text](std::string& s) -> std::string {
            char* end = nullptr;
            const double v = std::strtod(s.c_str(), &end);
            if (s.empty() || end == s.c_str() || *end != '\0') return "'" + s + "' is not a number";
            if (!std::isfinite(v)) return "'" + s + "' is not a finite number (allowed: " + text + ")";
            if (v < lo || v > hi) return "'" + s + "' is outside the allowed range " + text;
            return {};
        },
        "in " + text);
}

CLI::Validator frame_count() {
    return CLI::Validator(
        [](std::string& s) -> std::string {
            char* end = nullptr;
            errno = 0;
            const long long v = std::strtoll(s.c_str(), &end, 10);
            if (s.empty() || end == s.c_str() || *end != '\0' || errno == ERANGE)
                return "'" + s + "' is not a whole number";
            if (v == -1 || (v >= 1 && v <= kMaxFrames)) return {};
            if (v == 0) return "0 frames would process nothing: give at least 1 (or -1 for all)";
            return "'" + s + "' is outside the allowed range: -1 (all) or 1 to " + std::to_string(kMaxFrames);
        },
        "-1 (all) or >= 1");
}

void add_no_cache_option(CLI::App& cmd) {
    // auto reads CORRTRACK_NO_CACHE when it first looks a choice up, after parsing: the flag
    // is the variable, so the library needs no option of its own.
    cmd.add_flag_callback(
        "--no-cache", [] { setenv("CORRTRACK_NO_CACHE", "1", 1); },
        "neither read nor write auto's timing cache (CORRTRACK_CACHE_DIR, else ~/.cache/corrtrack; same as "
        "CORRTRACK_NO_CACHE=1): every new shape is timed again");
}

void add_tracker_options(CLI::App& cmd, TrackerOptions& o) {
    // Ranges: tracker_option_ranges() (app/track/options.cpp), which validate() checks too.
    cmd.add_option("--kernel,-k", o.kernel, "correlation kernel (see `corrtrack kernels`); auto = fastest here")
        ->capture_default_str();
    cmd.add_option_function<std::string>(
        "--update",
        [&o](const std::string& s) {
            if (!parse_update_policy(s, &o.update))
                throw CLI::ValidationError("--update", "must be none, keyframe or blend");
        },
        "template update policy: none | keyframe | blend (default blend)");
    cmd.add_option("--scale-fit", o.scale_fit, "sub-step scale estimate")->capture_default_str();
    // The numeric options: flags, help and ranges from the tracker's own table (options.h).
    for (const TrackerOptionRange& r : tracker_option_ranges()) {
        if (r.real)
            add_ranged_option(cmd, r.flag, o.*r.real, r.help, r.lo, r.hi);
        else
            add_ranged_option(cmd, r.flag, o.*r.integer, r.help, static_cast<int>(r.lo), static_cast<int>(r.hi));
    }
    // Backstop: all values together through the tracker's own check, so an option declared
    // without a range above is still a usage error (exit 2), never a failure at run time.
    cmd.parse_complete_callback([&o] {
        if (const std::string bad = validate(o); !bad.empty()) throw CLI::ValidationError("tracker options", bad);
    });
}

void StageSamples::add(const StageTimes& t) {
    decode.push_back(t.decode_ms);
    upload.push_back(t.upload_ms);
    correlate.push_back(t.correlate_ms);
    peak.push_back(t.peak_ms);
    render.push_back(t.render_ms);
    latency.push_back(t.latency_ms);
}

std::string StageSamples::summary() const {
    std::string s;
    char buf[96];
    const std::pair<const char*, const std::vector<double>*> stages[] = {
        {"decode", &decode}, {"upload", &upload}, {"correlate", &correlate},
        {"peak", &peak},     {"render", &render}, {"latency", &latency}};
    for (const auto& [name, v] : stages) {
        std::snprintf(buf, sizeof buf, "  %-10s median %8.3f ms   p95 %8.3f ms\n", name, median(*v),
                      percentile(*v, 95));
        s += buf;
    }
    return s;
}

}  // namespace corrtrack
