// The tracking policy of one target, written once for every backend: predict where the
// target is, ask for searches (every scale of the working template, the template memory),
// pick the candidate, settle the box, learn the appearance, and when the match fails, look
// for the target again over the frame until a re-detection holds for a few frames.
// Thread rules: plain state, driven by the MultiTracker's thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/track/colour_model.h"
#include "app/track/correlation_filter.h"
#include "app/track/options.h"
#include "app/track/search.h"
#include "app/track/types.h"

namespace corrtrack {

// One template: host pixels at the target's template size, with the key and version the
// backends cache by.
struct TemplateSlot {
    std::uint64_t key = 0;
    std::uint64_t version = 0;
    Size size;
    std::vector<std::uint8_t> pixels;
    std::vector<std::uint8_t> gradient;  // gradient channel of pixels (empty when off)
    TemplateRef ref() const {
        const std::size_t pitch = static_cast<std::size_t>(size.width);
        TemplateRef r{key, version, {pixels.data(), size.width, size.height, pitch}, {}};
        if (!gradient.empty()) r.gradient = {gradient.data(), size.width, size.height, pitch};
        return r;
    }
    // Sets pixels (and the gradient channel when `with_gradient`) and bumps the version.
    void assign(const std::uint8_t* p, Size s, bool with_gradient);
};

class Target {
public:
    // The template size and working scale for `box`; the caller samples template_patch()
    // and hands the pixels to init().
    Target(TargetId id, const TrackerOptions& o, const BoxF& box, Size frame);
    SearchRequest template_patch() const;
    // False + *error when the patch is flat (nothing to correlate).
    bool init(const std::uint8_t* pixels, std::string* error);

    TargetId id() const { return id_; }
    const TrackResult& result() const { return result_; }
    const BoxF& box() const { return box_; }  // the tracked core (TrackerOptions::core)
    // Keys of every template this target has had a backend cache (for forget()).
    std::vector<std::uint64_t> template_keys() const;

    // One frame: plan_track, then (when wants_redetect) plan_redetect, each followed by the
    // hits of the requests it added, in order; then settle.
    void begin_frame();
    // The requests plan_track makes this frame; it fills exactly that many slots from `slots`
    // (counted first, so that a crowd's targets plan in parallel into one pass).
    std::size_t track_requests(const TrackerOptions& o) const;
    void plan_track(const TrackerOptions& o, Size frame, SearchRequest* slots);
    void take_track(const TrackerOptions& o, const RankedPeak* hits, std::size_t first_request);
    bool wants_redetect() const { return redetect_; }
    // A re-detection in progress: a candidate that must hold for a few frames.
    bool has_lead() const { return has_lead_; }
    // The tracker left this frame's re-detection out (a per-frame limit over many lost
    // targets): the target settles on its local search alone and keeps its lead for later.
    void skip_redetect() { redetect_ = false; }
    void plan_redetect(const TrackerOptions& o, Size frame, std::vector<SearchRequest>& out);
    void take_redetect(const TrackerOptions& o, const RankedPeak* hits, std::size_t first_request);
    // Position, scale and state for this frame. Appends the patches to learn from (the new
    // box's appearance, a look-alike's) to `patches`, each with its kind to `kinds`; they
    // are sampled from this frame and handed to apply_sample at the next.
    enum SampleKind { kAppearance = 0, kLookalike = 1, kLookalikeRef = 2, kFilterWindow = 3 };
    void settle(const TrackerOptions& o, Size frame, std::vector<SearchRequest>& patches, std::vector<int>& kinds);
    void apply_sample(const TrackerOptions& o, int kind, const std::uint8_t* pixels);
    // The colour model learns from the settled box (host frames; after init with rate 1,
    // after settle when colour_due()).
    void learn_colour(const FrameView& frame, float rate) { colour_.learn(frame, box_, rate); }
    bool colour_due() const { return colour_due_; }
    // The reported box's size from the colour model's extent (ColourModel::extent_log_scale),
    // smoothed at `rate` a frame; without an opinion (no colour model) it eases back to the
    // tracker's own size; nothing while the cues are off.
    // An output head: the template, the scale searched and the next search are unchanged.
    void refine_size(const FrameView& frame, float rate);
    // The colour and look-alike cues apply to this frame's searches (MultiTracker turns them
    // off for crowds: see TrackerOptions::cue_targets).
    void set_cues(bool on) { cues_ = on; }

    // The search whose map was chosen this frame: pass 0 (tracking) or 1 (re-detection) and
    // the request's index in that pass; -1 when none ran.
    int chosen_pass() const { return chosen_pass_; }
    std::size_t chosen_request() const { return chosen_request_; }
    const BoxF& chosen_region() const { return chosen_region_; }

private:
    struct Candidate {
        double cx = 0, cy = 0, scale = 1;
        float score = -2, ranked = -2, psr = 0, second = -2;
        int templ = -1;  // which slot matched (0: working)
        int step = 0;
        bool scaled = false;  // searched at a scale other than the current one
        std::size_t request = 0;
        BoxF region;                     // where the map's origin window lies, for display
        float rival = -2, rival_of = 0;  // a look-alike in the same map (RankedPeak)
        float lookalike = -2;            // the best known look-alike's NCC here
        double rival_cx = 0, rival_cy = 0;
    };
    // A look-alike seen beside the target: its appearance at the target's template size.
    struct Lookalike {
        TemplateSlot slot;
        double cx = 0, cy = 0;  // where it was last seen
        long seen = -1;         // frame it was last seen (-1: empty)
    };
    struct Planned {  // what a request of this frame searched
        int templ = 0;
        int step = 0;  // scale = current scale x scale_step^step
        bool scaled = false;
        bool scale_check = false;  // the first template, matched for the scale pick only
        // Where its patch lay (the request's ox, oy, scale and patch: the request itself, with
        // its template and cue references, is a few hundred bytes, copied once into the pass).
        double ox = 0, oy = 0, scale = 1;
        Size patch;
    };

    Candidate candidate(const TrackerOptions& o, const Planned& p, const RankedPeak& hit, std::size_t request) const;
    bool lookalike_live(const Lookalike& l) const;
    // Whether the first template weighs this frame's scale pick (scale_anchor): with the cues,
    // as a crowd's targets track on the working template alone.
    bool anchored(const TrackerOptions& o) const { return scale_anchor_ > 0 && o.scales / 2 > 0 && cues_; }
    void note_lookalike(std::vector<SearchRequest>& patches, std::vector<int>& kinds);
    void follow_lookalikes(const RankedPeak& centre, const Planned& p);
    // Where in the frame the template centre lies at position (map_x, map_y) of p's map.
    double centre_x(const Planned& p, double map_x) const { return p.ox + (map_x + templ_size_.width / 2.0) * p.scale; }
    double centre_y(const Planned& p, double map_y) const {
        return p.oy + (map_y + templ_size_.height / 2.0) * p.scale;
    }
    void add_request(SearchRequest& r, int templ, double cx, double cy, int step, double scale, Size patch,
                     double penalty);
    std::vector<const TemplateSlot*> searched_templates() const;
    Size window(const TrackerOptions& o, Size frame) const;
    void clamp_to_frame(Size frame);
    void set_box();
    // `core` at the size the caller gave (times `factor`), about its centre, clipped to the
    // frame: the reported box.
    BoxF reported(const BoxF& core, double factor, Size frame) const;

    TargetId id_;
    Size templ_size_;
    double scale_ = 1;  // frame pixels per template pixel
    double min_scale_ = 0, max_scale_ = 0;
    double cx_ = 0, cy_ = 0, vx_ = 0, vy_ = 0;
    // Running mean of the chosen NCC over tracked frames (0: none yet), for update_relative.
    double score_mean_ = 0;
    static constexpr double kScoreMeanRate = 0.05;
    double speed_ = 0;  // running mean of the displacement per frame (pixels)
    bool lost_ = false;
    long frames_ = 0;
    BoxF box_;
    double report_w_ = 1, report_h_ = 1;  // the given box's sides over the core's
    TrackResult result_;

    TemplateSlot working_;  // what is matched at every scale, learnt by blending
    TemplateSlot first_;    // the first frame's template (scale_anchor)
    float scale_anchor_ = 0;
    std::vector<float> appearance_;  // its running blend, before quantisation
    std::vector<float> initial_;     // the first frame's appearance (anchor)
    float anchor_ = 0;
    float gradient_ = 0;           // weight of the gradient channel (0: off)
    float distractor_weight_ = 0;  // weight of the look-alike term (0: off)
    float lookalike_claim_ = 0;    // NCC at which a still look-alike claims its place (0: never)
    // A look-alike counts when its hill reaches this in the NCC map and this share of the
    // target's; it is matched for this many frames after it was last noted.
    static constexpr float kLookalikeMin = 0.5f;
    static constexpr float kLookalikeShare = 0.75f;
    static constexpr long kLookalikeFrames = 50;
    std::vector<std::uint8_t> blended_;
    double extent_log_ = 0;  // refine_size's smoothed log factor
    std::vector<double> extent_scratch_;
    std::vector<TemplateSlot> memory_;  // [0] the first template, then confident keyframes
    std::size_t next_keyframe_ = 1;     // memory slot the next keyframe replaces

    // This frame.
    std::vector<Planned> planned_;
    Candidate best_;                    // best tracking candidate
    Candidate short_, long_;            // best of the working template, of the memory
    std::vector<float> step_ranked_;    // the working template's best ranked NCC per scale step
    std::vector<float> first_ranked_;   // ... and the first template's (scale_anchor)
    std::vector<Candidate> step_best_;  // the working template's candidate per scale step
    Candidate redetected_;              // best re-detection candidate
    bool weak_ = false;                 // the local match is not sure enough to follow
    bool redetect_ = false;
    int chosen_pass_ = -1;
    std::size_t chosen_request_ = 0;
    BoxF chosen_region_;
    std::vector<Lookalike> lookalikes_;  // SearchRequest::kMaxDistractors slots
    int lookalike_due_ = -1;             // the slot the next look-alike patch fills
    double lookalike_ref_ = 0;           // the box's NCC with the first appearance, then
    ColourModel colour_;
    CorrelationFilter filter_;   // learnt from sure frames' windows (cues only)
    FilterCue filter_cue_;       // this frame's filter cue (from the filter before the frame)
    bool filter_due_ = false;    // this frame's window is sure enough to train the filter
    Size filter_window_;         // ... its size
    Rect filter_inside_;         // ... and its part inside the frame
    ColourCue cue_;              // this frame's colour cue (from the model before the frame)
    bool cues_ = true;           // colour and look-alikes apply this frame (few targets)
    bool colour_due_ = false;    // this frame's box is sure enough to learn colour from
    bool update_due_ = false;    // the next update patch is blended into the template
    bool snapshot_due_ = false;  // the next update patch becomes a keyframe

    // Re-detection: a candidate must hold for a few frames before tracking resumes.
    bool has_lead_ = false;
    double lead_x_ = 0, lead_y_ = 0;
    int lead_count_ = 0;
    int sweep_ = 0;  // next part of the frame searched under a budget
};

}  // namespace corrtrack
