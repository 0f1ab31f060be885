#include "app/track/target.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "app/track/clones.h"
#include "app/track/gradient.h"
#include "corrtrack/ncc_math.h"
#include "corrtrack/peak.h"

namespace corrtrack {

void TemplateSlot::assign(const std::uint8_t* p, Size s, bool with_gradient) {
    size = s;
    const std::size_t n = static_cast<std::size_t>(s.width) * s.height;
    pixels.assign(p, p + n);
    if (with_gradient) {
        gradient.resize(n);
        gradient_patch(pixels.data(), s, gradient.data());
    } else {
        gradient.clear();
    }
    ++version;
}

namespace {

// The central share `core` of `box`, no smaller than 4x4 px (nor than the box itself).
BoxF core_of(const BoxF& box, double core) {
    const double w = std::max(std::min(box.width, 4.0), box.width * core);
    const double h = std::max(std::min(box.height, 4.0), box.height * core);
    return {box.cx() - w / 2, box.cy() - h / 2, w, h};
}

}  // namespace

Target::Target(TargetId id, const TrackerOptions& o, const BoxF& given, Size frame) : id_(id) {
    // The tracker models the box's centre; results give it back at the size it was given.
    const BoxF box = core_of(given, o.core);
    report_w_ = given.width / box.width;
    report_h_ = given.height / box.height;
    // The longer side shrinks to max_template_side, unless the shorter one would then fall
    // below min_template_side: a thin target keeps enough pixels across to be told apart. But
    // never past what every kernel takes (kMaxTemplateSide): an 8x500 box is matched as 4x256.
    const double longer = std::max(box.width, box.height);
    double reduce = longer / o.max_template_side;
    if (o.min_template_side > 0) reduce = std::min(reduce, std::min(box.width, box.height) / o.min_template_side);
    scale_ = std::max({1.0, reduce, longer / kMaxTemplateSide});
    templ_size_ = {std::max(4, static_cast<int>(std::lround(box.width / scale_))),
                   std::max(4, static_cast<int>(std::lround(box.height / scale_)))};
    const double shorter = std::min(templ_size_.width, templ_size_.height);
    // The box (template x scale) never outgrows the frame, not even by the template's rounding:
    // a box as tall as the frame, its template height rounded up, would be taller than it.
    max_scale_ = std::min(static_cast<double>(frame.width) / templ_size_.width,
                          static_cast<double>(frame.height) / templ_size_.height);
    min_scale_ = std::min({scale_, o.min_box_side / shorter, max_scale_});
    cx_ = box.cx();
    cy_ = box.cy();
    box_ = box;
    result_ = initial_result(id, given);
    anchor_ = static_cast<float>(std::clamp(o.anchor, 0.0, 1.0));
    gradient_ = static_cast<float>(std::clamp(o.gradient, 0.0, 1.0));
    distractor_weight_ = static_cast<float>(std::clamp(o.distractor_weight, 0.0, 1.0));
    lookalike_claim_ = static_cast<float>(std::clamp(o.lookalike_claim, 0.0, 1.0));
    memory_.resize(static_cast<std::size_t>(o.memory));
    const std::uint64_t base = static_cast<std::uint64_t>(static_cast<std::uint32_t>(id)) << 8;
    working_.key = base;
    first_.key = base + 0x80;
    scale_anchor_ = static_cast<float>(std::clamp(o.scale_anchor, 0.0, 1.0));
    for (std::size_t i = 0; i < memory_.size(); ++i) memory_[i].key = base + 1 + i;
    lookalikes_.resize(SearchRequest::kMaxDistractors);
    for (std::size_t i = 0; i < lookalikes_.size(); ++i) lookalikes_[i].slot.key = base + 0x40 + i;
}

namespace {

// A request for the patch of `size` centred on (cx, cy) at `scale`, on whole pixels at scale 1
// (integer copies keep scale-1 tracking free of interpolation blur).
SearchRequest centred_request(double cx, double cy, double scale, Size size) {
    SearchRequest r;
    r.scale = scale;
    r.patch = size;
    r.ox = cx - size.width * scale / 2;
    r.oy = cy - size.height * scale / 2;
    if (scale == 1.0) {
        r.ox = std::round(r.ox);
        r.oy = std::round(r.oy);
    }
    return r;
}

}  // namespace

SearchRequest Target::template_patch() const { return centred_request(cx_, cy_, scale_, templ_size_); }

bool Target::init(const std::uint8_t* pixels, std::string* error) {
    const std::size_t n = static_cast<std::size_t>(templ_size_.width) * templ_size_.height;
    double mean = 0, sq = 0;
    for (std::size_t i = 0; i < n; ++i) {
        mean += pixels[i];
        sq += static_cast<double>(pixels[i]) * pixels[i];
    }
    mean /= n;
    const double sd = std::sqrt(std::max(0.0, sq / n - mean * mean));
    if (sd < 1.0) {
        char buf[96];
        std::snprintf(buf, sizeof buf, " is flat (grey-level std %.2f): nothing to correlate", sd);
        if (error) *error = buf;
        return false;
    }
    working_.assign(pixels, templ_size_, gradient_ > 0);
    if (scale_anchor_ > 0) first_.assign(pixels, templ_size_, gradient_ > 0);
    appearance_.assign(pixels, pixels + n);
    initial_ = appearance_;
    for (TemplateSlot& m : memory_) m.size = templ_size_;
    if (!memory_.empty()) memory_[0].assign(pixels, templ_size_, gradient_ > 0);
    return true;
}

std::vector<std::uint64_t> Target::template_keys() const {
    std::vector<std::uint64_t> keys{working_.key, first_.key};
    for (const TemplateSlot& m : memory_) keys.push_back(m.key);
    for (const Lookalike& l : lookalikes_) keys.push_back(l.slot.key);
    return keys;
}

void Target::begin_frame() {
    ++frames_;
    colour_due_ = false;
    planned_.clear();
    best_ = Candidate{};
    redetected_ = Candidate{};
    redetect_ = lost_;
    chosen_pass_ = -1;
}

std::vector<const TemplateSlot*> Target::searched_templates() const {
    std::vector<const TemplateSlot*> list{&working_};
    for (const TemplateSlot& m : memory_)
        if (!m.pixels.empty()) list.push_back(&m);
    return list;
}

void Target::add_request(SearchRequest& r, int templ, double cx, double cy, int step, double scale, Size patch,
                         double penalty) {
    const TemplateSlot& t = templ == 0 ? working_ : templ < 0 ? first_ : memory_[templ - 1];
    r = centred_request(cx, cy, scale, patch);
    r.templ = t.ref();
    r.penalty = penalty;
    r.gradient_weight = gradient_;
    r.colour = cue_;
    if (templ == 0 && filter_cue_.filter && filter_.window() == patch) r.filter = filter_cue_;
    if (templ == 0 && cues_ && distractor_weight_ > 0)
        for (const Lookalike& l : lookalikes_)
            if (lookalike_live(l)) {
                r.distractor_x[r.distractor_count] =
                    static_cast<float>((l.cx - r.ox) / r.scale - templ_size_.width / 2.0);
                r.distractor_y[r.distractor_count] =
                    static_cast<float>((l.cy - r.oy) / r.scale - templ_size_.height / 2.0);
                r.distractors[r.distractor_count++] = l.slot.ref();
            }
    r.distractor_weight = r.distractor_count > 0 ? distractor_weight_ : 0.0f;
    r.lookalike_claim = r.distractor_count > 0 ? lookalike_claim_ : 0.0f;
    planned_.push_back({std::max(templ, 0), step, step != 0, templ < 0, r.ox, r.oy, r.scale, r.patch});
}

// The search patch: the template plus a margin on every side from the box's longer side
// (a thin target moving sideways stays inside) and from its recent speed. No margin goes past
// the frame's own extent at the smallest scale searched (from any prediction in the frame,
// every centre in it stays reachable): a tall box with a wide search factor once asked for
// windows 8 times the frame, seconds a frame of correlating replicated borders.
Size Target::window(const TrackerOptions& o, Size frame) const {
    const int longer = std::max(templ_size_.width, templ_size_.height);
    const double margin = longer * (o.search_factor - 1) / 2 + o.window_speed * speed_ / scale_;
    const int m = std::max(8, static_cast<int>(std::lround(margin)));
    const double smallest = scale_ * std::pow(o.scale_step, -(o.scales / 2));
    const int mx = std::min(m, std::max(1, static_cast<int>(std::ceil(frame.width / smallest))));
    const int my = std::min(m, std::max(1, static_cast<int>(std::ceil(frame.height / smallest))));
    return {templ_size_.width + 2 * mx, templ_size_.height + 2 * my};
}

std::size_t Target::track_requests(const TrackerOptions& o) const {
    const int half = o.scales / 2;
    std::size_t n = static_cast<std::size_t>(o.scales);
    if (anchored(o)) n += static_cast<std::size_t>(2 * half + 1);
    for (const TemplateSlot& m : memory_) n += m.pixels.empty() ? 0 : 1;
    return n;
}

void Target::plan_track(const TrackerOptions& o, Size frame, SearchRequest* slots) {
    planned_.clear();
    cue_ = cues_ ? colour_.cue(static_cast<float>(o.colour)) : ColourCue{};
    cue_.frame = static_cast<std::uint64_t>(frames_);
    filter_cue_ = cues_ && o.filter > 0 && filter_.ready()
                      ? FilterCue{&filter_, static_cast<float>(o.filter), static_cast<float>(o.filter_balance),
                                  static_cast<std::uint64_t>(frames_)}
                      : FilterCue{};
    // Lost or not, the neighbourhood is searched: a target that was only blurred or partly
    // hidden for a while is picked up again there, while the re-detection looks further.
    const double px = cx_ + vx_, py = cy_ + vy_;
    const Size patch = window(o, frame);
    const int half = o.scales / 2;
    SearchRequest* r = slots;
    // The centre scale first: the other scales' requests reuse its filter answer. Then the
    // first template at every step (scale_anchor): a GPU correlates a template's requests of
    // one target as one atlas row, and the CPU keeps the windows it sampled for it.
    for (int j = 0; j < o.scales; ++j) {
        const int k = j == 0 ? 0 : j % 2 == 1 ? -(j + 1) / 2 : j / 2;
        add_request(*r++, 0, px, py, k, k == 0 ? scale_ : scale_ * std::pow(o.scale_step, k), patch, o.motion_penalty);
    }
    if (anchored(o))
        for (int k = -half; k <= half; ++k)
            add_request(*r++, -1, px, py, k, k == 0 ? scale_ : scale_ * std::pow(o.scale_step, k), patch,
                        o.motion_penalty);
    for (std::size_t m = 0; m < memory_.size(); ++m)
        if (!memory_[m].pixels.empty())
            add_request(*r++, static_cast<int>(m) + 1, px, py, 0, scale_, patch, o.motion_penalty);
    // note_lookalike reads the rival of the best tracking hit, which is never the first
    // template's (it only weighs the scales).
    if (cues_ && distractor_weight_ > 0)
        for (std::size_t i = 0; i < planned_.size(); ++i) slots[i].want_rival = !planned_[i].scale_check;
    assert(static_cast<std::size_t>(r - slots) == track_requests(o));
}

Target::Candidate Target::candidate(const TrackerOptions& o, const Planned& p, const RankedPeak& hit,
                                    std::size_t request) const {
    Candidate c;
    const Planned& r = p;
    c.cx = centre_x(r, hit.peak.sub_x);
    c.cy = centre_y(r, hit.peak.sub_y);
    c.scale = r.scale;
    c.score = hit.peak.score;
    c.psr = hit.peak.psr;
    c.second = hit.peak.second;
    c.ranked = p.scaled ? hit.ranked * static_cast<float>(o.scale_penalty) : hit.ranked;
    c.templ = p.templ;
    c.step = p.step;
    c.scaled = p.scaled;
    c.request = request;
    c.region = {r.ox, r.oy, r.patch.width * r.scale, r.patch.height * r.scale};
    c.rival = hit.rival;
    c.rival_of = hit.rival_of;
    c.lookalike = hit.lookalike;
    c.rival_cx = centre_x(r, hit.rival_x);
    c.rival_cy = centre_y(r, hit.rival_y);
    return c;
}

void Target::refine_size(const FrameView& frame, float rate) {
    if (!cues_) return;
    const double l = colour_.extent_log_scale(frame, box_, extent_scratch_);
    extent_log_ += rate * ((std::isnan(l) ? 0.0 : l) - extent_log_);
    const double f = std::exp(extent_log_);
    result_.box = reported(box_, f, frame.luma.size());
}

BoxF Target::reported(const BoxF& core, double factor, Size frame) const {
    const double w = core.width * factor * report_w_, h = core.height * factor * report_h_;
    const double x0 = std::max(0.0, core.x + (core.width - w) / 2), y0 = std::max(0.0, core.y + (core.height - h) / 2);
    const double x1 = std::min<double>(frame.width, core.x + (core.width + w) / 2);
    const double y1 = std::min<double>(frame.height, core.y + (core.height + h) / 2);
    return {x0, y0, x1 - x0, y1 - y0};
}

namespace {

// NCC of two patches of n pixels (0 when either is flat).
double patch_ncc(const std::uint8_t* a, const float* b, std::size_t n) {
    double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
    for (std::size_t i = 0; i < n; ++i) {
        sa += a[i];
        sb += b[i];
        saa += static_cast<double>(a[i]) * a[i];
        sbb += static_cast<double>(b[i]) * b[i];
        sab += static_cast<double>(a[i]) * b[i];
    }
    const double va = saa - sa * sa / n, vb = sbb - sb * sb / n;
    return va > 0 && vb > 0 ? (sab - sa * sb / n) / std::sqrt(va * vb) : 0.0;
}

}  // namespace

void Target::take_track(const TrackerOptions& o, const RankedPeak* hits, std::size_t first_request) {
    const int half = o.scales / 2;
    step_ranked_.assign(2 * half + 1, -2.0f);
    first_ranked_.assign(2 * half + 1, -2.0f);
    step_best_.assign(2 * half + 1, Candidate{});
    short_ = long_ = Candidate{};
    for (std::size_t i = 0; i < planned_.size(); ++i) {
        const Candidate c = candidate(o, planned_[i], hits[i], first_request + i);
        if (planned_[i].scale_check) {
            first_ranked_[planned_[i].step + half] = c.ranked;
            continue;
        }
        if (planned_[i].templ == 0) step_best_[planned_[i].step + half] = c;
        if (c.ranked > best_.ranked) best_ = c;
        Candidate& kind = c.templ == 0 ? short_ : long_;
        if (c.ranked > kind.ranked) kind = c;
        if (planned_[i].templ == 0) step_ranked_[planned_[i].step + half] = hits[i].ranked;
    }
    if (anchored(o) && best_.templ == 0) {
        // The scale follows the blend of the working and the first template's scores: the
        // working template's position at the step that blend prefers.
        int pick = best_.step + half;
        for (int k = 0; k <= 2 * half; ++k) {
            float first = first_ranked_[k] * (k == half ? 1.0f : static_cast<float>(o.scale_penalty));
            step_ranked_[k] = step_best_[k].ranked + scale_anchor_ * (first - step_best_[k].ranked);
            if (step_ranked_[k] > step_ranked_[pick]) pick = k;
        }
        best_ = step_best_[pick];
    }
    // plan_track's first request is the working template at the centre scale.
    if (!planned_.empty() && cues_ && distractor_weight_ > 0) follow_lookalikes(hits[0], planned_[0]);
    if (!planned_.empty()) {
        chosen_pass_ = 0;
        chosen_request_ = best_.request;
        chosen_region_ = best_.region;
    }
    weak_ = !(best_.score >= o.lost_score && best_.psr >= o.lost_psr);
    redetect_ = lost_ || weak_;
}

void Target::plan_redetect(const TrackerOptions& o, Size frame, std::vector<SearchRequest>& out) {
    planned_.clear();
    const std::vector<const TemplateSlot*> templates = searched_templates();
    auto slot_of = [&](const TemplateSlot* t) { return t == &working_ ? 0 : static_cast<int>(t - memory_.data()) + 1; };
    if (has_lead_) {  // the candidate of the last frames, followed closely
        const Size patch = window(o, frame);
        for (const TemplateSlot* t : templates)
            add_request(out.emplace_back(), slot_of(t), lead_x_, lead_y_, 0, scale_, patch, o.motion_penalty);
    }
    // The whole frame at the current scale, or under a budget one band of it per frame.
    const Size whole{std::max(templ_size_.width, static_cast<int>(frame.width / scale_)),
                     std::max(templ_size_.height, static_cast<int>(frame.height / scale_))};
    const long long per_row = whole.width - templ_size_.width + 1;
    const long long rows = whole.height - templ_size_.height + 1;
    const long long positions = per_row * rows * static_cast<long long>(templates.size());
    // Budget 0 is the frame's own positions per template: a target that has shrunk below its
    // template (scale < 1) sees an upsampled frame, 1 / scale^2 times the positions (a 6 px box
    // of a 32 px template: 28 frames' worth), which it sweeps in bands instead of at once.
    const long long budget = o.redetect_budget > 0 ? o.redetect_budget
                                                   : static_cast<long long>(frame.width) * frame.height *
                                                         static_cast<long long>(templates.size());
    int bands = 1;
    if (positions > budget) bands = static_cast<int>(std::min<long long>(rows, (positions + budget - 1) / budget));
    const int band = sweep_++ % bands;
    const int first_row = static_cast<int>(rows * band / bands), last_row = static_cast<int>(rows * (band + 1) / bands);
    const Size patch{whole.width, last_row - first_row + templ_size_.height - 1};
    for (const TemplateSlot* t : templates) {
        SearchRequest& r = out.emplace_back();
        r.templ = t->ref();
        r.scale = scale_;
        r.patch = patch;
        r.ox = 0;
        r.oy = first_row * scale_;
        r.penalty = 0;
        r.gradient_weight = gradient_;
        planned_.push_back({slot_of(t), 0, false, false, r.ox, r.oy, r.scale, r.patch});
    }
}

void Target::take_redetect(const TrackerOptions& o, const RankedPeak* hits, std::size_t first_request) {
    Candidate near, far;
    const std::size_t lead_requests = has_lead_ ? searched_templates().size() : 0;
    for (std::size_t i = 0; i < planned_.size(); ++i) {
        const Candidate c = candidate(o, planned_[i], hits[i], first_request + i);
        Candidate& slot = i < lead_requests ? near : far;
        if (c.ranked > slot.ranked) slot = c;
    }
    const double reach = std::max(templ_size_.width, templ_size_.height) * scale_ / 2;
    auto apart = [&](const Candidate& a, const Candidate& b) { return std::hypot(a.cx - b.cx, a.cy - b.cy) > reach; };
    auto leads = [&](const Candidate& c) {
        // A re-detection must beat its runner-up in the same map, a far one in another, and
        // the local search's candidate when it lies elsewhere.
        float rival = c.second;
        if (&c != &far && apart(far, c)) rival = std::max(rival, far.score);
        if (best_.templ >= 0 && apart(best_, c)) rival = std::max(rival, best_.score);
        return c.score >= o.recover_score && c.psr >= o.recover_psr && c.score - rival >= o.redetect_margin;
    };
    if (has_lead_ && leads(near)) {
        lead_x_ = near.cx;
        lead_y_ = near.cy;
        ++lead_count_;
        redetected_ = near;
    } else {
        has_lead_ = false;
        lead_count_ = 0;
    }
    if (!has_lead_ && leads(far)) {
        has_lead_ = true;
        lead_x_ = far.cx;
        lead_y_ = far.cy;
        lead_count_ = 1;
        redetected_ = far;
    }
    if (!has_lead_) redetected_ = near.score > far.score ? near : far;
    if (redetected_.score > best_.score || lost_) {
        chosen_pass_ = 1;
        chosen_request_ = redetected_.request;
        chosen_region_ = redetected_.region;
    }
}

void Target::clamp_to_frame(Size frame) {
    scale_ = std::clamp(scale_, min_scale_, max_scale_);
    const double hw = templ_size_.width * scale_ / 2, hh = templ_size_.height * scale_ / 2;
    cx_ = std::clamp(cx_, hw, std::max(hw, frame.width - hw));
    cy_ = std::clamp(cy_, hh, std::max(hh, frame.height - hh));
}

void Target::set_box() {
    const double w = templ_size_.width * scale_, h = templ_size_.height * scale_;
    box_ = {cx_ - w / 2, cy_ - h / 2, w, h};
}

void Target::settle(const TrackerOptions& o, Size frame, std::vector<SearchRequest>& patches, std::vector<int>& kinds) {
    const bool recovered = redetect_ && has_lead_ && lead_count_ >= o.redetect_confirm;
    const Candidate* chosen = &best_;
    if (!weak_) {  // a sure local match: follow it, its velocity and its scale
        const double dx = best_.cx - cx_, dy = best_.cy - cy_;
        vx_ += o.velocity_gain * (dx - vx_);
        vy_ += o.velocity_gain * (dy - vy_);
        speed_ += 0.3 * (std::hypot(dx, dy) - speed_);
        cx_ = best_.cx;
        cy_ = best_.cy;
        // Only the working template is searched over scales; follow its pick part of the way.
        double pick = best_.templ == 0 ? best_.scale : scale_;
        if (o.scale_fit && best_.templ == 0) {
            // The vertex of a parabola through the best step and its neighbours: a step that
            // barely wins moves the scale a little, not a whole step.
            const int half = o.scales / 2, k = best_.step + half;
            double e = best_.step;
            if (k > 0 && k + 1 < static_cast<int>(step_ranked_.size()))
                e += parabolic_offset(step_ranked_[k - 1], step_ranked_[k], step_ranked_[k + 1]);
            pick = scale_ * std::pow(o.scale_step, e);
        }
        scale_ *= 1.0 + o.scale_rate * (pick / scale_ - 1.0);
        lost_ = false;
        has_lead_ = false;
        lead_count_ = 0;
    } else if (recovered) {  // a re-detection that held for long enough: resume there
        chosen = &redetected_;
        cx_ = lead_x_;
        cy_ = lead_y_;
        vx_ = vy_ = 0;
        lost_ = false;
        has_lead_ = false;
        lead_count_ = 0;
    } else {  // unsure: follow a fair local match without learning from it, else hold
        lost_ = true;
        vx_ = vy_ = 0;
        if (best_.score >= o.lost_score) {
            cx_ = best_.cx;
            cy_ = best_.cy;
        }
    }
    clamp_to_frame(frame);
    set_box();
    result_ = TrackResult{};
    result_.id = id_;
    result_.box = reported(box_, 1.0, frame);
    result_.sub_cx = lost_ ? cx_ : chosen->cx;
    result_.sub_cy = lost_ ? cy_ : chosen->cy;
    result_.score = chosen->score;
    result_.confidence = chosen->psr;
    result_.lost = lost_;
    result_.redetected = redetect_;
    if (lost_) return;

    // Sure enough to learn from: a high NCC that also stands out of its map (a blurred or
    // flat template scores high everywhere; its PSR gives it away).
    // Not while the box matches a known look-alike better than the target: it may be on it.
    // The template, the colour model and the look-alikes also learn at a relative bar
    // (update_relative): a target whose matches run at 0.5 (a person turning, a low-contrast
    // scene) still learns from its best frames, as LMCF's high-confidence update does (Wang
    // et al., CVPR 2017), never below the lost bar. The correlation filter keeps the fixed
    // bar: its training is a quarter of a frame's work on the CPU, and the robust measures
    // could not tell the two apart (notes/TRACKING.md, release 15).
    const bool unambiguous = chosen->psr >= o.update_min_psr && chosen->lookalike <= chosen->score;
    const bool confident = unambiguous && chosen->score >= o.update_min_score;
    double relative_bar = o.update_min_score;
    if (score_mean_ > 0 && o.update_relative > 0)
        relative_bar = std::min(relative_bar, std::max(o.lost_score, o.update_relative * score_mean_));
    score_mean_ = score_mean_ > 0 ? score_mean_ + kScoreMeanRate * (chosen->score - score_mean_) : chosen->score;
    const bool sure = unambiguous && chosen->score >= relative_bar;
    colour_due_ = sure && cues_ && o.colour > 0;
    update_due_ = sure && (o.update == UpdatePolicy::kBlend ||
                           (o.update == UpdatePolicy::kKeyframe && frames_ % o.keyframe_interval == 0));
    snapshot_due_ = sure && memory_.size() > 1 && frames_ % o.keyframe_interval == 0;
    if (sure && cues_ && distractor_weight_ > 0 && chosen == &best_) note_lookalike(patches, kinds);
    filter_due_ = confident && cues_ && o.filter > 0;
    if (filter_due_) {
        // The filter learns the window the next frame's search will sample, centred on the box.
        const SearchRequest r = centred_request(cx_, cy_, scale_, window(o, frame));
        filter_window_ = r.patch;
        filter_inside_ = window_in_frame(r.ox, r.oy, r.scale, r.patch, frame);
        patches.push_back(r);
        kinds.push_back(kFilterWindow);
    }
    if (!update_due_ && !snapshot_due_) return;
    patches.push_back(template_patch());
    kinds.push_back(kAppearance);
}

namespace {

// The template update of one frame, for every pixel: the running appearance moves `rate` of
// the way to the new patch; the working template is its blend with the first frame's,
// quantised as std::lround clamped to 0..255: v >= 0 (a blend of values in 0..255), so its
// truncation r is its floor and v - r is exact in float, and r + (v - r >= 0.5) rounds half
// away from zero in eight float lanes (v + 0.5 in double, as before, gives the same bytes in
// four, 15% slower on 1024 templates). It runs for
// every target every frame, so it must vectorize: restrict pointers (through the members,
// every byte store could alias them), integer clamps (float compares are not if-converted),
// not inlined (inlined, the restrict qualifiers are lost), -O3 for this file (app/
// CMakeLists.txt) and an AVX2 clone picked at load time where the CPU has it (no FMA, so the
// same floats). 256 targets of 32x32: scalar 0.5-0.8 ms a frame, SSE2 0.23, AVX2 0.10.
// round_to_u8 (resample.h) gives the same bytes but its branches keep this loop scalar.
// No clones under the sanitizers (app/track/clones.h).
CORRTRACK_CLONES void blend_appearance(const std::uint8_t* __restrict pixels, float rate, float anchor,
                                       const float* __restrict initial, float* __restrict appearance,
                                       std::uint8_t* __restrict out, std::size_t n) {
    const float keep = 1.0f - anchor;
    for (std::size_t i = 0; i < n; ++i) {
        const float a = appearance[i] + rate * (static_cast<float>(pixels[i]) - appearance[i]);
        appearance[i] = a;
        const float v = anchor * initial[i] + keep * a;
        int r = static_cast<int>(v);
        r += v - static_cast<float>(r) >= 0.5f ? 1 : 0;
        r = r < 0 ? 0 : r;
        r = r > 255 ? 255 : r;
        out[i] = static_cast<std::uint8_t>(r);
    }
}

}  // namespace

void Target::apply_sample(const TrackerOptions& o, int kind, const std::uint8_t* pixels) {
    if (kind == kFilterWindow) {
        // One scratch per thread: the filter's work arrays are large and only grow.
        static thread_local FilterScratch scratch;
        if (filter_due_)
            filter_.train(pixels, filter_window_, templ_size_, filter_inside_, o.filter_rate, o.filter_support,
                          scratch);
        filter_due_ = false;
        return;
    }
    if (kind == kLookalikeRef) {
        lookalike_ref_ = patch_ncc(pixels, initial_.data(), initial_.size());
        return;
    }
    if (kind == kLookalike) {
        if (lookalike_due_ < 0) return;
        if (patch_ncc(pixels, initial_.data(), initial_.size()) >= lookalike_ref_) {
            lookalike_due_ = -1;
            return;
        }
        Lookalike& l = lookalikes_[lookalike_due_];
        l.slot.assign(pixels, templ_size_, false);
        l.seen = frames_;
        lookalike_due_ = -1;
        return;
    }
    if (update_due_) {
        const float rate = o.update == UpdatePolicy::kBlend ? static_cast<float>(o.blend_rate) : 1.0f;
        blended_.resize(appearance_.size());
        blend_appearance(pixels, rate, anchor_, initial_.data(), appearance_.data(), blended_.data(),
                         appearance_.size());
        working_.assign(blended_.data(), templ_size_, gradient_ > 0);
    }
    if (snapshot_due_) {
        TemplateSlot& m = memory_[next_keyframe_];
        m.assign(pixels, templ_size_, gradient_ > 0);
        next_keyframe_ = next_keyframe_ + 1 < memory_.size() ? next_keyframe_ + 1 : 1;
    }
    update_due_ = snapshot_due_ = false;
}

}  // namespace corrtrack
