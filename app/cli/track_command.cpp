// `corrtrack track INPUT --box x,y,w,h`: runs the tracker over a video, image sequence,
// camera, pipe or URL, and writes CSV / JSON / OTB text / an annotated video. Outputs are
// checked against the inputs and each other before the run, opened before it, written as
// frames come (each write checked) and renamed into place at the end, also after Ctrl-C.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/cli/interrupt.h"
#include "app/cli/output_paths.h"
#include "app/io/annotate.h"
#include "app/io/async_video.h"
#include "app/io/result_writers.h"
#include "app/io/sequence_pattern.h"
#include "app/io/video_writer.h"
#include "app/pipeline/frame_ring.h"
#include "app/pipeline/track_loop.h"

namespace corrtrack {
namespace {

// Frames the video queue holds: enough to ride out an encoder's uneven frame times (x264's
// lookahead, an I-frame) without the tracker waiting, few enough to bound the memory
// (4 x 6 MB at 1080p).
constexpr int kVideoQueueDepth = 4;

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
    bool allow_damaged = false;
    DecodeMode decode = DecodeMode::kAuto;
    CameraRequest camera;
    VideoQuality video_quality = VideoQuality::kFast;
    TrackerOptions tracker;
};

const char* end_name(EndReason e) {
    switch (e) {
    case EndReason::kClean: return "clean";
    case EndReason::kDamaged: return "damaged";
    case EndReason::kFailed: return "failed";
    case EndReason::kStalled: return "stalled";
    case EndReason::kInterrupted: return "interrupted";
    case EndReason::kNone: break;
    }
    return "unknown";
}

// Every output of a run, opened before it so that an unwritable path fails at once; each is
// renamed into place by finish(), or dropped (the destination untouched) by the destructors.
struct Outputs {
    CsvWriter csv;
    JsonResultsWriter json;
    std::vector<std::string> otb_paths;
    std::vector<std::unique_ptr<OtbWriter>> otb;  // one per target
    OutputFile video_file;  // the temporary the video encoder writes (not for image patterns)
    std::string video_path;  // what the encoder opens
    std::unique_ptr<AsyncVideoWriter> video;  // draws and encodes on its own thread
    std::string encoder, encoder_note;
    VideoQueueStats video_stats;  // final after close_video()
    bool video_ok = true;
    std::string video_error;
    std::string error;  // the first write error

    bool open(const TrackArgs& a, const nlohmann::json& json_head, std::string* why) {
        if (!a.csv.empty() && !csv.open(a.csv, why)) return false;
        if (!a.json.empty() && !json.open(a.json, json_head, why)) return false;
        for (const std::string& path : otb_paths) {
            otb.push_back(std::make_unique<OtbWriter>());
            if (!otb.back()->open(path, why)) return false;
        }
        if (!a.video.empty()) {
            if (is_sequence_pattern(a.video)) {
                video_path = a.video;  // numbered images: written in place, one file per frame
            } else {
                if (!video_file.open(a.video, OutputFile::Mode::kPath, why)) return false;
                video_path = video_file.write_path();
            }
        }
        return true;
    }
    // Rows of one frame; false (error set) on the first failed write.
    bool write(const FrameRecord& rec, const TrackArgs& a) {
        bool ok = true;
        if (csv.is_open()) ok = csv.write(rec) && ok;
        if (json.is_open()) ok = json.write(to_json(rec)) && ok;
        if (!otb.empty()) ok = otb[static_cast<std::size_t>(rec.target)]->write(rec.frame, rec.result.box) && ok;
        if (!ok) first_error();
        return ok;
    }
    // Pushes the frame's rows to the files: a full disk stops the run at this frame.
    bool flush() {
        bool ok = true;
        if (csv.is_open()) ok = csv.flush() && ok;
        if (json.is_open()) ok = json.flush() && ok;
        for (auto& w : otb) ok = w->flush() && ok;
        if (!ok) first_error();
        return ok;
    }
    void first_error() {
        if (!error.empty()) return;
        for (const std::string* e : {&csv.error(), &json.error()})
            if (!e->empty()) error = *e;
        for (const auto& w : otb)
            if (error.empty() && !w->error().empty()) error = w->error();
    }
    // Encodes the frames still queued and closes the video (the file is committed by
    // finish()); the run's wall time includes this.
    void close_video() {
        if (!video) return;
        video_ok = video->close(&video_error);
        video_stats = video->stats();
        video.reset();
    }
    // Completes every output; false with the messages printed when any failed. keep = false
    // drops them all (nothing was tracked).
    bool finish(bool keep, const nlohmann::json& json_tail, const char* cmd) {
        bool ok = true;
        std::string why;
        auto report = [&](bool good) {
            if (good) return;
            ok = false;
            if (why != error) std::fprintf(stderr, "corrtrack %s: %s\n", cmd, why.c_str());  // else said already
        };
        if (!keep) {
            video.reset();
            video_file.discard();
            return true;  // the destructors drop the rest
        }
        if (!encoder.empty()) {
            close_video();
            why = video_error;
            report(video_ok && (!video_file.is_open() || video_file.commit(&why)));
        } else {
            video_file.discard();
        }
        if (csv.is_open() || !csv.error().empty()) report(csv.close(&why));
        nlohmann::json tail = json_tail;
        if (!encoder.empty())
            tail["video"] = {{"encoder", encoder},      {"frames", video_stats.frames},
                             {"waits", video_stats.waits}, {"wait_ms", video_stats.wait_ms},
                             {"queue", video_stats.depth}};
        if (json.is_open() || !json.error().empty()) report(json.close(tail, &why));
        for (auto& w : otb)
            if (w->is_open() || !w->error().empty()) report(w->close(&why));
        return ok;
    }
};

int run_track(const TrackArgs& a, bool dry_run) {
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
    // No output may overwrite an input or another output.
    Outputs out;
    if (!a.otb.empty())
        for (std::size_t i = 0; i < boxes.size(); ++i)
            out.otb_paths.push_back(boxes.size() > 1 ? a.otb + "." + std::to_string(i) : a.otb);
    std::vector<NamedPath> inputs, outputs;
    for (const std::string& p : input_paths(a.input)) inputs.push_back({p, "the input", false});
    if (!box_file.empty()) inputs.push_back({box_file, "the box file", false});
    outputs.push_back({a.csv, "--csv", false});
    outputs.push_back({a.json, "--json", false});
    outputs.push_back({a.video, "--video", true});
    for (const std::string& p : out.otb_paths) outputs.push_back({p, "--otb", false});
    if (!check_output_paths(inputs, outputs, &error) || (!a.video.empty() && !VideoWriter::check_path(a.video, &error))) {
        std::fprintf(stderr, "corrtrack track: %s\n", error.c_str());
        return kExitUsage;
    }
    if (std::string why; !check_camera_input(a.input, a.camera, &why)) {
        std::fprintf(stderr, "corrtrack track: %s\n", why.c_str());
        return kExitUsage;
    }
    const std::string kernel = resolve_kernel_name(a.tracker.kernel);
    if (std::string why; !make_correlator(kernel, &why)) {
        std::fprintf(stderr, "corrtrack track: %s\n", why.c_str());
        return kExitUsage;
    }
    if (dry_run) return 0;
    const nlohmann::json json_head = {{"input", a.input}, {"kernel", kernel}};
    if (!out.open(a, json_head, &error)) {
        std::fprintf(stderr, "corrtrack track: %s\n", error.c_str());
        return kExitInput;
    }
    announce_compute_path();
    // From here on the first Ctrl-C / SIGTERM / SIGHUP ends the run with its outputs complete.
    InterruptGuard interrupt;
    const std::atomic<bool>* stop_flag = &InterruptGuard::flag();
    auto interrupted = [] { return InterruptGuard::signal_number() != 0; };

    // The tracker exists before the source: NVDEC decodes on the tracker's stream.
    TrackerOptions topt = a.tracker;
    topt.keep_maps = !a.video.empty() && a.heatmap;
    MultiTracker tracker(topt);
    if (!tracker.set_kernel(topt.kernel, &error)) {
        std::fprintf(stderr, "corrtrack track: %s\n", error.c_str());
        return kExitUsage;
    }
    // The session matches the decoder to the tracker: a GPU tracker reads the luma plane
    // straight from the decoder's surface.
    SessionOptions so;
    so.source.input = a.input;
    so.source.read_timeout_s = a.read_timeout;
    so.source.stop = stop_flag;
    so.source.camera_size = a.camera.size;
    so.source.camera_fps = a.camera.fps;
    so.source.camera_format = a.camera.format;
    so.decode = a.decode;
    so.want_rgb = !a.video.empty();
    so.slots = 6;
    auto session = FrameSession::open(tracker, so, &error);
    if (!session) {
        std::fprintf(stderr, "corrtrack track: %s\n", error.c_str());
        return interrupted() ? InterruptGuard::exit_code() : kExitInput;
    }
    const std::string decode_mode = session->decode_mode();
    if (!session->decode_note().empty()) std::fprintf(stderr, "corrtrack: %s\n", session->decode_note().c_str());
    FramePipeline& pipeline = session->pipeline();
    if (!a.quiet) std::fprintf(stderr, "corrtrack: %s\n", pipeline.description().c_str());

    StageSamples samples;
    long lost_frames = 0, frames_done = 0, last_index = -1;
    bool resize_told = false;
    const bool tty = isatty(STDERR_FILENO);
    const auto t_start = std::chrono::steady_clock::now();
    auto t_progress = t_start;

    std::vector<AnnotatedTarget> shown;  // what the video shows of a frame (capacity kept)
    auto on_frame = [&](const LoopFrame& lf, std::vector<TrackResult>& results, std::string* why) {
        if (lf.first && !a.quiet)
            std::fprintf(stderr, "corrtrack: kernel %s%s\n", kernel.c_str(),
                         kernel == "auto" ? " (picks the fastest per shape)" : "");
        if (lf.decoded_size != lf.size && !resize_told) {
            resize_told = true;
            std::fprintf(stderr, "%scorrtrack: frame %ld is %dx%d where the first frame was %dx%d: frames of another "
                         "size are scaled to %dx%d (boxes stay in the first frame's coordinates)\n",
                         tty && !a.quiet ? "\n" : "", lf.index, lf.decoded_size.width, lf.decoded_size.height,
                         lf.size.width, lf.size.height, lf.size.width, lf.size.height);
        }
        const auto t_render = std::chrono::steady_clock::now();
        if (!out.video_path.empty()) {
            const Frame* f = lf.frame;
            if (!out.video) {
                VideoWriterOptions vo;
                vo.fps = pipeline.fps() > 0 && pipeline.fps() <= 1000 ? pipeline.fps() : 25.0;
                vo.quality = a.video_quality;
                vo.hardware = true;
                auto writer = VideoWriter::open(out.video_path, f->size(), vo, why);
                if (!writer) return false;
                out.encoder = writer->encoder();
                out.encoder_note = writer->encoder_note();
                out.video = std::make_unique<AsyncVideoWriter>(std::move(writer), kVideoQueueDepth);
            }
            // The source gives every frame the first frame's size; anything else is a bug
            // to report, never a write past the buffer.
            if (f->rgb.size() != static_cast<std::size_t>(f->width) * 3 * f->height) {
                *why = "frame " + std::to_string(lf.index) + " has no RGB picture for the video";
                return false;
            }
            // Only copies here: the writer thread draws and encodes (waiting only when the
            // queue is full).
            VideoSlot* slot = out.video->acquire();
            if (!slot) {
                *why = out.video->error();
                return false;
            }
            slot->rgb.assign(f->rgb.begin(), f->rgb.end());
            slot->width = f->width;
            slot->height = f->height;
            shown.resize(results.size());
            for (std::size_t i = 0; i < results.size(); ++i) {
                AnnotatedTarget& t = shown[i];
                t.box = results[i].box;
                t.color = results[i].lost ? Rgb{255, 60, 60} : Rgb{60, 255, 90};
                t.searched = a.heatmap && !lf.first;
                if (t.searched) {
                    t.window = tracker.last_map_region(results[i].id);
                    t.map = i == 0 ? tracker.last_map(results[0].id) : MapView{};
                }
            }
            annotate_frame(&slot->overlay, f->width, shown);
            out.video->submit(slot);
        }
        const double render_ms = out.video_path.empty() ? 0.0
                                                        : std::chrono::duration<double, std::milli>(
                                                              std::chrono::steady_clock::now() - t_render).count();
        for (std::size_t i = 0; i < results.size(); ++i) {
            results[i].times.render_ms = render_ms;
            const FrameRecord rec{lf.index, lf.pts, static_cast<int>(i), results[i]};
            if (!out.write(rec, a)) {
                *why = out.error;
                return false;
            }
            if (results[i].lost) ++lost_frames;
            if (i == 0) samples.add(results[i].times);
        }
        if (!out.flush()) {
            *why = out.error;
            return false;
        }
        ++frames_done;
        last_index = lf.index;
        const auto now = std::chrono::steady_clock::now();
        if (!a.quiet && std::chrono::duration<double>(now - t_progress).count() >= 1.0) {
            t_progress = now;
            const double secs = std::chrono::duration<double>(now - t_start).count();
            const long total = pipeline.frame_count();
            std::fprintf(stderr, tty ? "\rframe %ld%s%s  %.1f fps   " : "frame %ld%s%s  %.1f fps\n", frames_done,
                         total > 0 ? "/" : "", total > 0 ? std::to_string(total).c_str() : "", frames_done / secs);
        }
        return true;
    };
    TrackLoopOptions lo;
    lo.realtime = a.realtime;
    lo.max_frames = a.max_frames;
    lo.need_host_frame = !a.video.empty();
    lo.stop = stop_flag;
    TrackLoopStats st;
    const int loop_rc = run_track_loop(*session, boxes, lo, on_frame, &st, &error);
    // The decoder is done (or stops now): its account of the input is final after this.
    pipeline.stop();
    if (st.frames > 0) out.close_video();  // before the clock stops: the run includes it
    const char* nl = tty && !a.quiet ? "\n" : "";
    int exit_code = 0;
    bool failed = loop_rc != 0;  // a target could not start, or an output could not be written
    if (failed) std::fprintf(stderr, "%scorrtrack track: %s\n", nl, error.c_str());
    const long frames = st.frames;
    const SourceReport rep = pipeline.report();
    const bool limit_reached = a.max_frames >= 0 && frames >= a.max_frames;
    const bool signalled = interrupted();
    if (!failed && !signalled && !limit_reached) {
        switch (rep.end) {
        case EndReason::kDamaged:
            std::fprintf(stderr, "%scorrtrack track: %s%s\n", nl, pipeline.error().c_str(),
                         a.allow_damaged ? " (--allow-damaged: the other frames were tracked)"
                                         : "; the other frames were tracked (--allow-damaged accepts this)");
            if (!a.allow_damaged) exit_code = kExitDamaged;
            break;
        case EndReason::kClean:
        case EndReason::kNone:
            break;
        default:
            std::fprintf(stderr, "%scorrtrack track: %s\n", nl, pipeline.error().c_str());
            exit_code = kExitInput;
        }
        if (frames == 0 && exit_code == 0) {
            std::fprintf(stderr, "corrtrack track: '%s' has no frames\n", a.input.c_str());
            exit_code = kExitInput;
        }
    } else if (!failed && !signalled) {
        // --frames ended the run: frames lost among those it covered still make it damaged.
        const long lost = static_cast<long>(
            std::count_if(rep.lost_at.begin(), rep.lost_at.end(), [&](long i) { return i <= last_index; }));
        if (lost > 0) {
            std::fprintf(stderr, "%scorrtrack track: '%s': %ld frame(s) up to frame %ld missing or undecodable%s\n", nl,
                         a.input.c_str(), lost, last_index,
                         a.allow_damaged ? " (--allow-damaged)" : " (--allow-damaged accepts this)");
            if (!a.allow_damaged) exit_code = kExitDamaged;
        }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    nlohmann::json lost_at = rep.lost_at;
    const nlohmann::json tail = {
        {"frames", frames},
        {"late_dropped", st.late_drops},
        {"live_dropped", pipeline.dropped()},
        {"fps", frames / std::max(secs, 1e-9)},
        {"source",
         {{"end", limit_reached || (signalled && rep.end == EndReason::kInterrupted) ? "stopped" : end_name(rep.end)},
          {"lost", rep.lost},
          {"lost_frames", lost_at},
          {"missing_at_end", rep.missing_at_end},
          {"concealed", rep.concealed},
          {"resized", rep.resized}}},
        {"interrupted", signalled ? nlohmann::json(InterruptGuard::signal_name()) : nlohmann::json(nullptr)}};
    if (!out.finish(frames > 0, tail, "track")) failed = true;
    // A write error outranks the signal: the user must hear that an output is incomplete.
    if (failed)
        exit_code = kExitInput;
    else if (signalled)
        exit_code = InterruptGuard::exit_code();
    if (!a.quiet) {
        if (tty) std::fprintf(stderr, "\r%60s\r", "");
        std::printf("frames      %ld (%ld target-frames lost)\n", frames, lost_frames);
        if (rep.lost > 0 || rep.missing_at_end > 0 || rep.concealed > 0)
            std::printf("input       damaged: %ld frame(s) not decoded, %ld missing at the end, %ld with concealed "
                        "errors\n",
                        rep.lost, rep.missing_at_end, rep.concealed);
        if (rep.resized > 0)
            std::printf("resized     %ld frame(s) scaled to %dx%d (the input changed resolution)\n", rep.resized,
                        pipeline.size().width, pipeline.size().height);
        std::printf("wall time   %.2f s, %.1f fps end to end, %.1f fps tracking alone\n", secs,
                    frames / std::max(secs, 1e-9), frames > 1 ? (frames - 1) * 1000.0 / std::max(st.track_ms, 1e-9) : 0.0);
        std::printf("kernel      %s (%d target%s, %s)\n", kernel.c_str(), static_cast<int>(boxes.size()),
                    boxes.size() == 1 ? "" : "s", tracker.on_gpu() ? "GPU" : "CPU");
        std::printf("decode      %s\n", decode_mode.c_str());
        if (!out.encoder.empty()) {
            const VideoQueueStats& vs = out.video_stats;
            std::printf("video       %s, %ld frames; the tracker waited for the encoder %ld time(s), %.1f ms in all "
                        "(queue of %d)\n",
                        out.encoder.c_str(), vs.frames, vs.waits, vs.wait_ms, vs.depth);
            if (!out.encoder_note.empty()) std::printf("            %s\n", out.encoder_note.c_str());
        }
        std::printf("stage times (per frame, first target):\n%s", samples.summary().c_str());
        if (pipeline.dropped() > 0) std::printf("dropped     %ld frames (live source)\n", pipeline.dropped());
        if (a.realtime) std::printf("late        %ld frames dropped to keep real time\n", st.late_drops);
        if (signalled)
            std::printf("stopped     by %s after frame %ld; the outputs cover the frames up to it\n",
                        InterruptGuard::signal_name(), last_index);
        if (frames > 0)
            for (const auto& [flag, path] : {std::pair{"csv", a.csv}, {"json", a.json}, {"video", a.video}, {"otb", a.otb}})
                if (!path.empty() && (path != a.video || out.video_ok))  // a failed video was said
                    std::printf("wrote %-5s %s\n", flag, path.c_str());
    }
    return exit_code;
}

}  // namespace

void register_track_command(CLI::App& root, CommandOutcome& outcome) {
    auto args = std::make_shared<TrackArgs>();
    CLI::App* cmd = root.add_subcommand("track", "track targets through a video, image sequence, camera, pipe or URL");
    cmd->add_option("input", args->input,
                    "video file, image pattern (img/%05d.jpg), OTB folder, /dev/videoN, a FIFO, - or pipe:0 "
                    "(standard input), or a URL")
        ->required();
    cmd->add_option("--box,-b", args->boxes, "target box x,y,w,h in pixels (0-based top-left); repeat for more targets");
    cmd->add_option("--box-file", args->box_file, "file with one x,y,w,h per line (default: INPUT with .box extension)");
    cmd->add_option("--csv", args->csv, "per-frame rows: frame, pts, box, centre, score, confidence, lost, stage times");
    cmd->add_option("--json", args->json, "the same rows as one JSON document");
    cmd->add_option("--video", args->video, "annotated video (.mp4/.mkv): boxes, search window, heatmap inset");
    cmd->add_option("--otb", args->otb, "OTB-style results: x,y,w,h per frame, 1-based");
    cmd->add_option_function<std::string>(
           "--video-quality",
           [args](const std::string& s) {
               if (!parse_video_quality(s, &args->video_quality))
                   throw CLI::ValidationError("--video-quality", "must be fast, balanced or best");
           },
           "encoder speed vs file size for --video: fast (default) | balanced | best; NVENC (h264_nvenc) when a "
           "GPU has it, else libx264 (superfast / veryfast / medium)");
    cmd->add_flag("!--no-heatmap", args->heatmap, "leave the heatmap inset and search window out of the video");
    cmd->add_option("--frames", args->max_frames, "stop after this many frames (-1: all)")->check(frame_count());
    cmd->add_option("--read-timeout", args->read_timeout,
                    "seconds a camera, stream, pipe or FIFO may stall before giving up")
        ->check(finite_range(0.1, kMaxReadTimeoutS))
        ->capture_default_str();
    cmd->add_flag("--realtime", args->realtime,
                  "pace files to their timestamps; frames that fall behind are dropped and counted");
    cmd->add_flag("--allow-damaged", args->allow_damaged,
                  "exit 0 when the input is damaged (frames that do not decode, a truncated file) and the other "
                  "frames were tracked; the summary still counts what was lost");
    cmd->add_option_function<std::string>(
           "--decode",
           [args](const std::string& s) {
               if (!parse_decode_mode(s, &args->decode))
                   throw CLI::ValidationError("--decode", "must be sw, nvdec or auto");
           },
           "sw | nvdec | auto (default auto: NVDEC when a GPU tracker runs and the codec allows)");
    cmd->add_flag("--quiet,-q", args->quiet, "no progress or summary");
    add_camera_options(*cmd, args->camera);
    add_tracker_options(*cmd, args->tracker);
    cmd->footer(
        "Exit status: 0 done; 1 the input cannot be read, a target cannot be initialised or an output cannot be "
        "written; 2 bad options or output paths (an output that would overwrite an input or another output); 3 the "
        "input is damaged (frames lost or truncated) and the other frames were tracked (0 with --allow-damaged); "
        "130/143/129 stopped by SIGINT/SIGTERM/SIGHUP after writing the outputs.");
    cmd->callback([args, &outcome] { outcome.exit_code = run_track(*args, outcome.dry_run); });
}

}  // namespace corrtrack
