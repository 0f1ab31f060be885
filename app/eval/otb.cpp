#include "app/eval/otb.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/pipeline/frame_ring.h"

namespace corrtrack {
namespace fs = std::filesystem;

namespace {

bool is_sequence_dir(const fs::path& d) {
    return fs::exists(d / "groundtruth_rect.txt") && (fs::is_directory(d / "img") || fs::exists(d / "video.mkv"));
}

}  // namespace

bool find_sequences(const std::string& dir, std::vector<SequenceInfo>* out, std::string* error) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        *error = "dataset '" + dir + "' is not a folder";
        return false;
    }
    auto add = [&](const fs::path& d) {
        out->push_back({d.filename().string(), d.string(), (d / "groundtruth_rect.txt").string()});
    };
    if (is_sequence_dir(dir)) {
        add(fs::path(dir).lexically_normal());
        if (out->back().name.empty()) out->back().name = fs::path(dir).parent_path().filename().string();
        return true;
    }
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.is_directory() && is_sequence_dir(e.path())) add(e.path());
    std::sort(out->begin(), out->end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    if (out->empty()) {
        *error = "no sequences in '" + dir + "' (expected <name>/groundtruth_rect.txt with img/ or video.mkv)";
        return false;
    }
    return true;
}

bool load_groundtruth(const std::string& path, std::vector<std::optional<BoxF>>* out, std::string* error) {
    std::ifstream in(path);
    if (!in) {
        *error = "cannot read ground truth '" + path + "'";
        return false;
    }
    std::string line;
    long n = 0;
    while (std::getline(in, line)) {
        ++n;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        std::replace_if(line.begin(), line.end(), [](char c) { return c == ',' || c == '\t' || c == '\r'; }, ' ');
        std::istringstream ls(line);
        std::string tok[4];
        double v[4];
        bool nan = false;
        for (int i = 0; i < 4; ++i) {
            if (!(ls >> tok[i])) {
                *error = path + ":" + std::to_string(n) + ": expected x,y,w,h";
                return false;
            }
            char* end = nullptr;
            v[i] = std::strtod(tok[i].c_str(), &end);
            if (end == tok[i].c_str() || *end != '\0') {
                *error = path + ":" + std::to_string(n) + ": '" + tok[i] + "' is not a number";
                return false;
            }
            nan = nan || std::isnan(v[i]);
        }
        if (nan || v[2] <= 0 || v[3] <= 0)
            out->push_back(std::nullopt);
        else
            out->push_back(BoxF{v[0] - 1, v[1] - 1, v[2], v[3]});
    }
    if (out->empty()) {
        *error = "ground truth '" + path + "' is empty";
        return false;
    }
    return true;
}

double iou(const BoxF& a, const BoxF& b) {
    const double ix = std::max(0.0, std::min(a.x + a.width, b.x + b.width) - std::max(a.x, b.x));
    const double iy = std::max(0.0, std::min(a.y + a.height, b.y + b.height) - std::max(a.y, b.y));
    const double inter = ix * iy;
    const double uni = a.width * a.height + b.width * b.height - inter;
    return uni > 0 ? inter / uni : 0.0;
}

SequenceMetrics score_sequence(const std::vector<BoxF>& boxes, const std::vector<std::optional<BoxF>>& truth) {
    SequenceMetrics m;
    m.frames = static_cast<long>(boxes.size());
    m.success.assign(kSuccessThresholds, 0.0);
    m.precision.assign(kPrecisionThresholds, 0.0);
    const std::size_t n = std::min(boxes.size(), truth.size());
    double iou_sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (!truth[i]) continue;
        ++m.evaluated;
        const double o = iou(boxes[i], *truth[i]);
        const double err = std::hypot(boxes[i].cx() - truth[i]->cx(), boxes[i].cy() - truth[i]->cy());
        iou_sum += o;
        for (int t = 0; t < kSuccessThresholds; ++t)
            if (o > t / 20.0) m.success[t] += 1;
        for (int t = 0; t < kPrecisionThresholds; ++t)
            if (err <= t) m.precision[t] += 1;
    }
    if (m.evaluated > 0) {
        for (double& s : m.success) s /= m.evaluated;
        for (double& p : m.precision) p /= m.evaluated;
        m.mean_iou = iou_sum / m.evaluated;
    }
    double auc = 0;
    for (double s : m.success) auc += s;
    m.auc = auc / kSuccessThresholds;
    m.prec20 = m.precision[20];
    return m;
}

bool run_sequence(const SequenceInfo& seq, const std::vector<std::optional<BoxF>>& truth,
                  const TrackerOptions& options, std::vector<BoxF>* boxes, double* track_ms,
                  long* lost_frames, std::string* error) {
    const auto first = std::find_if(truth.begin(), truth.end(), [](const auto& b) { return b.has_value(); });
    if (first == truth.end()) {
        *error = seq.name + ": ground truth has no visible target";
        return false;
    }
    const long start = first - truth.begin();
    SourceOptions so;
    so.input = seq.input;
    so.want_rgb = false;
    auto source = FrameSource::open(so, error);
    if (!source) return false;
    FramePipeline pipeline(std::move(source), 4);
    Tracker tracker(options);
    *track_ms = 0;
    *lost_frames = 0;
    long index = 0;
    while (const Frame* f = pipeline.acquire()) {
        if (index < start) {
            boxes->push_back(**first);
        } else if (index == start) {
            if (!tracker.init(f->luma_view(), **first, error)) {
                *error = seq.name + ": " + *error;
                pipeline.release(f);
                return false;
            }
            boxes->push_back(**first);
        } else {
            const auto t0 = std::chrono::steady_clock::now();
            const TrackResult r = tracker.update(f->luma_view());
            *track_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            boxes->push_back(r.box);
            if (r.lost) ++*lost_frames;
        }
        ++index;
        pipeline.release(f);
    }
    if (!pipeline.error().empty()) {
        *error = seq.name + ": " + pipeline.error();
        return false;
    }
    return true;
}

bool evaluate_sequence(const SequenceInfo& seq, const TrackerOptions& options, SequenceMetrics* metrics,
                       std::vector<BoxF>* boxes, std::size_t* truth_rows, std::string* error) {
    std::vector<std::optional<BoxF>> truth;
    double track_ms = 0;
    long lost = 0;
    boxes->clear();
    if (!load_groundtruth(seq.groundtruth, &truth, error) ||
        !run_sequence(seq, truth, options, boxes, &track_ms, &lost, error))
        return false;
    *truth_rows = truth.size();
    *metrics = score_sequence(*boxes, truth);
    metrics->lost = lost;
    metrics->fps = boxes->size() > 1 ? (boxes->size() - 1) * 1000.0 / std::max(track_ms, 1e-9) : 0.0;
    return true;
}

SequenceMetrics mean_metrics(const std::vector<SequenceMetrics>& per) {
    SequenceMetrics mean;
    mean.success.assign(kSuccessThresholds, 0.0);
    mean.precision.assign(kPrecisionThresholds, 0.0);
    const double n = static_cast<double>(per.size());
    for (const SequenceMetrics& m : per) {
        mean.auc += m.auc / n;
        mean.prec20 += m.prec20 / n;
        mean.fps += m.fps / n;
        mean.mean_iou += m.mean_iou / n;
        mean.frames += m.frames;
        mean.evaluated += m.evaluated;
        mean.lost += m.lost;
        for (int t = 0; t < kSuccessThresholds; ++t) mean.success[t] += m.success[t] / n;
        for (int t = 0; t < kPrecisionThresholds; ++t) mean.precision[t] += m.precision[t] / n;
    }
    return mean;
}

}  // namespace corrtrack
