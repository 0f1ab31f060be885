#include "app/eval/otb.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "app/io/output_file.h"
#include "app/pipeline/frame_ring.h"
#include "app/pipeline/frame_upload.h"
#include "app/util/stats.h"
#include "app/track/tracker.h"

namespace corrtrack {
namespace fs = std::filesystem;

namespace {

// "%g" of a value for messages.
std::string tok_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

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
    std::string text;
    switch (read_text_file(path, kMaxGroundTruthBytes, &text)) {
    case TextRead::kOk: break;
    case TextRead::kTooLarge:
        *error = "ground truth '" + path + "' is larger than " + std::to_string(kMaxGroundTruthBytes) + " bytes";
        return false;
    case TextRead::kFailed: *error = "cannot read ground truth '" + path + "'"; return false;
    }
    return parse_groundtruth(text, path, out, error);
}

bool parse_groundtruth(const std::string& text, const std::string& path, std::vector<std::optional<BoxF>>* out,
                       std::string* error) {
    std::istringstream in(text);
    std::string line;
    long n = 0;
    while (std::getline(in, line)) {
        ++n;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        std::replace_if(
            line.begin(), line.end(), [](char c) { return c == ',' || c == '\t' || c == '\r'; }, ' ');
        std::istringstream ls(line);
        const std::string at = path + ":" + std::to_string(n) + ": ";
        // Every field a number: a row ending in ",junk" is refused, never read as its first four.
        std::vector<double> v;
        bool nan = false;
        for (std::string tok; ls >> tok;) {
            char* end = nullptr;
            const double x = std::strtod(tok.c_str(), &end);
            if (end == tok.c_str() || *end != '\0') {
                const std::string shown = tok.size() > 40 ? tok.substr(0, 40) + "..." : tok;
                *error = at + "'" + shown + "' is not a number";
                return false;
            }
            nan = nan || !std::isfinite(x);  // NaN (not visible), or inf: no usable box
            v.push_back(x);
        }
        if (v.size() != 4 && v.size() != 8) {
            *error = at + "expected x,y,w,h or a polygon of 4 points (8 values), got " + std::to_string(v.size()) +
                     " values";
            return false;
        }
        if (nan) {
            out->push_back(std::nullopt);
            continue;
        }
        if (v.size() == 8) {  // a VOT polygon: its upright min/max box, as the datasets' boxes
            const double x0 = std::min({v[0], v[2], v[4], v[6]}), x1 = std::max({v[0], v[2], v[4], v[6]});
            const double y0 = std::min({v[1], v[3], v[5], v[7]}), y1 = std::max({v[1], v[3], v[5], v[7]});
            v = {x0, y0, x1 - x0, y1 - y0};
            if (!std::isfinite(v[2]) || !std::isfinite(v[3])) {  // corners 1e308 apart
                out->push_back(std::nullopt);
                continue;
            }
        }
        if (v[2] < 0 || v[3] < 0) {
            *error = at + "negative width or height (" + tok_text(v[2]) + "," + tok_text(v[3]) + ")";
            return false;
        }
        // 0,0,0,0 and other empty boxes: the target is not visible (OTB's convention).
        if (v[2] == 0 || v[3] == 0)
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

SequenceMetrics score_sequence(const std::vector<BoxF>& boxes, const std::vector<std::optional<BoxF>>& truth,
                               const std::vector<char>& lost) {
    SequenceMetrics m;
    m.frames = static_cast<long>(boxes.size());
    m.success.assign(kSuccessThresholds, 0.0);
    m.precision.assign(kPrecisionThresholds, 0.0);
    const std::size_t n = std::min(boxes.size(), truth.size());
    double iou_sum = 0;
    for (std::size_t i = 0; i < boxes.size() && i < lost.size(); ++i) m.lost += lost[i] != 0;
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
        const bool wrong = o < 0.1, flagged = i < lost.size() && lost[i];
        m.wrong += wrong;
        m.lost_wrong += wrong && flagged;
        m.lost_right += !wrong && flagged;
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

SequenceMetrics mean_metrics(const std::vector<SequenceMetrics>& runs) {
    SequenceMetrics m;
    m.success.assign(kSuccessThresholds, 0.0);
    m.precision.assign(kPrecisionThresholds, 0.0);
    if (runs.empty()) return m;
    const double k = 1.0 / runs.size();
    for (const SequenceMetrics& r : runs) {
        m.auc += r.auc * k;
        m.prec20 += r.prec20 * k;
        m.fps += r.fps * k;
        m.mean_iou += r.mean_iou * k;
        m.frames += r.frames;
        m.evaluated += r.evaluated;
        m.lost += r.lost;
        m.wrong += r.wrong;
        m.lost_wrong += r.lost_wrong;
        m.lost_right += r.lost_right;
        for (int t = 0; t < kSuccessThresholds; ++t) m.success[t] += r.success[t] * k;
        for (int t = 0; t < kPrecisionThresholds; ++t) m.precision[t] += r.precision[t] * k;
    }
    return m;
}

std::vector<BoxF> sre_starts(const BoxF& first, int count, Size frame) {
    std::vector<BoxF> out{first};
    const double sx = 0.1 * first.width, sy = 0.1 * first.height;
    const double shifts[8][2] = {{-1, 0}, {1, 0}, {0, -1}, {0, 1}, {-1, -1}, {1, -1}, {-1, 1}, {1, 1}};
    for (const auto& d : shifts) out.push_back({first.x + d[0] * sx, first.y + d[1] * sy, first.width, first.height});
    for (double f : {0.8, 0.9, 1.1, 1.2})
        out.push_back(
            {first.cx() - first.width * f / 2, first.cy() - first.height * f / 2, first.width * f, first.height * f});
    out.resize(std::clamp<std::size_t>(count, 1, out.size()));
    for (BoxF& b : out) {  // inside the frame, as the tracker requires
        b.width = std::min(b.width, static_cast<double>(frame.width));
        b.height = std::min(b.height, static_cast<double>(frame.height));
        b.x = std::clamp(b.x, 0.0, frame.width - b.width);
        b.y = std::clamp(b.y, 0.0, frame.height - b.height);
    }
    return out;
}

bool run_sequence(const SequenceInfo& seq, const std::vector<std::optional<BoxF>>& truth, const TrackerOptions& options,
                  const GpuContext& gpu, int count, std::vector<SequenceRun>* runs, std::string* error) {
    const auto first = std::find_if(truth.begin(), truth.end(), [](const auto& b) { return b.has_value(); });
    if (first == truth.end()) {
        *error = seq.name + ": ground truth has no visible target";
        return false;
    }
    const long start = first - truth.begin();
    // The scores and update fps need no per-stage split (on the GPU it costs timed events).
    TrackerOptions tracking = options;
    tracking.stage_times = false;
    SourceOptions so;
    so.input = seq.input;
    so.want_rgb = false;
    so.want_yuv = options.colour > 0;  // the colour cue reads the decoder's chroma planes
    auto source = FrameSource::open(so, error);
    if (!source) return false;
    FramePipeline pipeline(std::move(source), 4);
    std::vector<std::unique_ptr<Tracker>> trackers;
    runs->assign(std::max(1, count), SequenceRun{});
    std::vector<BoxF> starts(runs->size(), **first);
    // A GPU tracker gets its frames as `corrtrack track` gives them: copied to the device on
    // the uploader's copy stream one frame ahead, so that frame n + 1's copy overlaps the
    // tracking of frame n. (One run only: SRE's runs each have their own stream.)
    std::unique_ptr<FrameUploader> uploader;
    long index = 0;
    const Frame* f = pipeline.acquire();
    int slot = -1;  // f's device copy, or -1
    while (f) {
        const bool looked_ahead = uploader != nullptr;
        const Frame* next = nullptr;
        int next_slot = -1;
        if (looked_ahead) {
            next = pipeline.acquire();
            if (next) next_slot = uploader->upload(*next);
        }
        if (index == start) {
            starts = sre_starts(**first, static_cast<int>(runs->size()), f->size());
            // The one-pass run starts from the true box as given: one outside the frame is
            // refused by the tracker, as `track` refuses it, never clamped into the frame and
            // scored. Only SRE's perturbed copies are kept inside.
            starts[0] = **first;
        }
        for (std::size_t k = 0; k < starts.size(); ++k) {
            SequenceRun& run = (*runs)[k];
            if (index < start) {
                run.boxes.push_back(starts[k]);
                run.lost.push_back(0);
            } else if (index == start) {
                trackers.push_back(std::make_unique<Tracker>(tracking, gpu));
                std::string why;
                if (!trackers.back()->init(f->frame_view(), starts[k], &why)) {
                    *error = seq.name + ": " +
                             (k == 0 ? "first ground-truth box (frame " + std::to_string(start) + "): " : "") + why;
                    pipeline.release(f);
                    if (next) pipeline.release(next);
                    return false;
                }
                run.boxes.push_back(starts[k]);
                run.lost.push_back(0);
            } else {
                const auto t0 = std::chrono::steady_clock::now();
                Tracker& tracker = *trackers[k];
                const TrackResult r = tracker.update(
                    slot >= 0 ? f->frame_view().with_device_luma(uploader->device_view(slot, tracker.stream()))
                              : f->frame_view());
                if (slot >= 0) uploader->done(slot, tracker.stream());
                run.track_ms += ms_since(t0);
                run.boxes.push_back(r.box);
                run.lost.push_back(r.lost);
            }
        }
        if (index == start && trackers.size() == 1 && trackers.front()->on_gpu() && f->has_host_luma())
            uploader = std::make_unique<FrameUploader>(gpu);
        ++index;
        if (slot >= 0)
            while (!uploader->copied(slot)) std::this_thread::yield();  // long done: a frame ago
        pipeline.release(f);
        f = looked_ahead ? next : pipeline.acquire();
        slot = next_slot;
    }
    if (!pipeline.error().empty()) {
        *error = seq.name + ": " + pipeline.error();
        return false;
    }
    return true;
}

bool evaluate_sequence(const SequenceInfo& seq, const TrackerOptions& options, const GpuContext& gpu,
                       SequenceMetrics* metrics, std::vector<BoxF>* boxes, std::size_t* truth_rows, std::string* error,
                       int sre_runs) {
    std::vector<std::optional<BoxF>> truth;
    std::vector<SequenceRun> runs;
    if (!load_groundtruth(seq.groundtruth, &truth, error) ||
        !run_sequence(seq, truth, options, gpu, sre_runs, &runs, error))
        return false;
    std::vector<SequenceMetrics> per_run;
    double ms = 0;
    long updates = 0;
    for (const SequenceRun& r : runs) {
        per_run.push_back(score_sequence(r.boxes, truth, r.lost));
        ms += r.track_ms;
        updates += std::max<long>(0, static_cast<long>(r.boxes.size()) - 1);
    }
    *metrics = mean_metrics(per_run);
    metrics->fps = updates > 0 ? updates * 1000.0 / std::max(ms, 1e-9) : 0.0;
    *boxes = runs.front().boxes;
    *truth_rows = truth.size();
    return true;
}

}  // namespace corrtrack
