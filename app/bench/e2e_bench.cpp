#include "app/bench/e2e_bench.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>

#include <nlohmann/json.hpp>

#include "app/bench/e2e_clip.h"
#include "app/bench/e2e_streams.h"
#include "app/bench/median_run.h"
#include "app/bench/target_grid.h"
#include "app/cli/cli_common.h"
#include "app/cli/interrupt.h"
#include "app/io/frame_source.h"
#include "app/io/result_writers.h"
#include "app/pipeline/frame_ring.h"
#include "app/pipeline/track_loop.h"
#include "app/track/tracker.h"
#include "corrtrack/correlator.h"
#include "corrtrack/start_trace.h"

namespace corrtrack {
namespace {

// The first SIGINT, SIGTERM or SIGHUP (InterruptGuard, installed by the command): the pass in
// flight stops, no other starts, and the JSON holds the passes done.
bool interrupted() { return InterruptGuard::signal_number() != 0; }

// A run's start against its steady state (issue 30): the first kFirstFrames frames carry the
// one-time costs (timing rounds, allocations, plans, module loading).
constexpr long kFirstFrames = 100;

struct LatencySpread {
    long frames = 0;
    double p50 = 0, p95 = 0, max = 0;
};

LatencySpread spread_of(const std::vector<double>& ms) {
    LatencySpread s;
    s.frames = static_cast<long>(ms.size());
    if (ms.empty()) return s;
    s.p50 = median(ms);
    s.p95 = percentile(ms, 95);
    s.max = *std::max_element(ms.begin(), ms.end());
    return s;
}

nlohmann::json spread_json(const LatencySpread& s) {
    return {{"frames", s.frames}, {"p50_ms", s.p50}, {"p95_ms", s.p95}, {"max_ms", s.max}};
}

struct Pass {
    bool ok = false;
    std::string error, decode_mode, note;
    long frames = 0;
    double seconds = 0, fps = 0;
    double latency_median = 0, latency_p95 = 0;
    double tracking_fps = 0;  // frames after the first over the host time in tracker updates
    StageSamples stages;
    std::vector<std::pair<double, double>> centres;  // target 0, per frame
    std::vector<double> fps_runs;
    int launches = 0;             // correlation launches on the last frame
    LatencySpread first, steady;  // frames 1..kFirstFrames, and the rest
    // Crowding's cost shows here: lost targets re-detect (GPU: over the whole frame).
    long lost_target_frames = 0, redetect_target_frames = 0;
    long late_drops = 0;    // paced: frames more than a frame time late, dropped
    int lost_last = 0;      // targets lost on the last frame
    int redetect_peak = 0;  // most targets re-detecting in one frame
};

// paced: frames come at the clip's timestamps (--realtime), as from a camera, so that a frame's
// latency is its own decode and tracking, not the wait behind frames decoded ahead of it.
Pass run_pass(const std::string& clip, DecodeMode decode, bool track, const std::vector<BoxF>& boxes_in,
              const E2eOptions& o, const GpuContext& gpu, bool paced = false) {
    Pass p;
    start_trace("e2e pass starts", 0,
                clip + ", " + to_string(decode) + ", " +
                    std::to_string(track ? std::max<std::size_t>(1, boxes_in.size()) : 0) + " targets");
    if (interrupted()) {
        p.error = std::string("not run: stopped by ") + InterruptGuard::signal_name();
        return p;
    }
    TrackerOptions to;
    to.kernel = o.kernel;
    to.keep_maps = false;  // no heatmap: the pure tracking cost
    MultiTracker tracker(to, gpu);
    if (!tracker.set_kernel(o.kernel, &p.error)) return p;
    SessionOptions so;
    so.source.input = clip;
    so.source.stop = &InterruptGuard::flag();
    so.decode = decode;
    so.slots = 6;
    auto session = FrameSession::open(tracker, so, &p.error);
    if (!session) return p;
    p.decode_mode = session->decode_mode();
    p.note = session->decode_note();
    std::vector<BoxF> boxes = boxes_in;
    if (boxes.empty()) {
        const Size s = session->size();
        boxes.push_back({s.width / 2.0 - 32, s.height / 2.0 - 32, 64, 64});
    }
    TrackLoopOptions lo;
    lo.pacing.max_frames = o.frames;
    lo.pacing.realtime = paced;
    lo.pacing.stop = &InterruptGuard::flag();
    lo.track = track;
    TrackLoopStats st;
    const bool trace = start_trace_enabled();
    auto on_frame = [&](const LoopFrame&, std::vector<TrackResult>& results, std::string*) {
        // The trace names the slow frames of the start, between the one-time costs it lists.
        const long frame = static_cast<long>(st.latency_ms.size());
        if (trace && frame <= kFirstFrames && !st.latency_ms.empty() && (frame <= 5 || st.latency_ms.back() > 5.0))
            start_trace("e2e frame latency", st.latency_ms.back(), "frame " + std::to_string(frame));
        if (track && !results.empty()) {
            p.stages.add(results[0].times);
            p.centres.emplace_back(results[0].sub_cx, results[0].sub_cy);
            int lost = 0, redetect = 0;
            for (const TrackResult& r : results) {
                lost += r.lost;
                redetect += r.redetected;
            }
            p.lost_target_frames += lost;
            p.redetect_target_frames += redetect;
            p.lost_last = lost;
            p.redetect_peak = std::max(p.redetect_peak, redetect);
        }
        return true;
    };
    if (run_track_loop(*session, boxes, lo, on_frame, &st, &p.error) != 0) return p;
    if (st.stopped || interrupted()) {  // a part of a pass is no measurement
        p.error = std::string("stopped by ") + InterruptGuard::signal_name();
        return p;
    }
    if (!session->error().empty()) {
        p.error = session->error();
        return p;
    }
    p.ok = true;
    p.frames = st.frames;
    p.late_drops = st.late_drops;
    p.seconds = st.seconds;
    p.fps = st.frames / std::max(st.seconds, 1e-9);
    p.latency_median = median(st.latency_ms);
    p.latency_p95 = percentile(st.latency_ms, 95);
    p.tracking_fps = st.frames > 1 && st.track_ms > 0 ? (st.frames - 1) * 1000.0 / st.track_ms : 0.0;
    p.launches = tracker.last_correlation_launches();
    const auto split = st.latency_ms.begin() + std::min<long>(kFirstFrames, st.latency_ms.size());
    p.first = spread_of({st.latency_ms.begin(), split});
    p.steady = spread_of({split, st.latency_ms.end()});
    return p;
}

// The median-fps pass of `repeats` runs (its other figures come with it).
Pass best_of(const std::string& clip, DecodeMode decode, bool track, const std::vector<BoxF>& boxes,
             const E2eOptions& o, const GpuContext& gpu) {
    return median_of_runs(o.repeats, [&] { return run_pass(clip, decode, track, boxes, o, gpu); });
}

nlohmann::json stage_json(const StageSamples& s) {
    nlohmann::json j;
    const std::pair<const char*, const std::vector<double>*> stages[] = {
        {"decode", &s.decode}, {"upload", &s.upload}, {"correlate", &s.correlate}, {"peak", &s.peak}};
    for (const auto& [name, v] : stages) j[name] = {{"median_ms", median(*v)}, {"p95_ms", percentile(*v, 95)}};
    return j;
}

bool wanted(const E2eOptions& o, DecodeMode mode) {
    return std::find(o.decoders.begin(), o.decoders.end(), mode) != o.decoders.end();
}

void print_targets_header(const E2eOptions& o) {
    if (o.layout == TargetLayout::kCrowded) {
        const CrowdPitch p = crowd_pitch(o.target_size.width, o.target_size.height);
        std::printf(
            "\ntargets (layout crowded): N boxes of %dx%d, %d a row from (%d,%d), %d px apart across and %d down "
            "(overlapping by %d px); one tracker pass per frame\n",
            o.target_size.width, o.target_size.height, kCrowdColumns, kCrowdOrigin, kCrowdOrigin, p.across, p.down,
            std::max(0, o.target_size.height - p.down));
    } else {
        std::printf(
            "\ntargets (layout grid): N boxes of %dx%d on a grid, each where its cell's first frame has the most "
            "texture; one tracker pass per frame\n",
            o.target_size.width, o.target_size.height);
    }
    std::printf("%-22s %-6s %7s %7s %12s %12s %14s %17s %9s %-7s %s\n", "clip", "decode", "targets", "frames",
                "tracking fps", "e2e fps", "correlate med", "latency med/p95", "textured", "grid",
                "lost t-frames / at end / most re-detecting at once");
}

// One row per target count and decoder (sw, nvdec of o.decoders).
nlohmann::json targets_rows(const E2eClip& clip, const E2eOptions& o, const GpuContext& gpu, int* rc) {
    nlohmann::json rows = nlohmann::json::array();
    const bool nvdec = wanted(o, DecodeMode::kNvdec) && clip.nvdec;
    if (wanted(o, DecodeMode::kNvdec) && !clip.nvdec) {
        std::printf("%-22s %-6s %s\n", clip.name.c_str(), "nvdec", clip.nvdec_note.c_str());
        rows.push_back({{"decode", "nvdec"}, {"unavailable", clip.nvdec_note}});
    }
    for (const int n : o.targets) {
        const TargetGrid grid = layout_targets(o.layout, clip.first_luma.data(), clip.size.width, clip.size.height,
                                               o.target_size.width, o.target_size.height, n);
        if (grid.boxes.empty()) {
            std::fprintf(stderr, "corrtrack bench --e2e: %s: %dx%d targets do not fit a %dx%d frame\n",
                         clip.path.c_str(), o.target_size.width, o.target_size.height, clip.size.width,
                         clip.size.height);
            *rc = 1;
            return rows;
        }
        for (const DecodeMode mode : {DecodeMode::kSoftware, DecodeMode::kNvdec}) {
            if (mode == DecodeMode::kSoftware ? !wanted(o, mode) : !nvdec) continue;
            if (interrupted()) return rows;
            // The first pass of a target count is the coldest of this process (auto's rounds,
            // the tracker's buffers); the median pass is what repeats look like.
            Pass cold;
            int run = 0;
            const Pass p = median_of_runs(o.repeats, [&] {
                Pass r = run_pass(clip.path, mode, true, grid.boxes, o, gpu, o.realtime);
                if (run++ == 0) cold = r;
                return r;
            });
            if (interrupted()) return rows;
            if (!p.ok) {
                std::fprintf(stderr, "corrtrack bench --e2e: %s: %d targets: %s\n", clip.path.c_str(), n,
                             p.error.c_str());
                *rc = 1;
                continue;
            }
            char textured[32], cells[32];
            const int placed = static_cast<int>(grid.boxes.size());
            std::snprintf(textured, sizeof textured, "%d/%d", grid.textured, placed);
            std::snprintf(cells, sizeof cells, "%dx%d", grid.cols, grid.rows);
            const double correlate = median(p.stages.correlate);
            std::printf("%-22s %-6s %7d %7ld %12.1f %12.1f %11.3f ms %8.2f / %6.2f %9s %-7s %ld / %d / %d\n",
                        clip.name.c_str(), p.decode_mode.c_str(), placed, p.frames, p.tracking_fps, p.fps, correlate,
                        p.latency_median, p.latency_p95, textured, cells, p.lost_target_frames, p.lost_last,
                        p.redetect_peak);
            std::printf(
                "%-22s   first %ld frames: p50 / p95 / max %.2f / %.2f / %.2f ms on pass 1 (cold), "
                "%.2f / %.2f / %.2f ms on the median pass; steady (frames %ld-%ld): %.2f / %.2f / %.2f ms\n",
                "", cold.first.frames, cold.first.p50, cold.first.p95, cold.first.max, p.first.p50, p.first.p95,
                p.first.max, kFirstFrames + 1, p.frames, p.steady.p50, p.steady.p95, p.steady.max);
            if (o.realtime)
                std::printf(
                    "%-22s   paced to the clip's timestamps (--realtime): %ld frames dropped late on pass 1, "
                    "%ld on the median pass\n",
                    "", cold.late_drops, p.late_drops);
            std::fflush(stdout);
            rows.push_back({{"decode", p.decode_mode},
                            {"layout", to_string(o.layout)},
                            {"targets", placed},
                            {"targets_asked", n},
                            {"target_size", {o.target_size.width, o.target_size.height}},
                            {"grid", {grid.cols, grid.rows}},
                            {"textured", grid.textured},
                            {"min_std_dev", *std::min_element(grid.std_dev.begin(), grid.std_dev.end())},
                            {"frames", p.frames},
                            {"tracking_fps", p.tracking_fps},
                            {"decode_track_fps", p.fps},
                            {"decode_track_fps_runs", p.fps_runs},
                            {"correlate_median_ms", correlate},
                            {"latency_ms", {{"median", p.latency_median}, {"p95", p.latency_p95}}},
                            {"first_frames_latency",
                             {{"cold_pass", spread_json(cold.first)}, {"median_pass", spread_json(p.first)}}},
                            {"steady_latency", spread_json(p.steady)},
                            {"cold_pass_fps", cold.fps},
                            {"realtime", o.realtime},
                            {"late_dropped", {{"cold_pass", cold.late_drops}, {"median_pass", p.late_drops}}},
                            {"stages", stage_json(p.stages)},
                            {"correlation_launches_per_frame", p.launches},
                            {"lost_target_frames", p.lost_target_frames},
                            {"lost_on_last_frame", p.lost_last},
                            {"redetect_target_frames", p.redetect_target_frames},
                            {"most_redetecting_in_a_frame", p.redetect_peak}});
        }
    }
    return rows;
}

}  // namespace

int run_e2e_bench(const E2eOptions& o) {
    std::vector<BoxF> boxes;
    std::string error;
    if (!parse_boxes(o.boxes, &boxes, &error)) {
        std::fprintf(stderr, "corrtrack bench --e2e: %s\n", error.c_str());
        return kExitUsage;
    }
    const std::string kernel = resolve_kernel_name(o.kernel);
    if (std::string why; !make_correlator(kernel, &why)) {
        std::fprintf(stderr, "corrtrack bench --e2e: %s\n", why.c_str());
        return kExitUsage;
    }
    // Every pass, one after another, tracks and decodes in this one GPU context.
    const GpuContext gpu;
    nlohmann::json doc = {{"gpu", cuda_device_description()},
                          {"kernel", kernel},
                          {"repeats", o.repeats},
                          {"frames_per_pass", o.frames},
                          {"decoders", nlohmann::json::array()},
                          {"target_counts", o.targets},
                          {"target_size", {o.target_size.width, o.target_size.height}},
                          {"target_layout", to_string(o.layout)},
                          {"stream_counts", o.streams},
                          {"realtime", o.realtime},
                          {"nvdec_streams", o.nvdec_streams},
                          {"nvdec_rate", o.nvdec_rate},
                          {"clips", nlohmann::json::array()}};
    for (const DecodeMode mode : o.decoders) doc["decoders"].push_back(to_string(mode));
    if (!o.targets_only)
        std::printf("%-22s %-6s %7s %12s %12s %9s %17s %s\n", "clip", "decode", "frames", "decode fps", "+track fps",
                    "overhead", "latency med/p95", "per-frame medians (decode / upload / correlate / peak ms)");
    int rc = 0;
    for (const std::string& clip : o.clips) {
        nlohmann::json cj = {{"clip", clip}, {"modes", nlohmann::json::array()}};
        // --targets-only: the targets passes come first in the process, as cold as a new run.
        if (o.targets_only) {
            doc["clips"].push_back(cj);
            continue;
        }
        std::vector<std::pair<double, double>> sw_centres, nvdec_centres;
        for (DecodeMode mode : {DecodeMode::kSoftware, DecodeMode::kNvdec}) {
            if (!wanted(o, mode) || interrupted()) continue;
            const Pass decode_only = best_of(clip, mode, false, boxes, o, gpu);
            if (interrupted()) continue;
            if (!decode_only.ok) {
                std::fprintf(stderr, "corrtrack bench --e2e: %s: %s\n", clip.c_str(), decode_only.error.c_str());
                rc = 1;
                continue;
            }
            if (mode == DecodeMode::kNvdec && decode_only.decode_mode != "nvdec") {
                std::printf("%-22s %-6s %s\n", clip.c_str(), "nvdec", decode_only.note.c_str());
                cj["modes"].push_back({{"decode", "nvdec"}, {"unavailable", decode_only.note}});
                continue;
            }
            const Pass tracked = best_of(clip, mode, true, boxes, o, gpu);
            if (interrupted()) continue;
            if (!tracked.ok) {
                std::fprintf(stderr, "corrtrack bench --e2e: %s: %s\n", clip.c_str(), tracked.error.c_str());
                rc = 1;
                continue;
            }
            (mode == DecodeMode::kSoftware ? sw_centres : nvdec_centres) = tracked.centres;
            const double overhead = decode_only.fps / std::max(tracked.fps, 1e-9) - 1.0;
            const StageSamples& s = tracked.stages;
            std::string name = clip.substr(clip.find_last_of('/') + 1);
            std::printf("%-22s %-6s %7ld %12.1f %12.1f %8.1f%% %8.2f / %6.2f   %.3f / %.3f / %.3f / %.3f\n",
                        name.c_str(), decode_only.decode_mode.c_str(), tracked.frames, decode_only.fps, tracked.fps,
                        100 * overhead, tracked.latency_median, tracked.latency_p95, median(s.decode), median(s.upload),
                        median(s.correlate), median(s.peak));
            cj["modes"].push_back(
                {{"decode", decode_only.decode_mode},
                 {"frames", tracked.frames},
                 {"decode_only_fps", decode_only.fps},
                 {"decode_only_fps_runs", decode_only.fps_runs},
                 {"decode_track_fps", tracked.fps},
                 {"decode_track_fps_runs", tracked.fps_runs},
                 {"tracking_overhead", overhead},
                 {"latency_ms", {{"median", tracked.latency_median}, {"p95", tracked.latency_p95}}},
                 {"decode_only_latency_ms", {{"median", decode_only.latency_median}, {"p95", decode_only.latency_p95}}},
                 {"stages", stage_json(s)},
                 {"correlation_launches_per_frame", tracked.launches}});
        }
        if (!sw_centres.empty() && sw_centres.size() == nvdec_centres.size()) {
            double worst = 0;
            for (std::size_t i = 0; i < sw_centres.size(); ++i)
                worst = std::max(worst, std::hypot(sw_centres[i].first - nvdec_centres[i].first,
                                                   sw_centres[i].second - nvdec_centres[i].second));
            std::printf("%-22s NVDEC vs software decode: track centres differ by at most %.3f px\n", "", worst);
            cj["sw_vs_nvdec_max_centre_px"] = worst;
        }
        doc["clips"].push_back(cj);
    }
    // Many targets, then many streams, per clip.
    if ((!o.targets.empty() || !o.streams.empty()) && !interrupted()) {
        std::vector<E2eClip> clips;
        for (const std::string& path : o.clips) {
            E2eClip clip;
            if (!probe_e2e_clip(path, o.kernel, &clip, &error)) {
                std::fprintf(stderr, "corrtrack bench --e2e: %s\n", error.c_str());
                rc = 1;
            }
            clips.push_back(std::move(clip));
        }
        if (!o.targets.empty()) {
            print_targets_header(o);
            for (std::size_t i = 0; i < clips.size(); ++i)
                if (!clips[i].first_luma.empty()) doc["clips"][i]["targets"] = targets_rows(clips[i], o, gpu, &rc);
        }
        if (!o.streams.empty()) {
            print_streams_header(o);
            for (std::size_t i = 0; i < clips.size(); ++i) {
                if (clips[i].first_luma.empty()) continue;
                std::vector<BoxF> stream_boxes = boxes;
                if (stream_boxes.empty())
                    stream_boxes.push_back({clips[i].size.width / 2.0 - 32, clips[i].size.height / 2.0 - 32, 64, 64});
                doc["clips"][i]["streams"] = run_streams_rows(clips[i], stream_boxes, o, kernel, &rc);
            }
        }
    }
    doc["interrupted"] = interrupted() ? nlohmann::json(InterruptGuard::signal_name()) : nlohmann::json(nullptr);
    if (!o.json.empty() && !write_json_file(o.json, doc, &error)) {
        std::fprintf(stderr, "corrtrack bench --e2e: %s\n", error.c_str());
        rc = 1;
    }
    if (interrupted()) {
        std::fprintf(stderr, "corrtrack bench --e2e: stopped by %s; the results hold the passes done\n",
                     InterruptGuard::signal_name());
        return InterruptGuard::exit_code();
    }
    return rc;
}

}  // namespace corrtrack
