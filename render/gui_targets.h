// The GUI's target list: the targets (added, re-selected and dropped from the video view,
// restarted after a seek or new settings), the selected one, each one's latest result and
// heatmap texture, and the rows of every frame tracked since the input opened (the history
// the Export panel saves). All targets live in the one MultiTracker.
// Thread rules: main (GL) thread only; each target's heatmap sink is a GL texture (CUDA-GL
// interop with a GPU), so release() must run while the GL context is current.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "app/io/annotate.h"
#include "app/io/frame.h"
#include "app/io/result_writers.h"
#include "app/track/tracker.h"
#include "render/gui_log.h"
#include "render/heatmap_sink.h"
#include "render/heatmap_sink_cuda.h"
#include "render/video_view.h"

namespace corrtrack {

// A target as the GUI sees it: its own id (kept across re-initialisations, which give the
// tracker's target a new id) and the tracker's.
struct GuiTarget {
    int id = 0;
    TargetId tid = -1;
    TrackResult result;
    bool updated = false;     // tracked since (re)init, so the tracker's last_map(i) holds a map
    bool heat_dirty = false;  // the map changed since it was last uploaded
    std::unique_ptr<HeatmapSink> heat = make_heatmap_sink();  // CUDA-GL interop with a GPU
};

class TargetList {
public:
    TargetList(MultiTracker& tracker, EventLog& log, StatusLine& status);

    const std::vector<GuiTarget>& all() const { return targets_; }
    bool empty() const { return targets_.empty(); }
    int size() const { return static_cast<int>(targets_.size()); }
    int selected_id() const { return selected_; }
    void select(int id) { selected_ = id; }
    GuiTarget* selected();  // the selected target, else the first, else nullptr
    // The smallest target whose box holds frame point (fx, fy) (a small box inside a big one
    // stays reachable); nullptr when none.
    const GuiTarget* hit(double fx, double fy) const;

    // A new input: no targets, ids from 0, no history; the tracker takes `options`.
    void reset(const TrackerOptions& options);
    void release();  // drops the targets and their GL textures (teardown)

    // On frame `view` (index `frame` for the log). The new box of reselect() is added first
    // (the old target keeps tracking when it cannot be), then the old one removed: the target
    // keeps its id and colour and moves to the end of the list.
    void add(const FrameView& view, long frame, const BoxF& box);
    void reselect(const FrameView& view, long frame, const BoxF& box);
    void drop(int id);
    // Every target starts again from its current box on this frame, with the tracker's
    // current settings; those it refuses are dropped with a message.
    void reinit_all(const FrameView& view);
    // After a seek: (GUI id, box) pairs as boxes() gave them restart on the new frame.
    std::vector<std::pair<int, BoxF>> boxes() const;
    void restart_at(const FrameView& view, const std::vector<std::pair<int, BoxF>>& boxes);

    // Takes a tracker pass's results; returns the frame's stage times (the GPU path times the
    // one pass of all targets, the CPU path each target's own, summed).
    StageTimes take_results(const std::vector<TrackResult>& results);
    // Appends this frame's rows (one per target) to the history; returns the index of the first.
    std::size_t record(const Frame& frame);
    const std::vector<FrameRecord>& history() const { return history_; }

    // Heatmaps: colour the maps that changed into their textures on `stream`.
    void restyle_heatmaps();  // every tracked target's map again (the style changed)
    void upload_heatmaps(const HeatmapStyle& style, Stream stream);
    // The video view's overlays and the annotated video's targets, in list order.
    std::vector<TargetOverlay> overlays() const;
    void annotated(std::vector<AnnotatedTarget>* out) const;

private:
    int index_of(int id) const;

    MultiTracker& tracker_;
    EventLog& log_;
    StatusLine& status_;
    std::vector<GuiTarget> targets_;
    int next_id_ = 0;
    int selected_ = -1;
    std::vector<FrameRecord> history_;
};

}  // namespace corrtrack
