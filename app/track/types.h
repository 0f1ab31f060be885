// The tracker's small value types, shared by the tracker, the writers, the GUI and the
// evaluation without pulling in the tracker itself.
// Thread rules: plain values.
#pragma once

namespace corrtrack {

struct BoxF {
    double x = 0, y = 0, width = 0, height = 0;  // top-left corner, pixels (0-based)
    double cx() const { return x + width / 2; }
    double cy() const { return y + height / 2; }
};

using TargetId = int;

struct StageTimes {
    // decode: host clock in the decode thread. upload: frame copy to the device plus patch
    // sampling; correlate, peak: CUDA events on the GPU path, host clocks on the CPU path.
    // render: host clock. latency: decode start to box ready (filled by the caller).
    double decode_ms = 0, upload_ms = 0, correlate_ms = 0, peak_ms = 0, render_ms = 0, latency_ms = 0;
};

struct TrackResult {
    TargetId id = -1;
    BoxF box;
    double sub_cx = 0, sub_cy = 0;  // sub-pixel centre of the match
    float score = 0;                // NCC at the peak
    float confidence = 0;           // peak-to-sidelobe ratio of the chosen map
    bool lost = false;
    bool redetected = false;  // this frame searched the whole frame (or a budgeted part)
    StageTimes times;
};

// The first result of a target: its given box, fully confident.
inline TrackResult initial_result(TargetId id, const BoxF& box) {
    TrackResult r;
    r.id = id;
    r.box = box;
    r.sub_cx = box.cx();
    r.sub_cy = box.cy();
    r.score = 1.0f;
    return r;
}

}  // namespace corrtrack
