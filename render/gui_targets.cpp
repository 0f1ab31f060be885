// The target list; see gui_targets.h.
#include "render/gui_targets.h"

#include <string>

namespace corrtrack {
namespace {

Rgb to_rgb(ImU32 c) {
    return {static_cast<std::uint8_t>(c & 0xFF), static_cast<std::uint8_t>((c >> 8) & 0xFF),
            static_cast<std::uint8_t>((c >> 16) & 0xFF)};
}

}  // namespace

TargetList::TargetList(MultiTracker& tracker, EventLog& log, StatusLine& status)
    : tracker_(tracker), log_(log), status_(status) {}

int TargetList::index_of(int id) const {
    for (std::size_t i = 0; i < targets_.size(); ++i)
        if (targets_[i].id == id) return static_cast<int>(i);
    return -1;
}

GuiTarget* TargetList::selected() {
    for (GuiTarget& t : targets_)
        if (t.id == selected_) return &t;
    return targets_.empty() ? nullptr : &targets_.front();
}

const GuiTarget* TargetList::hit(double fx, double fy) const {
    const GuiTarget* best = nullptr;
    for (const GuiTarget& t : targets_) {
        const BoxF& b = t.result.box;
        if (fx >= b.x && fy >= b.y && fx <= b.x + b.width && fy <= b.y + b.height &&
            (!best || b.width * b.height < best->result.box.width * best->result.box.height))
            best = &t;
    }
    return best;
}

void TargetList::reset(const TrackerOptions& options) {
    history_.clear();
    targets_.clear();
    tracker_.clear();
    TrackerOptions o = options;
    o.keep_maps = true;
    o.keep_device_maps = true;  // the interop heatmap reads the map on the device
    tracker_.set_options(o);
    next_id_ = 0;
    selected_ = -1;
}

void TargetList::release() { targets_.clear(); }

void TargetList::add(const FrameView& view, long frame, const BoxF& box) {
    std::string error;
    const TargetId tid = tracker_.add_target(view, box, &error);
    const bool ok = tid >= 0;
    log_.log({{"event", "init"},
              {"mode", "add"},
              {"frame", frame},
              {"box", box_json(box)},
              {"ok", ok},
              {"error", error},
              {"target", ok ? next_id_ : -1}});
    if (!ok) {
        status_.set("cannot track that: " + error, true);
        return;
    }
    GuiTarget t;
    t.id = next_id_++;
    t.tid = tid;
    t.result = initial_result(tid, box);
    selected_ = t.id;
    targets_.push_back(std::move(t));
}

void TargetList::reselect(const FrameView& view, long frame, const BoxF& box) {
    GuiTarget* t = selected();
    if (!t) {
        add(view, frame, box);
        return;
    }
    std::string error;
    const TargetId tid = tracker_.add_target(view, box, &error);
    const bool ok = tid >= 0;
    log_.log({{"event", "init"},
              {"mode", "reselect"},
              {"frame", frame},
              {"box", box_json(box)},
              {"ok", ok},
              {"error", error},
              {"target", t->id}});
    if (!ok) {
        status_.set("cannot track that: " + error, true);
        return;
    }
    const int i = index_of(t->id);
    tracker_.remove_target(t->tid);
    GuiTarget moved = std::move(targets_[i]);
    targets_.erase(targets_.begin() + i);
    moved.tid = tid;
    moved.result = initial_result(tid, box);
    moved.updated = false;
    targets_.push_back(std::move(moved));
    status_.set("target #" + std::to_string(targets_.back().id) + " re-initialised", false);
}

void TargetList::drop(int id) {
    const int i = index_of(id);
    if (i < 0) return;
    tracker_.remove_target(targets_[i].tid);
    targets_.erase(targets_.begin() + i);
    if (selected_ == id) selected_ = targets_.empty() ? -1 : targets_.front().id;
    log_.log({{"event", "drop"}, {"target", id}});
}

void TargetList::reinit_all(const FrameView& view) {
    std::vector<GuiTarget> kept;
    tracker_.clear();
    for (GuiTarget& t : targets_) {
        std::string error;
        t.tid = tracker_.add_target(view, t.result.box, &error);
        if (t.tid < 0) {
            status_.set("target #" + std::to_string(t.id) + " dropped: " + error, true);
            continue;
        }
        t.result.id = t.tid;
        t.updated = false;
        kept.push_back(std::move(t));
    }
    targets_ = std::move(kept);
    if (index_of(selected_) < 0) selected_ = targets_.empty() ? -1 : targets_.front().id;
}

std::vector<std::pair<int, BoxF>> TargetList::boxes() const {
    std::vector<std::pair<int, BoxF>> boxes;
    for (const GuiTarget& t : targets_) boxes.emplace_back(t.id, t.result.box);
    return boxes;
}

void TargetList::restart_at(const FrameView& view, const std::vector<std::pair<int, BoxF>>& boxes) {
    tracker_.clear();
    std::vector<GuiTarget> kept;
    for (const auto& [id, box] : boxes) {
        std::string error;
        GuiTarget t;
        t.id = id;
        t.tid = tracker_.add_target(view, box, &error);
        if (t.tid < 0) {
            status_.set("target #" + std::to_string(id) + " dropped at the seek: " + error, true);
            continue;
        }
        t.result = initial_result(t.tid, box);
        kept.push_back(std::move(t));
    }
    targets_ = std::move(kept);
}

StageTimes TargetList::take_results(const std::vector<TrackResult>& results) {
    StageTimes sum;
    for (std::size_t i = 0; i < targets_.size(); ++i) {
        GuiTarget& t = targets_[i];
        for (const TrackResult& r : results)
            if (r.id == t.tid) t.result = r;
        t.updated = t.heat_dirty = true;
        if (tracker_.on_gpu() && i > 0) continue;
        sum.upload_ms += t.result.times.upload_ms;
        sum.correlate_ms += t.result.times.correlate_ms;
        sum.peak_ms += t.result.times.peak_ms;
    }
    return sum;
}

std::size_t TargetList::record(const Frame& frame) {
    const std::size_t first = history_.size();
    for (const GuiTarget& t : targets_) {
        FrameRecord rec{frame.index, frame.pts, t.id, t.result};
        rec.result.times.decode_ms = frame.decode_ms;
        history_.push_back(rec);
    }
    return first;
}

void TargetList::restyle_heatmaps() {
    for (GuiTarget& t : targets_) t.heat_dirty = t.updated;
}

void TargetList::upload_heatmaps(const HeatmapStyle& style, Stream stream) {
    for (GuiTarget& t : targets_) {
        if (!t.updated || !t.heat_dirty) continue;
        // On the GPU the interop sink colours the device map in place: no host round trip
        // (a CPU sink, without interop, takes the host copy).
        const MapView device_map = tracker_.last_device_map(t.tid);
        t.heat->upload(device_map.data && t.heat->takes_device_maps() ? device_map : tracker_.last_map(t.tid), style,
                       stream);
        t.heat_dirty = false;
    }
}

std::vector<TargetOverlay> TargetList::overlays() const {
    std::vector<TargetOverlay> overlays;
    for (const GuiTarget& t : targets_) {
        TargetOverlay o;
        o.id = t.id;
        o.box = t.result.box;
        o.lost = t.result.lost;
        o.redetected = t.result.redetected;
        o.confidence = t.result.confidence;
        o.selected = t.id == selected_ && targets_.size() > 1;
        o.score = t.result.score;
        if (t.updated) {
            o.search = tracker_.last_map_region(t.tid);
            o.heat = t.heat.get();
        }
        overlays.push_back(o);
    }
    return overlays;
}

// The same drawing as `corrtrack track --video` (annotate_frame), in the GUI's target colours.
void TargetList::annotated(std::vector<AnnotatedTarget>* out) const {
    out->resize(targets_.size());
    for (std::size_t i = 0; i < targets_.size(); ++i) {
        const GuiTarget& t = targets_[i];
        AnnotatedTarget& a = (*out)[i];
        a.box = t.result.box;
        a.color = to_rgb(t.result.lost ? kLostColor : target_color(t.id));
        a.searched = t.updated;
        a.window = t.updated ? tracker_.last_map_region(t.tid) : BoxF{};
        a.map = t.updated && i == 0 ? tracker_.last_map(t.tid) : MapView{};
    }
}

}  // namespace corrtrack
