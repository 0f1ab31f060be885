// `corrtrack track INPUT --box x,y,w,h`: runs the tracker over a video, image sequence,
// camera or URL, and writes CSV / JSON / OTB text / an annotated video.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/io/annotate.h"
#include "app/io/result_writers.h"
#include "app/io/video_writer.h"
#include "app/pipeline/frame_ring.h"
#include "app/pipeline/track_loop.h"

namespace corrtrack {
namespace {

struct TrackArgs {
    std::string input;
    std::vector<std::string> boxes;
    std::string box_file;
    std::string csv, json, video, otb;
    bool heatmap = true;
    long max_frames = -1;
    bool quiet = false;
    double read_timeout = 5.0;
    bool realtime = false;
    DecodeMode decode = DecodeMode::kAuto;
    TrackerOptions tracker;
};

int run_track(const TrackArgs& a) {
    std::string error;
    std::vector<BoxF> boxes;
    for (const std::string& s : a.boxes) {
        BoxF b;
        if (!parse_box(s, &b, &error)) {
            std::fprintf(stderr, "corrtrack track: %s\n", error.c_str());
            return kExitUsage;
        }
        boxes.push_back(b);
    }
    const std::string box_file = !a.box_file.empty() ? a.box_file : (boxes.empty() ? default_box_file(a.input) : "");
    if (!box_file.empty() && !read_box_file(box_file, &boxes, &error)) {
        std::fprintf(stderr, "corrtrack track: %s\n", error.c_str());
        return kExitUsage;
    }
    if (boxes.empty()) {
        std::fprintf(stderr, "corrtrack track: no target: give --box x,y,w,h or --box-file FILE\n");
        return kExitUsage;
    }
    const std::string kernel = resolve_kernel_name(a.tracker.kernel);
    if (std::string why; !make_correlator(kernel, &why)) {
        std::fprintf(stderr, "corrtrack track: %s\n", why.c_str());
        return kExitUsage;
    }
    announce_compute_path();

    // The tracker exists before the source: NVDEC decodes on the tracker's stream.
    TrackerOptions topt = a.tracker;
    topt.keep_maps = !a.video.empty() && a.heatmap;
    MultiTracker tracker(topt);
    if (!tracker.set_kernel(topt.kernel, &error)) {
        std::fprintf(stderr, "corrtrack track: %s\n", error.c_str());
        return kExitUsage;
    }
    SourceOptions so;
    so.input = a.input;
    so.want_rgb = !a.video.empty();
    so.read_timeout_s = a.read_timeout;
    // A GPU tracker reads the luma plane straight from the decoder's surface.
    constexpr int kSlots = 6;
    match_source_to_tracker(so, tracker, a.decode, kSlots);
    auto source = FrameSource::open(so, &error);
    if (!source) {
        std::fprintf(stderr, "corrtrack track: %s\n", error.c_str());
        return kExitInput;
    }
    const std::string decode_mode = source->decode_mode();
    if (!source->decode_note().empty()) std::fprintf(stderr, "corrtrack: %s\n", source->decode_note().c_str());
    FramePipeline pipeline(std::move(source), kSlots);
    if (!a.quiet) std::fprintf(stderr, "corrtrack: %s\n", pipeline.description().c_str());

    std::vector<std::vector<BoxF>> tracks(boxes.size());
    CsvWriter csv;
    if (!a.csv.empty() && !csv.open(a.csv, &error)) {
        std::fprintf(stderr, "corrtrack track: %s\n", error.c_str());
        return kExitInput;
    }
    std::unique_ptr<VideoWriter> video;
    std::vector<std::uint8_t> annotated;  // the frame copy we draw on, reused
    nlohmann::json json_frames = nlohmann::json::array();
    StageSamples samples;
    long lost_frames = 0;
    const bool tty = isatty(STDERR_FILENO);
    const auto t_start = std::chrono::steady_clock::now();
    auto t_progress = t_start;
    int exit_code = 0;

    auto on_frame = [&](const LoopFrame& lf, std::vector<TrackResult>& results, std::string* why) {
        if (lf.first && !a.quiet)
            std::fprintf(stderr, "corrtrack: kernel %s%s\n", kernel.c_str(),
                         kernel == "auto" ? " (picks the fastest per shape)" : "");
        const auto t_render = std::chrono::steady_clock::now();
        if (!a.video.empty()) {
            const Frame* f = lf.frame;
            if (!video) {
                VideoWriterOptions vo;
                vo.fps = pipeline.fps() > 0 ? pipeline.fps() : 25.0;
                video = VideoWriter::open(a.video, f->size(), vo, why);
                if (!video) return false;
                annotated.resize(f->rgb.size());
            }
            std::copy(f->rgb.begin(), f->rgb.end(), annotated.begin());
            RgbImage img{annotated.data(), f->width, f->height, static_cast<std::size_t>(f->width) * 3};
            for (std::size_t i = 0; i < results.size(); ++i) {
                if (a.heatmap && !lf.first) {
                    draw_dashed_box(img, tracker.last_map_region(results[i].id), {255, 255, 255});
                    if (i == 0)
                        draw_heatmap_inset(img, tracker.last_map(results[0].id), 8, 8, std::min(160, f->width / 4));
                }
                const Rgb color = results[i].lost ? Rgb{255, 60, 60} : Rgb{60, 255, 90};
                draw_box(img, results[i].box, color, 2);
            }
            if (!video->write_rgb(annotated.data(), img.pitch, why)) return false;
        }
        const double render_ms = a.video.empty() ? 0.0
                                                 : std::chrono::duration<double, std::milli>(
                                                       std::chrono::steady_clock::now() - t_render).count();
        for (std::size_t i = 0; i < results.size(); ++i) {
            results[i].times.render_ms = render_ms;
            FrameRecord rec{lf.index, lf.pts, static_cast<int>(i), results[i]};
            if (!a.csv.empty()) csv.write(rec);
            if (!a.json.empty()) json_frames.push_back(to_json(rec));
            tracks[i].push_back(results[i].box);
            if (results[i].lost) ++lost_frames;
            if (i == 0) samples.add(results[i].times);
        }
        const auto now = std::chrono::steady_clock::now();
        if (!a.quiet && std::chrono::duration<double>(now - t_progress).count() >= 1.0) {
            t_progress = now;
            const double secs = std::chrono::duration<double>(now - t_start).count();
            const long total = pipeline.frame_count();
            const long done = static_cast<long>(tracks[0].size());
            std::fprintf(stderr, tty ? "\rframe %ld%s%s  %.1f fps   " : "frame %ld%s%s  %.1f fps\n", done,
                         total > 0 ? "/" : "", total > 0 ? std::to_string(total).c_str() : "", done / secs);
        }
        return true;
    };
    TrackLoopOptions lo;
    lo.realtime = a.realtime;
    lo.max_frames = a.max_frames;
    lo.need_host_frame = !a.video.empty();
    TrackLoopStats st;
    if (run_track_loop(pipeline, tracker, boxes, lo, on_frame, &st, &error) != 0) {
        std::fprintf(stderr, "%scorrtrack track: %s\n", tty && !a.quiet ? "\n" : "", error.c_str());
        return kExitInput;
    }
    const long frames = st.frames;
    const long late_drops = st.late_drops;
    const double track_ms_total = st.track_ms;
    if (!pipeline.error().empty()) {
        std::fprintf(stderr, "%scorrtrack track: %s\n", tty && !a.quiet ? "\n" : "", pipeline.error().c_str());
        exit_code = kExitInput;
    }
    if (frames == 0 && exit_code == 0) {
        std::fprintf(stderr, "corrtrack track: '%s' has no frames\n", a.input.c_str());
        exit_code = kExitInput;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    if (video && !video->close(&error)) {
        std::fprintf(stderr, "corrtrack track: %s\n", error.c_str());
        exit_code = kExitInput;
    }
    if (!csv.close(&error)) {
        std::fprintf(stderr, "corrtrack track: %s\n", error.c_str());
        exit_code = kExitInput;
    }
    if (!a.json.empty()) {
        nlohmann::json doc = {{"input", a.input},
                              {"kernel", kernel},
                              {"frames", frames},
                              {"late_dropped", late_drops},
                              {"live_dropped", pipeline.dropped()},
                              {"fps", frames / std::max(secs, 1e-9)},
                              {"results", json_frames}};
        if (!write_json_file(a.json, doc, &error)) {
            std::fprintf(stderr, "corrtrack track: %s\n", error.c_str());
            exit_code = kExitInput;
        }
    }
    if (!a.otb.empty()) {
        for (std::size_t i = 0; i < tracks.size(); ++i) {
            std::string path = a.otb;
            if (tracks.size() > 1) path += "." + std::to_string(i);
            if (!write_otb_results(path, tracks[i], &error)) {
                std::fprintf(stderr, "corrtrack track: %s\n", error.c_str());
                exit_code = kExitInput;
            }
        }
    }
    if (!a.quiet) {
        if (tty) std::fprintf(stderr, "\r%60s\r", "");
        std::printf("frames      %ld (%ld target-frames lost)\n", frames, lost_frames);
        std::printf("wall time   %.2f s, %.1f fps end to end, %.1f fps tracking alone\n", secs,
                    frames / std::max(secs, 1e-9), frames > 1 ? (frames - 1) * 1000.0 / std::max(track_ms_total, 1e-9) : 0.0);
        std::printf("kernel      %s (%d target%s, %s)\n", kernel.c_str(), static_cast<int>(boxes.size()),
                    boxes.size() == 1 ? "" : "s", tracker.on_gpu() ? "GPU" : "CPU");
        std::printf("decode      %s\n", decode_mode.c_str());
        std::printf("stage times (per frame, first target):\n%s", samples.summary().c_str());
        if (pipeline.dropped() > 0) std::printf("dropped     %ld frames (live source)\n", pipeline.dropped());
        if (a.realtime) std::printf("late        %ld frames dropped to keep real time\n", late_drops);
        for (const auto& [flag, path] : {std::pair{"csv", a.csv}, {"json", a.json}, {"video", a.video}, {"otb", a.otb}})
            if (!path.empty()) std::printf("wrote %-5s %s\n", flag, path.c_str());
    }
    return exit_code;
}

}  // namespace

void register_track_command(CLI::App& root, CommandOutcome& outcome) {
    auto args = std::make_shared<TrackArgs>();
    CLI::App* cmd = root.add_subcommand("track", "track targets through a video, image sequence, camera or URL");
    cmd->add_option("input", args->input, "video file, image pattern (img/%05d.jpg), OTB folder, /dev/videoN or URL")
        ->required();
    cmd->add_option("--box,-b", args->boxes, "target box x,y,w,h in pixels (0-based top-left); repeat for more targets");
    cmd->add_option("--box-file", args->box_file, "file with one x,y,w,h per line (default: INPUT with .box extension)");
    cmd->add_option("--csv", args->csv, "per-frame rows: frame, pts, box, centre, score, confidence, lost, stage times");
    cmd->add_option("--json", args->json, "the same rows as one JSON document");
    cmd->add_option("--video", args->video, "annotated video (.mp4/.mkv): boxes, search window, heatmap inset");
    cmd->add_option("--otb", args->otb, "OTB-style results: x,y,w,h per frame, 1-based");
    cmd->add_flag("!--no-heatmap", args->heatmap, "leave the heatmap inset and search window out of the video");
    cmd->add_option("--frames", args->max_frames, "stop after this many frames");
    cmd->add_option("--read-timeout", args->read_timeout, "seconds a camera or stream may stall before giving up")
        ->capture_default_str();
    cmd->add_flag("--realtime", args->realtime,
                  "pace files to their timestamps; frames that fall behind are dropped and counted");
    cmd->add_option_function<std::string>(
           "--decode",
           [args](const std::string& s) {
               if (!parse_decode_mode(s, &args->decode))
                   throw CLI::ValidationError("--decode", "must be sw, nvdec or auto");
           },
           "sw | nvdec | auto (default auto: NVDEC when a GPU tracker runs and the codec allows)");
    cmd->add_flag("--quiet,-q", args->quiet, "no progress or summary");
    add_tracker_options(*cmd, args->tracker);
    cmd->callback([args, &outcome] { outcome.exit_code = run_track(*args); });
}

}  // namespace corrtrack
