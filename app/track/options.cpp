#include "app/track/options.h"

#include <cmath>
#include <cstdio>

#include "corrtrack/ncc_math.h"

namespace corrtrack {

const char* to_string(UpdatePolicy p) {
    switch (p) {
    case UpdatePolicy::kNone: return "none";
    case UpdatePolicy::kKeyframe: return "keyframe";
    case UpdatePolicy::kBlend: return "blend";
    }
    return "?";
}

bool parse_update_policy(const std::string& s, UpdatePolicy* out) {
    for (UpdatePolicy p : {UpdatePolicy::kNone, UpdatePolicy::kKeyframe, UpdatePolicy::kBlend})
        if (s == to_string(p)) {
            *out = p;
            return true;
        }
    return false;
}

namespace {

// "name must be in [lo, hi]" for a value outside it or not finite; empty otherwise.
std::string check(const char* name, double v, double lo, double hi) {
    if (std::isfinite(v) && v >= lo && v <= hi) return {};
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s must be in [%g, %g] (got %g)", name, lo, hi, v);
    return buf;
}

// The bounds that recur: an NCC score, a peak-to-sidelobe ratio, a fraction (a rate or weight).
std::string check_score(const char* name, double v) { return check(name, v, -1.0, 1.0); }
std::string check_psr(const char* name, double v) { return check(name, v, 0.0, 100.0); }
std::string check_fraction(const char* name, double v) { return check(name, v, 0.0, 1.0); }

}  // namespace

std::string validate(const TrackerOptions& o) {
    // The bounds keep every frame's work finite: 25 scales, windows up to 10x the box, a
    // template up to the kernels' limit.
    const std::string checks[] = {
        check("search factor", o.search_factor, 1.0, 10.0),
        check("window speed", o.window_speed, 0.0, 10.0),
        check("max template side", o.max_template_side, 4, kMaxTemplateSide),
        check("min template side", o.min_template_side, 0, kMaxTemplateSide / 4),
        check_fraction("blend rate", o.blend_rate),
        check("keyframe interval", o.keyframe_interval, 1, 1e6),
        check_score("update min score", o.update_min_score),
        check_psr("update min PSR", o.update_min_psr),
        check_score("lost score", o.lost_score),
        check_psr("lost PSR", o.lost_psr),
        check_psr("recover PSR", o.recover_psr),
        check_score("recover score", o.recover_score),
        check("scales", o.scales, 1, 25),
        check("scale step", o.scale_step, 1.0, 2.0),
        check_fraction("scale penalty", o.scale_penalty),
        check_fraction("scale rate", o.scale_rate),
        check_fraction("anchor", o.anchor),
        check_fraction("scale anchor", o.scale_anchor),
        check("motion penalty", o.motion_penalty, 0.0, 10.0),
        check_fraction("velocity gain", o.velocity_gain),
        check("memory", o.memory, 0, 16),
        check_fraction("gradient", o.gradient),
        check_fraction("colour", o.colour),
        check_fraction("colour rate", o.colour_rate),
        check("re-detection budget", o.redetect_budget, -1, 1e9),
        check("re-detection confirmation", o.redetect_confirm, 1, 100),
        check("re-detection margin", o.redetect_margin, 0.0, 2.0),
        check("min box side", o.min_box_side, 1.0, 1e4),
    };
    for (const std::string& c : checks)
        if (!c.empty()) return c;
    return {};
}

}  // namespace corrtrack
