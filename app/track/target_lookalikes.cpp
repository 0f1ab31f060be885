// Target's look-alikes (distractor awareness): noting a second hill beside a sure match as a
// look-alike, and following the live ones where the centre scale's search finds them again.
// The rest of the target's frame is in target.cpp.
#include <algorithm>
#include <cmath>

#include "app/track/target.h"

namespace corrtrack {

bool Target::lookalike_live(const Lookalike& l) const { return l.seen >= 0 && frames_ - l.seen <= kLookalikeFrames; }

// A sure match whose map holds a second hill nearly as high: remember what stands there, so
// that the next frames rank positions that match it better than the target lower. It goes
// into the slot of the look-alike last seen near it, else a free or the oldest slot.
void Target::note_lookalike(std::vector<SearchRequest>& patches, std::vector<int>& kinds) {
    const Candidate& c = best_;
    if (!(c.rival >= kLookalikeMin && c.rival >= kLookalikeShare * c.rival_of)) return;
    const double near = std::max(templ_size_.width, templ_size_.height) * scale_;
    int pick = -1;
    for (std::size_t i = 0; i < lookalikes_.size(); ++i) {
        const Lookalike& l = lookalikes_[i];
        if (lookalike_live(l) && std::hypot(l.cx - c.rival_cx, l.cy - c.rival_cy) < near) pick = static_cast<int>(i);
    }
    if (pick < 0)
        for (std::size_t i = 0; i < lookalikes_.size(); ++i)
            if (pick < 0 || lookalikes_[i].seen < lookalikes_[pick].seen) pick = static_cast<int>(i);
    Lookalike& l = lookalikes_[pick];
    l.cx = c.rival_cx;
    l.cy = c.rival_cy;
    if (l.slot.size.width == 0) l.slot.size = templ_size_;
    lookalike_due_ = pick;
    // The box's patch first: the look-alike is kept only if it resembles the first
    // appearance less than the box does (else the box may be on a look-alike and the rival
    // the target).
    patches.push_back(template_patch());
    kinds.push_back(kLookalikeRef);
    SearchRequest r;
    r.scale = scale_;
    r.patch = templ_size_;
    r.ox = c.rival_cx - templ_size_.width * scale_ / 2;
    r.oy = c.rival_cy - templ_size_.height * scale_ / 2;
    patches.push_back(r);
    kinds.push_back(kLookalike);
}

// The live look-alikes where the centre scale's search found them again (its distractors are
// the live ones, in order). Not onto the target: a look-alike found within four fifths of a
// box of the chosen position would be the target itself (a look-alike that follows the
// target would claim its place), so it keeps where it stood.
void Target::follow_lookalikes(const RankedPeak& centre, const Planned& p) {
    const double aw = 0.8 * templ_size_.width * scale_, ah = 0.8 * templ_size_.height * scale_;
    int d = 0;
    for (Lookalike& l : lookalikes_) {
        if (!lookalike_live(l)) continue;
        if (centre.lookalike_found[d] >= SearchRequest::kLookalikeFound) {
            const double x = centre_x(p, centre.lookalike_x[d]), y = centre_y(p, centre.lookalike_y[d]);
            if (!(std::abs(x - best_.cx) < aw && std::abs(y - best_.cy) < ah)) {
                l.cx = x;
                l.cy = y;
            }
        }
        ++d;
    }
}

}  // namespace corrtrack
