// OTB one-pass evaluation: dataset discovery, ground truth, running the tracker over each
// sequence, and the success (IoU AUC) and precision (centre error) metrics.
// Thread rules: plain functions; run_sequence drives its own frame pipeline.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/gpu/gpu_context.h"
#include "app/track/options.h"
#include "app/track/types.h"
#include "corrtrack/image.h"

namespace corrtrack {

struct SequenceInfo {
    std::string name;
    std::string input;        // what FrameSource opens: the sequence folder (img/ or video.mkv)
    std::string groundtruth;  // groundtruth_rect.txt
};

// Every sub-folder of `dir` with a groundtruth_rect.txt and img/ or video.mkv, sorted by name.
// A folder that is itself a sequence counts as a dataset of one.
bool find_sequences(const std::string& dir, std::vector<SequenceInfo>* out, std::string* error);

// One box per line (x,y,w,h; commas, tabs or spaces), OTB 1-based, returned 0-based. A row
// of 8 values is a VOT polygon, read as its upright min/max box. Rows with NaN or an empty box
// (0,0,0,0: target not visible) come back empty. Anything else is refused with the file and
// line: a field that is not a number (",junk"), another count of values, a negative width or
// height.
// At most kMaxGroundTruthBytes are read.
constexpr std::size_t kMaxGroundTruthBytes = 64u << 20;
bool load_groundtruth(const std::string& path, std::vector<std::optional<BoxF>>* out, std::string* error);
// The same from text already read; `name` names it in messages.
bool parse_groundtruth(const std::string& text, const std::string& name, std::vector<std::optional<BoxF>>* out,
                       std::string* error);

double iou(const BoxF& a, const BoxF& b);

constexpr int kSuccessThresholds = 21;    // IoU 0, 0.05, ..., 1
constexpr int kPrecisionThresholds = 51;  // centre error 0..50 px

struct SequenceMetrics {
    double auc = 0;      // mean success rate over the IoU thresholds
    double prec20 = 0;   // share of frames with centre error <= 20 px
    double fps = 0;      // tracker update rate (decode excluded)
    long frames = 0;     // frames tracked
    long evaluated = 0;  // frames with ground truth
    long lost = 0;       // frames the tracker reported lost
    double mean_iou = 0;
    // The confidence signal against the truth: a box is wrong when its IoU is below 0.1.
    long wrong = 0;                 // evaluated frames with a wrong box
    long lost_wrong = 0;            // ... of them flagged lost (the flag was right)
    long lost_right = 0;            // frames flagged lost whose box was not wrong (false alarms)
    std::vector<double> success;    // kSuccessThresholds rates
    std::vector<double> precision;  // kPrecisionThresholds rates
};

// Metrics of `boxes` against `truth` (frames without truth are left out); `lost` holds the
// tracker's per-frame lost flags (may be empty).
SequenceMetrics score_sequence(const std::vector<BoxF>& boxes, const std::vector<std::optional<BoxF>>& truth,
                               const std::vector<char>& lost = {});
// The mean of several runs' or sequences' metrics: every metric and curve point averaged,
// counts (frames, evaluated, lost, ...) summed; as `corrtrack eval` reports it.
SequenceMetrics mean_metrics(const std::vector<SequenceMetrics>& runs);

// One run of the tracker over a sequence: a box and a lost flag per frame (frames before the
// start repeat the start box) and the time spent in the tracker's update.
struct SequenceRun {
    std::vector<BoxF> boxes;
    std::vector<char> lost;
    double track_ms = 0;
};

// Decodes the sequence once and runs `count` trackers from the first frame with ground truth:
// the first from the true box (OTB's one-pass evaluation), the others from sre_starts().
// The trackers work in `gpu` (one thread's context: see app/gpu/gpu_context.h).
bool run_sequence(const SequenceInfo& seq, const std::vector<std::optional<BoxF>>& truth, const TrackerOptions& options,
                  const GpuContext& gpu, int count, std::vector<SequenceRun>* runs, std::string* error);

// OTB's spatial robustness evaluation (SRE): the first box, then up to 12 perturbed copies
// (shifted by 10% of its size in 8 directions, scaled by 0.8, 0.9, 1.1, 1.2), each kept
// inside the frame. `count` boxes in all (1..13).
std::vector<BoxF> sre_starts(const BoxF& first, int count, Size frame);

// One sequence as `corrtrack eval` reports it: loads the ground truth, runs the tracker
// (sre_runs runs, see run_sequence) and scores the boxes, averaged over the runs (fps =
// tracker updates per second of update time). *boxes gets the one-pass run's boxes and
// *truth_rows the ground truth's row count (the CLI warns when it differs from the frames).
bool evaluate_sequence(const SequenceInfo& seq, const TrackerOptions& options, const GpuContext& gpu,
                       SequenceMetrics* metrics, std::vector<BoxF>* boxes, std::size_t* truth_rows, std::string* error,
                       int sre_runs = 1);

}  // namespace corrtrack
