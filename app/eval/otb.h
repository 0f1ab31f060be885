// OTB one-pass evaluation: dataset discovery, ground truth, running the tracker over each
// sequence, and the success (IoU AUC) and precision (centre error) metrics.
// Thread rules: plain functions; run_sequence drives its own frame pipeline.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/track/tracker.h"

namespace corrtrack {

struct SequenceInfo {
    std::string name;
    std::string input;        // what FrameSource opens: the sequence folder (img/ or video.mkv)
    std::string groundtruth;  // groundtruth_rect.txt
};

// Every sub-folder of `dir` with a groundtruth_rect.txt and img/ or video.mkv, sorted by name.
// A folder that is itself a sequence counts as a dataset of one.
bool find_sequences(const std::string& dir, std::vector<SequenceInfo>* out, std::string* error);

// One box per line (x,y,w,h; commas, tabs or spaces), OTB 1-based, returned 0-based.
// Rows of NaN (target not visible) come back empty.
bool load_groundtruth(const std::string& path, std::vector<std::optional<BoxF>>* out, std::string* error);

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
    std::vector<double> success;    // kSuccessThresholds rates
    std::vector<double> precision;  // kPrecisionThresholds rates
};

// Metrics of `boxes` against `truth` (frames without truth are left out).
SequenceMetrics score_sequence(const std::vector<BoxF>& boxes, const std::vector<std::optional<BoxF>>& truth);

// Runs the tracker from the first frame with ground truth; returns the boxes per frame
// (frames before the start repeat the start box) and the update time in ms.
bool run_sequence(const SequenceInfo& seq, const std::vector<std::optional<BoxF>>& truth,
                  const TrackerOptions& options, std::vector<BoxF>* boxes, double* track_ms,
                  long* lost_frames, std::string* error);

// One sequence as `corrtrack eval` reports it: loads the ground truth, runs the tracker and
// scores the boxes (lost frames; fps = tracker updates per second of update time).
// *truth_rows gets the ground truth's row count (the CLI warns when it differs from the frames).
bool evaluate_sequence(const SequenceInfo& seq, const TrackerOptions& options, SequenceMetrics* metrics,
                       std::vector<BoxF>* boxes, std::size_t* truth_rows, std::string* error);

// The dataset's mean: every metric and every curve point averaged over the sequences
// (frames and evaluated frames summed), as `corrtrack eval` reports it.
SequenceMetrics mean_metrics(const std::vector<SequenceMetrics>& per);

}  // namespace corrtrack
