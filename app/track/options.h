// The tracker's settings: one struct shared by the CLI, the GUI, the evaluation and the
// Python binding, with one range check.
// Thread rules: plain values.
#pragma once

#include <string>
#include <vector>

namespace corrtrack {

enum class UpdatePolicy { kNone, kKeyframe, kBlend };
const char* to_string(UpdatePolicy p);
bool parse_update_policy(const std::string& s, UpdatePolicy* out);

struct TrackerOptions {
    std::string kernel = "auto";
    // Per-stage times (upload, correlate, peak) in every result. On the GPU they cost four
    // timed events a search; eval, which reports none, turns them off.
    bool stage_times = true;
    // Search window side = factor x the box's longer side (both axes), plus the motion
    // prediction's uncertainty: thin and fast targets stay inside it.
    double search_factor = 2.5;
    double window_speed = 0.0;   // the window's margin also grows by this many frames of the
                                 // target's recent speed (fast targets stay inside it)
    int max_template_side = 32;  // larger boxes are matched at a reduced scale
    int min_template_side = 12;  // ... but never so reduced that the shorter side falls
                                 // below this (thin targets; 0: no floor)
    UpdatePolicy update = UpdatePolicy::kBlend;
    double blend_rate = 0.08;        // weight of the new appearance in a blend update
    int keyframe_interval = 25;      // frames between keyframe updates and memory snapshots
    double update_min_score = 0.7;   // update the template only when this sure
    double update_min_psr = 3.0;     // ... and when the peak stands out this much (PSR)
    double update_relative = 0.8;    // ... or, where that NCC is out of reach, at this share
                                     // of the target's running mean NCC (never below
                                     // lost_score; 0: the fixed bar alone)
    double lost_score = 0.3;         // below this the target counts as lost
    double lost_psr = 2.0;           // ... or below this peak-to-sidelobe ratio
    double recover_score = 0.5;      // a re-detection must reach this to resume tracking
    double recover_psr = 3.0;        // ... and stand out this much (PSR)
    int scales = 3;                  // scales searched per frame (1 = none)
    double scale_step = 1.04;        // ratio between neighbouring scales
    double scale_penalty = 0.985;    // score factor for a scale change (prefers staying put)
    double scale_rate = 0.3;         // share of a frame's scale pick applied (smooths noise)
    double scale_anchor = 0.5;       // share of the first frame's template in the scale pick:
                                     // it is matched at every scale too, and the scale
                                     // follows the blend of both (learnt background cannot
                                     // drag the scale away)
    bool scale_fit = true;           // sub-step scale estimate (parabola over neighbouring steps)
    double anchor = 0.2;             // weight of the first frame's appearance kept in the
                                     // working template, against drift from blend updates
    double motion_penalty = 0.2;     // NCC subtracted at the search window's edge, growing
                                     // with the square of the distance from the prediction
    double velocity_gain = 0.0;      // motion model: share of each frame's displacement taken
                                     // into the velocity (0: search around the last centre)
    double colour = 0.5;             // largest weight of the colour cue in every match
                                     // (colour_model.h; scaled by how well it separates the
                                     // target from its surroundings; 0: off)
    double colour_rate = 0.04;       // learning rate of the colour model
    double colour_extent = 0.05;     // the reported box's size follows the colour model's
                                     // view of the target's extent at this rate a frame
                                     // (an output head, see Target::refine_size; 0: off)
    double distractor_weight = 1.0;  // weight of the look-alike term in every match: a
                                     // position matching a look-alike seen beside the
                                     // target better than the target ranks lower (0: off)
    double lookalike_claim = 0.5;    // a look-alike found again at this NCC or more where it
                                     // stood, not moving, claims its place: the target's
                                     // search skips it (search.h; 0: never)
    double filter = 0.95;            // largest weight of the correlation filter's map in every
                                     // match (correlation_filter.h; each map weighted by its
                                     // peak-to-sidelobe ratio, this the cap; 0: off)
    double filter_rate = 0.05;       // learning rate of the correlation filter
    double filter_balance = 1.0;     // the NCC map's PSR counts this many times the filter's
    double filter_support = 0.8;     // the filter is zero beyond this many times the box's
                                     // sides around the target (0: unconstrained)
    int cue_targets = 8;             // the colour and look-alike cues apply while a tracker
                                     // has at most this many targets (0: never; the filter
                                     // and the scale anchor too): their work
                                     // per search runs on the host, and on the GPU a crowd
                                     // of 256 targets fell from 765 to 47 fps with them
    double gradient = 0.0;           // weight of the gradient channel in every match (0: grey
                                     // levels only; 1: edges only), see gradient.h
    int memory = 0;                  // confident keyframes kept beside the first template,
                                     // all matched every frame (0: the first template only)
    int redetect_budget = -1;        // re-detection positions searched per frame (-1: the
                                     // backend decides; 0: the whole frame every frame, at
                                     // most the frame's own positions: an upsampled one in bands)
    int redetect_confirm = 3;        // frames a re-detection must repeat before it is taken
    double redetect_margin = 0.05;   // NCC a re-detection must lead its runner-up by
    double min_box_side = 6;         // the box never shrinks below this (pixels)
    double core = 0.9;               // share of the given box's sides the tracker models: its
                                     // centre (a box's edges hold background for most
                                     // targets); boxes are reported at the given size (1: all)
    bool keep_maps = true;           // GPU path: bring the chosen maps to the host (heatmaps)
    bool keep_device_maps = false;   // GPU path: keep each target's chosen map on the device
                                     // too (interop display without a host round trip)
};

// Empty when every value is in range, else what is wrong (one line).
std::string validate(const TrackerOptions& o);

// One row per numeric option, the one place its range is written: validate(), the CLI's
// flags (add_tracker_options) and the Python keywords (python/src/tracker.cpp) all read it.
// Exactly one of `real` and `integer` is set.
struct TrackerOptionRange {
    const char* field;  // the TrackerOptions member, also the Python keyword
    const char* flag;   // the CLI's
    const char* label;  // what validate() calls it
    const char* help;   // the CLI's help line
    double lo, hi;      // ends included
    double TrackerOptions::*real;
    int TrackerOptions::*integer;
};
const std::vector<TrackerOptionRange>& tracker_option_ranges();

}  // namespace corrtrack
