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

void add_tracker_options(CLI::App& cmd, TrackerOptions& o) {
    // Ranges: those of validate() (app/track/options.cpp), which the commands also call after
    // parsing: wide enough for any sensible use, narrow enough that no value can exhaust memory
    // or time (a 10x window of a 256 px template is 2560 px; 25 scales are 25 searches).
    cmd.add_option("--kernel,-k", o.kernel, "correlation kernel (see `corrtrack kernels`); auto = fastest here")
        ->capture_default_str();
    add_ranged_option(cmd, "--search-factor", o.search_factor, "search window side as a multiple of the box side", 1.0,
                      10.0);
    add_ranged_option(cmd, "--min-template", o.min_template_side,
                      "the template's shorter side stays at least this (while its longer side fits 256)", 0,
                      kMaxTemplateSide / 4);
    add_ranged_option(cmd, "--max-template", o.max_template_side, "boxes larger than this are matched at reduced scale",
                      4, kMaxTemplateSide);
    cmd.add_option_function<std::string>(
        "--update",
        [&o](const std::string& s) {
            if (!parse_update_policy(s, &o.update))
                throw CLI::ValidationError("--update", "must be none, keyframe or blend");
        },
        "template update policy: none | keyframe | blend (default blend)");
    add_ranged_option(cmd, "--blend-rate", o.blend_rate, "weight of the new appearance in a blend update", 0.0, 1.0);
    add_ranged_option(cmd, "--keyframe-interval", o.keyframe_interval, "frames between keyframe updates", 1, 1000000);
    add_ranged_option(cmd, "--update-min-score", o.update_min_score, "update the template only above this NCC", -1.0,
                      1.0);
    add_ranged_option(cmd, "--lost-score", o.lost_score, "below this NCC the target is lost", -1.0, 1.0);
    add_ranged_option(cmd, "--recover-score", o.recover_score, "re-detection must reach this NCC", -1.0, 1.0);
    add_ranged_option(cmd, "--scales", o.scales, "scales searched per frame (1 = no scale search)", 1, 25);
    add_ranged_option(cmd, "--scale-penalty", o.scale_penalty, "score factor for picking a neighbouring scale", 0.0,
                      1.0);
    add_ranged_option(cmd, "--scale-rate", o.scale_rate, "share of each frame's scale estimate applied", 0.0, 1.0);
    add_ranged_option(cmd, "--anchor", o.anchor, "weight of the first frame's appearance kept in the template", 0.0,
                      1.0);
    add_ranged_option(cmd, "--motion-penalty", o.motion_penalty, "NCC cost of a jump to the search window's edge", 0.0,
                      10.0);
    add_ranged_option(cmd, "--scale-step", o.scale_step, "ratio between neighbouring scales", 1.0, 2.0);
    add_ranged_option(cmd, "--update-min-psr", o.update_min_psr, "learn only when the peak's PSR reaches this", 0.0,
                      100.0);
    add_ranged_option(cmd, "--lost-psr", o.lost_psr, "lost when the peak's PSR falls below this", 0.0, 100.0);
    add_ranged_option(cmd, "--recover-psr", o.recover_psr, "a re-detection's PSR must reach this", 0.0, 100.0);
    add_ranged_option(cmd, "--window-speed", o.window_speed, "window margin grows by this many frames of motion", 0.0,
                      10.0);
    cmd.add_option("--scale-fit", o.scale_fit, "sub-step scale estimate")->capture_default_str();
    add_ranged_option(cmd, "--velocity-gain", o.velocity_gain, "motion model gain (0: no prediction)", 0.0, 1.0);
    add_ranged_option(cmd, "--memory", o.memory, "templates kept besides the working one", 0, 16);
    add_ranged_option(cmd, "--scale-anchor", o.scale_anchor, "share of the first template in the scale pick", 0.0, 1.0);
    add_ranged_option(cmd, "--colour", o.colour, "largest weight of the colour cue in each match (0: off)", 0.0, 1.0);
    add_ranged_option(cmd, "--colour-rate", o.colour_rate, "learning rate of the colour model", 0.0, 1.0);
    add_ranged_option(cmd, "--gradient", o.gradient, "weight of the gradient channel in each match (0: grey only)", 0.0,
                      1.0);
    add_ranged_option(cmd, "--redetect-budget", o.redetect_budget, "re-detection positions per frame (-1 auto, 0 all)",
                      -1, 1000000000);
    add_ranged_option(cmd, "--redetect-confirm", o.redetect_confirm, "frames a re-detection must hold", 1, 100);
    add_ranged_option(cmd, "--redetect-margin", o.redetect_margin, "NCC lead of a re-detection over its runner-up", 0.0,
                      2.0);
    add_ranged_option(cmd, "--min-box-side", o.min_box_side, "smallest box side (pixels)", 1.0, 1e4);
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
