#include "app/bench/e2e_streams.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "app/bench/median_run.h"
#include "app/cli/interrupt.h"
#include "app/cli/track_streams.h"
#include "app/pipeline/frame_session.h"
#include "app/util/stats.h"

namespace corrtrack {
namespace {

struct StreamsPass {
    bool ok = false;
    std::string error;
    long frames = 0;
    double seconds = 0, fps = 0;
    std::vector<double> latency_ms;  // every frame of every stream
    long live = 0, late = 0;         // drops, all streams
    long worst_live = 0, worst_late = 0;
    int on_nvdec = 0, on_cpu = 0;
    std::vector<DecodeMode> decoders;  // what each stream decoded on, for the ceiling
    nlohmann::json per_stream = nlohmann::json::array();
    std::vector<double> fps_runs;
};

StreamsPass run_streams_pass(const E2eClip& clip, const std::vector<BoxF>& boxes, int n, DecodeMode mode,
                             const E2eOptions& o, const std::string& kernel) {
    StreamsPass p;
    TrackArgs a;
    a.quiet = true;
    a.tracker.kernel = o.kernel;
    a.max_frames = o.frames;
    a.realtime = o.realtime;
    a.decode = mode;
    a.nvdec_streams = o.nvdec_streams;
    a.nvdec_rate = o.nvdec_rate;
    const std::vector<std::string> names = unique_stream_names(std::vector<std::string>(n, clip.path));
    std::vector<StreamPlan> plans(n);
    for (int i = 0; i < n; ++i) {
        plans[i].name = names[i];
        plans[i].input = clip.path;
        plans[i].boxes = boxes;
        plans[i].decode = mode;
    }
    const StreamSetRun run = run_stream_set(a, plans, kernel);
    for (int i = 0; i < n; ++i) {
        const StreamResult& r = *run.results[i];
        if (r.exit_code != 0) {
            p.error = "stream " + names[i] + ": " + (r.error.empty() ? r.status : r.error);
            return p;
        }
        p.frames += r.frames;
        p.live += r.live_dropped;
        p.late += r.loop.late_drops;
        if (r.live_dropped + r.loop.late_drops > p.worst_live + p.worst_late) {
            p.worst_live = r.live_dropped;
            p.worst_late = r.loop.late_drops;
        }
        p.latency_ms.insert(p.latency_ms.end(), r.loop.latency_ms.begin(), r.loop.latency_ms.end());
        const bool nvdec = r.decode_mode == "nvdec";
        ++(nvdec ? p.on_nvdec : p.on_cpu);
        p.decoders.push_back(nvdec ? DecodeMode::kNvdec : DecodeMode::kSoftware);
        p.per_stream.push_back(
            {{"name", names[i]},
             {"decode", r.decode_mode},
             {"decode_why", r.decode_why.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.decode_why)},
             {"frames", r.frames},
             {"fps", r.frames / std::max(r.seconds, 1e-9)},
             {"live_dropped", r.live_dropped},
             {"late_dropped", r.loop.late_drops},
             {"latency_ms", {{"median", median(r.loop.latency_ms)}, {"p95", percentile(r.loop.latency_ms, 95)}}}});
    }
    p.ok = true;
    p.seconds = run.seconds;
    p.fps = p.frames / std::max(run.seconds, 1e-9);
    return p;
}

struct Ceiling {
    bool ok = false;
    std::string error;
    long frames = 0;
    double seconds = 0, fps = 0;
    std::vector<double> fps_runs;
};

// Every session opens the clip as its stream's decoder did (match_source_to_tracker on a
// tracker of the same kernel) and reads it to the end or `max_frames`; the clock runs from
// before the first open to the last session's end, as the tracked pass's does.
Ceiling decode_ceiling(const E2eClip& clip, const std::vector<DecodeMode>& decoders, const E2eOptions& o) {
    Ceiling c;
    const std::size_t n = decoders.size();
    std::vector<long> frames(n, 0);
    std::vector<std::string> errors(n);
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < n; ++i)
        threads.emplace_back([&, i] {
            TrackerOptions to;
            to.kernel = o.kernel;
            MultiTracker tracker(to);
            if (!tracker.set_kernel(o.kernel, &errors[i])) return;
            SourceOptions so;
            so.input = clip.path;
            match_source_to_tracker(so, tracker, decoders[i], 6);
            so.want_rgb = false;
            auto source = FrameSource::open(so, &errors[i]);
            if (!source) return;
            Frame f;
            while ((o.frames < 0 || frames[i] < o.frames) && source->read(f) == ReadStatus::kFrame) ++frames[i];
            if (frames[i] == 0) errors[i] = source->error().empty() ? "no frame decoded" : source->error();
        });
    for (std::thread& t : threads) t.join();
    c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (std::size_t i = 0; i < n; ++i) {
        if (!errors[i].empty()) {
            c.error = "decode-only session " + std::to_string(i + 1) + ": " + errors[i];
            return c;
        }
        c.frames += frames[i];
    }
    c.ok = true;
    c.fps = c.frames / std::max(c.seconds, 1e-9);
    return c;
}

}  // namespace

void print_streams_header(const E2eOptions& o) {
    std::printf(
        "\nstreams: N copies of the clip in one process (a decode thread, tracker and CUDA stream each%s); "
        "ceiling: N decode-only sessions at once on the same decoders\n",
        o.realtime ? ", paced to the clip's timestamps (--realtime)" : ", at full speed");
    std::printf("%-22s %-6s %7s %8s %11s %10s %11s %10s %13s %13s %17s %9s  %s\n", "clip", "decode", "streams",
                "frames", "fps in all", "per stream", "ceiling fps", "of ceiling", "drops live/late", "worst stream",
                "latency med/p95", "p95/frame", "decoders");
}

nlohmann::json run_streams_rows(const E2eClip& clip, const std::vector<BoxF>& boxes, const E2eOptions& o,
                                const std::string& kernel, int* rc) {
    nlohmann::json rows = nlohmann::json::array();
    const double frame_ms = clip.fps > 0 ? 1000.0 / clip.fps : 0.0;
    // Without NVDEC, nvdec and auto would time the CPU decoders again: said once, not run.
    std::vector<DecodeMode> modes;
    for (const DecodeMode mode : o.decoders) {
        if (mode == DecodeMode::kSoftware || clip.nvdec) {
            modes.push_back(mode);
            continue;
        }
        const std::string note =
            mode == DecodeMode::kAuto ? "the same as sw without NVDEC (" + clip.nvdec_note + ")" : clip.nvdec_note;
        std::printf("%-22s %-6s %s\n", clip.name.c_str(), to_string(mode), note.c_str());
        rows.push_back({{"decode", to_string(mode)}, {"unavailable", note}});
    }
    // After a signal: the pass in flight stops with its streams (run_stream_set watches the
    // flag), no other starts, and the rows done are kept.
    const auto interrupted = [] { return InterruptGuard::signal_number() != 0; };
    for (const int n : o.streams) {
        for (const DecodeMode mode : modes) {
            if (interrupted()) return rows;
            const StreamsPass t =
                median_of_runs(o.repeats, [&] { return run_streams_pass(clip, boxes, n, mode, o, kernel); });
            if (interrupted()) return rows;
            if (!t.ok) {
                std::fprintf(stderr, "corrtrack bench --e2e: %s: %d streams, %s: %s\n", clip.path.c_str(), n,
                             to_string(mode), t.error.c_str());
                *rc = 1;
                continue;
            }
            const Ceiling c = median_of_runs(o.repeats, [&] { return decode_ceiling(clip, t.decoders, o); });
            if (interrupted()) return rows;
            if (!c.ok) {
                std::fprintf(stderr, "corrtrack bench --e2e: %s: %d streams, %s: %s\n", clip.path.c_str(), n,
                             to_string(mode), c.error.c_str());
                *rc = 1;
                continue;
            }
            const double of_ceiling = t.fps / std::max(c.fps, 1e-9);
            const double lat_med = median(t.latency_ms), lat_p95 = percentile(t.latency_ms, 95);
            const double p95_frames = frame_ms > 0 ? lat_p95 / frame_ms : 0.0;
            char drops[32], worst[32], decoders[48];
            std::snprintf(drops, sizeof drops, "%ld/%ld", t.live, t.late);
            std::snprintf(worst, sizeof worst, "%ld/%ld", t.worst_live, t.worst_late);
            std::snprintf(decoders, sizeof decoders, "%d nvdec, %d sw", t.on_nvdec, t.on_cpu);
            std::printf("%-22s %-6s %7d %8ld %11.1f %10.1f %11.1f %9.1f%% %13s %13s %8.2f / %6.2f %9.2f  %s\n",
                        clip.name.c_str(), to_string(mode), n, t.frames, t.fps, t.fps / n, c.fps, 100 * of_ceiling,
                        drops, worst, lat_med, lat_p95, p95_frames, decoders);
            std::fflush(stdout);
            rows.push_back({{"decode", to_string(mode)},
                            {"streams", n},
                            {"realtime", o.realtime},
                            {"frames", t.frames},
                            {"seconds", t.seconds},
                            {"fps", t.fps},
                            {"fps_runs", t.fps_runs},
                            {"per_stream_fps", t.fps / n},
                            {"decode_only_ceiling",
                             {{"fps", c.fps}, {"fps_runs", c.fps_runs}, {"frames", c.frames}, {"seconds", c.seconds}}},
                            {"of_ceiling", of_ceiling},
                            {"live_dropped", t.live},
                            {"late_dropped", t.late},
                            {"latency_ms", {{"median", lat_med}, {"p95", lat_p95}}},
                            {"latency_p95_frame_times", p95_frames},
                            {"decoders", {{"nvdec", t.on_nvdec}, {"sw", t.on_cpu}}},
                            {"nvdec_streams", o.nvdec_streams},
                            {"nvdec_rate", o.nvdec_rate},
                            {"per_stream", t.per_stream}});
        }
    }
    return rows;
}

}  // namespace corrtrack
