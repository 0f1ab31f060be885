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

}  // namespace

const std::vector<TrackerOptionRange>& tracker_option_ranges() {
    // The bounds keep every frame's work finite: 25 scales, windows up to 10x the box (a 10x
    // window of a 256 px template is 2560 px), a template up to the kernels' limit; scores are
    // NCC values, PSRs up to 100, rates and weights fractions.
    static const std::vector<TrackerOptionRange> rows = {
        {"search_factor", "--search-factor", "search factor", "search window side as a multiple of the box side", 1.0,
         10.0, &TrackerOptions::search_factor, nullptr},
        {"window_speed", "--window-speed", "window speed", "window margin grows by this many frames of motion", 0.0,
         10.0, &TrackerOptions::window_speed, nullptr},
        {"max_template_side", "--max-template", "max template side",
         "boxes larger than this are matched at reduced scale", 4, kMaxTemplateSide, nullptr,
         &TrackerOptions::max_template_side},
        {"min_template_side", "--min-template", "min template side",
         "the template's shorter side stays at least this (while its longer side fits 256)", 0, kMaxTemplateSide / 4,
         nullptr, &TrackerOptions::min_template_side},
        {"blend_rate", "--blend-rate", "blend rate", "weight of the new appearance in a blend update", 0.0, 1.0,
         &TrackerOptions::blend_rate, nullptr},
        {"keyframe_interval", "--keyframe-interval", "keyframe interval", "frames between keyframe updates", 1, 1e6,
         nullptr, &TrackerOptions::keyframe_interval},
        {"update_min_score", "--update-min-score", "update min score", "update the template only above this NCC", -1.0,
         1.0, &TrackerOptions::update_min_score, nullptr},
        {"update_min_psr", "--update-min-psr", "update min PSR", "learn only when the peak's PSR reaches this", 0.0,
         100.0, &TrackerOptions::update_min_psr, nullptr},
        {"update_relative", "--update-relative", "update relative",
         "also learn at this share of the target's running mean NCC (0: off)", 0.0, 1.0,
         &TrackerOptions::update_relative, nullptr},
        {"lost_score", "--lost-score", "lost score", "below this NCC the target is lost", -1.0, 1.0,
         &TrackerOptions::lost_score, nullptr},
        {"lost_psr", "--lost-psr", "lost PSR", "lost when the peak's PSR falls below this", 0.0, 100.0,
         &TrackerOptions::lost_psr, nullptr},
        {"recover_psr", "--recover-psr", "recover PSR", "a re-detection's PSR must reach this", 0.0, 100.0,
         &TrackerOptions::recover_psr, nullptr},
        {"recover_score", "--recover-score", "recover score", "re-detection must reach this NCC", -1.0, 1.0,
         &TrackerOptions::recover_score, nullptr},
        {"scales", "--scales", "scales", "scales searched per frame (1 = no scale search)", 1, 25, nullptr,
         &TrackerOptions::scales},
        {"scale_step", "--scale-step", "scale step", "ratio between neighbouring scales", 1.0, 2.0,
         &TrackerOptions::scale_step, nullptr},
        {"scale_penalty", "--scale-penalty", "scale penalty", "score factor for picking a neighbouring scale", 0.0, 1.0,
         &TrackerOptions::scale_penalty, nullptr},
        {"scale_rate", "--scale-rate", "scale rate", "share of each frame's scale estimate applied", 0.0, 1.0,
         &TrackerOptions::scale_rate, nullptr},
        {"anchor", "--anchor", "anchor", "weight of the first frame's appearance kept in the template", 0.0, 1.0,
         &TrackerOptions::anchor, nullptr},
        {"scale_anchor", "--scale-anchor", "scale anchor", "share of the first template in the scale pick", 0.0, 1.0,
         &TrackerOptions::scale_anchor, nullptr},
        {"motion_penalty", "--motion-penalty", "motion penalty", "NCC cost of a jump to the search window's edge", 0.0,
         10.0, &TrackerOptions::motion_penalty, nullptr},
        {"velocity_gain", "--velocity-gain", "velocity gain", "motion model gain (0: no prediction)", 0.0, 1.0,
         &TrackerOptions::velocity_gain, nullptr},
        {"memory", "--memory", "memory", "templates kept besides the working one", 0, 16, nullptr,
         &TrackerOptions::memory},
        {"gradient", "--gradient", "gradient", "weight of the gradient channel in each match (0: grey only)", 0.0, 1.0,
         &TrackerOptions::gradient, nullptr},
        {"colour", "--colour", "colour", "largest weight of the colour cue in each match (0: off)", 0.0, 1.0,
         &TrackerOptions::colour, nullptr},
        {"colour_rate", "--colour-rate", "colour rate", "learning rate of the colour model", 0.0, 1.0,
         &TrackerOptions::colour_rate, nullptr},
        {"colour_extent", "--colour-extent", "colour extent",
         "rate at which the reported box's size follows the colour model's extent (0: off)", 0.0, 1.0,
         &TrackerOptions::colour_extent, nullptr},
        {"distractor_weight", "--distractor-weight", "distractor weight",
         "weight of the look-alike term in each match (0: off)", 0.0, 1.0, &TrackerOptions::distractor_weight, nullptr},
        {"lookalike_claim", "--lookalike-claim", "look-alike claim",
         "NCC at which a still look-alike claims its place from the target (0: never)", 0.0, 1.0,
         &TrackerOptions::lookalike_claim, nullptr},
        {"filter", "--filter", "filter", "largest weight of the correlation filter in each match (0: off)", 0.0, 1.0,
         &TrackerOptions::filter, nullptr},
        {"filter_rate", "--filter-rate", "filter rate", "learning rate of the correlation filter", 0.0, 1.0,
         &TrackerOptions::filter_rate, nullptr},
        {"filter_balance", "--filter-balance", "filter balance",
         "the NCC map's peak-to-sidelobe ratio counts this many times the filter's", 0.0, 100.0,
         &TrackerOptions::filter_balance, nullptr},
        {"filter_support", "--filter-support", "filter support",
         "the correlation filter is zero beyond this many times the box's sides around the target (0: unconstrained)",
         0.0, 10.0, &TrackerOptions::filter_support, nullptr},
        {"cue_targets", "--cue-targets", "cue targets",
         "colour, look-alike, filter and scale-anchor cues while the tracker has at most this many targets (0: never)",
         0, 1e6, nullptr, &TrackerOptions::cue_targets},
        {"redetect_budget", "--redetect-budget", "re-detection budget",
         "re-detection positions per frame (-1 auto, 0 the whole frame, upsampled ones in bands of its size)", -1, 1e9,
         nullptr, &TrackerOptions::redetect_budget},
        {"redetect_confirm", "--redetect-confirm", "re-detection confirmation", "frames a re-detection must hold", 1,
         100, nullptr, &TrackerOptions::redetect_confirm},
        {"redetect_margin", "--redetect-margin", "re-detection margin", "NCC lead of a re-detection over its runner-up",
         0.0, 2.0, &TrackerOptions::redetect_margin, nullptr},
        {"min_box_side", "--min-box-side", "min box side", "smallest box side (pixels)", 1.0, 1e4,
         &TrackerOptions::min_box_side, nullptr},
        {"core", "--core", "core",
         "share of the box's sides the tracker models, about its centre (reported boxes keep the given size)", 0.3, 1.0,
         &TrackerOptions::core, nullptr},
    };
    return rows;
}

std::string validate(const TrackerOptions& o) {
    for (const TrackerOptionRange& r : tracker_option_ranges()) {
        const double v = r.real ? o.*r.real : o.*r.integer;
        if (std::string bad = check(r.label, v, r.lo, r.hi); !bad.empty()) return bad;
    }
    return {};
}

}  // namespace corrtrack
