// One stream of `corrtrack track` (see track_stream.h): outputs checked and opened before the
// run, written as frames come (each write checked) and renamed into place at the end, also
// after Ctrl-C.
#include "app/cli/track_stream.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "app/cli/commands.h"
#include "app/cli/interrupt.h"
#include "app/io/annotate.h"
#include "app/io/async_video.h"
#include "app/io/result_writers.h"
#include "app/io/sequence_pattern.h"
#include "app/pipeline/frame_ring.h"

namespace corrtrack {
namespace {

// Frames the video queue holds: enough to ride out an encoder's uneven frame times (x264's
// lookahead, an I-frame) without the tracker waiting, few enough to bound the memory
// (4 x 6 MB at 1080p).
constexpr int kVideoQueueDepth = 4;

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
    OutputFile video_file;                        // the temporary the video encoder writes (not for image patterns)
    std::string video_path;                       // what the encoder opens
    std::unique_ptr<AsyncVideoWriter> video;      // draws and encodes on its own thread
    std::string encoder, encoder_note;
    VideoQueueStats video_stats;  // final after close_video()
    bool video_ok = true;
    std::string video_error;
    std::string error;                 // the first write error
    std::vector<std::string> written;  // the outputs finish() completed: "csv", "json", "video", "otb"

    bool open(const StreamPlan& a, const nlohmann::json& json_head, std::string* why) {
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
    bool write(const FrameRecord& rec) {
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
    // A failure that is not a row's (the video): said once, by the run.
    void note_error(const std::string& why) {
        if (error.empty()) error = why;
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
            const bool good = video_ok && (!video_file.is_open() || video_file.commit(&why));
            report(good);
            if (good) written.push_back("video");
        } else {
            video_file.discard();
        }
        if (csv.is_open() || !csv.error().empty()) {
            const bool good = csv.close(&why);
            report(good);
            if (good) written.push_back("csv");
        }
        nlohmann::json tail = json_tail;
        if (!encoder.empty())
            tail["video"] = {{"encoder", encoder},
                             {"frames", video_stats.frames},
                             {"waits", video_stats.waits},
                             {"wait_ms", video_stats.wait_ms},
                             {"queue", video_stats.depth}};
        if (json.is_open() || !json.error().empty()) {
            const bool good = json.close(tail, &why);
            report(good);
            if (good) written.push_back("json");
        }
        bool otb_good = !otb.empty();
        for (auto& w : otb)
            if (w->is_open() || !w->error().empty()) {
                const bool good = w->close(&why);
                report(good);
                otb_good = otb_good && good;
            }
        if (otb_good) written.push_back("otb");
        return ok;
    }
};

}  // namespace

int run_stream(const TrackArgs& a, const StreamPlan& p, const std::string& kernel, const GpuContext& gpu,
               StreamResult* r) {
    r->started = true;
    const bool named = !p.name.empty();
    // "corrtrack track: ..." and "corrtrack: ..." as ever; "corrtrack track [cam1]: ..." and
    // "corrtrack [cam1]: ..." for a named stream.
    const std::string tag = named ? " [" + p.name + "]" : "";
    const std::string cmd = "track" + tag;
    const bool progress = !named && !a.quiet;
    auto fail = [&](int code, const std::string& why) {
        std::fprintf(stderr, "corrtrack %s: %s\n", cmd.c_str(), why.c_str());
        r->error = why;
        r->status = "failed";
        r->exit_code = code;
        return code;
    };
    std::string error;
    const std::vector<BoxF>& boxes = p.boxes;
    Outputs out;
    out.otb_paths = p.otb_paths;
    nlohmann::json json_head = {{"input", p.input}, {"kernel", kernel}};
    if (named) json_head["stream"] = p.name;
    if (!out.open(p, json_head, &error)) return fail(kExitInput, error);
    announce_compute_path();
    const std::atomic<bool>* stop_flag = &InterruptGuard::flag();
    auto interrupted = [] { return InterruptGuard::signal_number() != 0; };

    // The tracker exists before the source: NVDEC decodes on the tracker's stream.
    TrackerOptions topt = a.tracker;
    topt.keep_maps = !p.video.empty() && a.heatmap;
    MultiTracker tracker(topt, gpu);
    if (!tracker.set_kernel(topt.kernel, &error)) return fail(kExitUsage, error);
    // The session matches the decoder to the tracker: a GPU tracker reads the luma plane
    // straight from the decoder's surface.
    SessionOptions so;
    so.source.input = p.input;
    so.source.read_timeout_s = a.read_timeout;
    so.source.stop = stop_flag;
    so.source.camera_size = a.camera.size;
    so.source.camera_fps = a.camera.fps;
    so.source.camera_format = a.camera.format;
    so.decode = p.decode;
    so.want_yuv = !p.video.empty();  // the decoder's YUV goes to the encoder unconverted
    so.slots = 6;
    auto session = FrameSession::open(tracker, so, &error);
    if (!session) {
        fail(interrupted() ? InterruptGuard::exit_code() : kExitInput, error);
        if (interrupted()) r->status = "stopped";
        return r->exit_code;
    }
    r->opened = true;
    r->on_gpu = tracker.on_gpu();
    r->decode_mode = session->decode_mode();
    if (!session->decode_note().empty())
        std::fprintf(stderr, "corrtrack%s: %s\n", tag.c_str(), session->decode_note().c_str());
    FramePipeline& pipeline = session->pipeline();
    if (!a.quiet) std::fprintf(stderr, "corrtrack%s: %s\n", tag.c_str(), pipeline.description().c_str());

    StageSamples& samples = r->samples;
    long lost_frames = 0, frames_done = 0, last_index = -1;
    bool resize_told = false;
    const bool tty = isatty(STDERR_FILENO);
    const auto t_start = std::chrono::steady_clock::now();
    auto t_progress = t_start;

    std::vector<AnnotatedTarget> shown;  // what the video shows of a frame (capacity kept)
    // The frame and its boxes to the video writer's queue; false + *why when the video failed.
    auto submit_video = [&](const LoopFrame& lf, const std::vector<TrackResult>& results, std::string* why) {
        const Frame* f = lf.frame;
        if (!out.video) {
            VideoWriterOptions vo;
            vo.fps = pipeline.fps() > 0 && pipeline.fps() <= 1000 ? pipeline.fps() : 25.0;
            vo.quality = a.video_quality;
            vo.hardware = true;
            vo.yuv = f->yuv_format;
            auto writer = VideoWriter::open(out.video_path, f->size(), vo, why);
            if (!writer) return false;
            out.encoder = writer->encoder();
            out.encoder_note = writer->encoder_note();
            out.video = std::make_unique<AsyncVideoWriter>(std::move(writer), kVideoQueueDepth);
        }
        // The source gives every frame the first frame's size; anything else is a bug to
        // report, never a write past the buffer.
        if (f->yuv.size() != yuv420_bytes(f->width, f->height)) {
            *why = "frame " + std::to_string(lf.index) + " has no YUV picture for the video";
            return false;
        }
        // Only copies here: the writer thread draws and encodes (waiting only when the queue
        // is full).
        VideoSlot* slot = out.video->acquire();
        if (!slot) {
            *why = out.video->error();
            return false;
        }
        slot->yuv.assign(f->yuv.begin(), f->yuv.end());
        slot->yuv_format = f->yuv_format;
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
        return true;
    };
    auto on_frame = [&](const LoopFrame& lf, std::vector<TrackResult>& results, std::string* why) {
        if (lf.first && !a.quiet)
            std::fprintf(stderr, "corrtrack%s: kernel %s%s\n", tag.c_str(), kernel.c_str(),
                         kernel == "auto" ? " (picks the fastest per shape)" : "");
        if (lf.decoded_size != lf.size && !resize_told) {
            resize_told = true;
            std::fprintf(stderr,
                         "%scorrtrack%s: frame %ld is %dx%d where the first frame was %dx%d: frames of another "
                         "size are scaled to %dx%d (boxes stay in the first frame's coordinates)\n",
                         tty && progress ? "\n" : "", tag.c_str(), lf.index, lf.decoded_size.width,
                         lf.decoded_size.height, lf.size.width, lf.size.height, lf.size.width, lf.size.height);
        }
        const auto t_render = std::chrono::steady_clock::now();
        // A write error stops the run after this frame, whose rows the other outputs still
        // get: every count (summary, JSON "frames") is then the rows they hold.
        std::string failure;
        if (!out.video_path.empty() && !submit_video(lf, results, &failure)) out.note_error(failure);
        const double render_ms =
            out.video_path.empty()
                ? 0.0
                : std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_render).count();
        for (std::size_t i = 0; i < results.size(); ++i) {
            results[i].times.render_ms = render_ms;
            const FrameRecord rec{lf.index, lf.pts, static_cast<int>(i), results[i]};
            if (!out.write(rec) && failure.empty()) failure = out.error;
            if (results[i].lost) ++lost_frames;
            if (i == 0) samples.add(results[i].times);
        }
        if (!out.flush() && failure.empty()) failure = out.error;
        ++frames_done;
        r->progress.store(frames_done, std::memory_order_relaxed);
        last_index = lf.index;
        const auto now = std::chrono::steady_clock::now();
        if (progress && std::chrono::duration<double>(now - t_progress).count() >= 1.0) {
            t_progress = now;
            const double secs = std::chrono::duration<double>(now - t_start).count();
            const long total = pipeline.frame_count();
            std::fprintf(stderr, tty ? "\rframe %ld%s%s  %.1f fps   " : "frame %ld%s%s  %.1f fps\n", frames_done,
                         total > 0 ? "/" : "", total > 0 ? std::to_string(total).c_str() : "", frames_done / secs);
        }
        *why = failure;
        return failure.empty();
    };
    TrackLoopOptions lo;
    lo.pacing.realtime = a.realtime;
    lo.pacing.max_frames = a.max_frames;
    lo.need_host_frame = !p.video.empty();
    lo.pacing.stop = stop_flag;
    lo.pacing.clock = a.pacing_clock;
    TrackLoopStats& st = r->loop;
    const int loop_rc = run_track_loop(*session, boxes, lo, on_frame, &st, &error);
    // The decoder is done (or stops now): its account of the input is final after this.
    pipeline.stop();
    if (st.frames > 0) out.close_video();  // before the clock stops: the run includes it
    const char* nl = tty && progress ? "\n" : "";
    int exit_code = 0;
    bool failed = loop_rc != 0;  // a target could not start, or an output could not be written
    if (failed) {
        std::fprintf(stderr, "%scorrtrack %s: %s\n", nl, cmd.c_str(), error.c_str());
        r->error = error;
    }
    const long frames = st.frames;
    const SourceReport rep = pipeline.report();
    const bool limit_reached = a.max_frames >= 0 && frames >= a.max_frames;
    const bool signalled = interrupted();
    if (!failed && !signalled && !limit_reached) {
        switch (rep.end) {
        case EndReason::kDamaged:
            std::fprintf(stderr, "%scorrtrack %s: %s%s\n", nl, cmd.c_str(), pipeline.error().c_str(),
                         a.allow_damaged ? " (--allow-damaged: the other frames were tracked)"
                                         : "; the other frames were tracked (--allow-damaged accepts this)");
            r->error = pipeline.error();
            if (!a.allow_damaged) exit_code = kExitDamaged;
            break;
        case EndReason::kClean:
        case EndReason::kNone: break;
        default:
            std::fprintf(stderr, "%scorrtrack %s: %s\n", nl, cmd.c_str(), pipeline.error().c_str());
            r->error = pipeline.error();
            exit_code = kExitInput;
        }
        if (frames == 0 && exit_code == 0) {
            std::fprintf(stderr, "corrtrack %s: '%s' has no frames\n", cmd.c_str(), p.input.c_str());
            r->error = "'" + p.input + "' has no frames";
            exit_code = kExitInput;
        }
    } else if (!failed && !signalled) {
        // --frames ended the run: frames lost among those it covered still make it damaged.
        const long lost = static_cast<long>(
            std::count_if(rep.lost_at.begin(), rep.lost_at.end(), [&](long i) { return i <= last_index; }));
        if (lost > 0) {
            std::fprintf(stderr, "%scorrtrack %s: '%s': %ld frame(s) up to frame %ld missing or undecodable%s\n", nl,
                         cmd.c_str(), p.input.c_str(), lost, last_index,
                         a.allow_damaged ? " (--allow-damaged)" : " (--allow-damaged accepts this)");
            r->error = std::to_string(lost) + " frame(s) missing or undecodable";
            if (!a.allow_damaged) exit_code = kExitDamaged;
        }
    }
    // Frames lost after the last one tracked, or missing at the end, get their NaN lines as a
    // gap in the middle does: line k of the OTB file stays source frame k.
    if (!failed && !signalled && !limit_reached && (rep.end == EndReason::kClean || rep.end == EndReason::kDamaged))
        for (auto& w : out.otb) w->pad_to(rep.delivered + rep.lost + rep.missing_at_end);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    nlohmann::json lost_at = rep.lost_at;
    const std::string end =
        limit_reached || (signalled && rep.end == EndReason::kInterrupted) ? "stopped" : end_name(rep.end);
    const nlohmann::json tail = {
        {"frames", frames},
        {"late_dropped", st.late_drops},
        {"live_dropped", pipeline.dropped()},
        {"fps", frames / std::max(secs, 1e-9)},
        {"source",
         {{"end", end},
          {"lost", rep.lost},
          {"lost_frames", lost_at},
          {"missing_at_end", rep.missing_at_end},
          {"concealed", rep.concealed},
          {"resized", rep.resized}}},
        {"interrupted", signalled ? nlohmann::json(InterruptGuard::signal_name()) : nlohmann::json(nullptr)}};
    if (!out.finish(frames > 0, tail, cmd.c_str())) {
        failed = true;
        if (r->error.empty()) r->error = out.error.empty() ? "an output could not be written" : out.error;
    }
    // A write error outranks the signal: the user must hear that an output is incomplete.
    if (failed)
        exit_code = kExitInput;
    else if (signalled)
        exit_code = InterruptGuard::exit_code();
    r->exit_code = exit_code;
    if (failed)
        r->status = "failed";
    else if (exit_code == kExitInput)
        r->status = rep.end == EndReason::kStalled ? "stalled" : "failed";
    else if (exit_code == kExitDamaged || (!signalled && !limit_reached && rep.end == EndReason::kDamaged))
        r->status = "damaged";
    else if (signalled)
        r->status = "stopped";
    else
        r->status = end;
    r->frames = frames;
    r->lost_frames = lost_frames;
    r->last_index = last_index;
    r->seconds = secs;
    r->report = rep;
    r->live_dropped = pipeline.dropped();
    r->size = pipeline.size();
    r->encoder = out.encoder;
    r->encoder_note = out.encoder_note;
    r->video_stats = out.video_stats;
    r->video_ok = out.video_ok;
    r->written = out.written;
    r->signalled = signalled;
    return exit_code;
}

std::vector<std::pair<std::string, std::string>> stream_outputs(const StreamPlan& p, const StreamResult& r) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [flag, path] : {std::pair{"csv", p.csv}, {"json", p.json}, {"video", p.video}, {"otb", p.otb}})
        if (!path.empty() && std::find(r.written.begin(), r.written.end(), flag) != r.written.end())
            out.emplace_back(flag, path);
    return out;
}

void print_stream_summary(const TrackArgs& a, const StreamPlan& p, const std::string& kernel, const StreamResult& r) {
    if (a.quiet || !r.opened) return;
    const bool tty = isatty(STDERR_FILENO);
    const std::vector<BoxF>& boxes = p.boxes;
    const SourceReport& rep = r.report;
    const TrackLoopStats& st = r.loop;
    const long frames = r.frames;
    const double secs = r.seconds;
    if (tty) std::fprintf(stderr, "\r%60s\r", "");
    std::printf("frames      %ld (%ld target-frames lost)\n", frames, r.lost_frames);
    if (rep.lost > 0 || rep.missing_at_end > 0 || rep.concealed > 0)
        std::printf(
            "input       damaged: %ld frame(s) not decoded, %ld missing at the end, %ld with concealed "
            "errors\n",
            rep.lost, rep.missing_at_end, rep.concealed);
    if (rep.resized > 0)
        std::printf("resized     %ld frame(s) scaled to %dx%d (the input changed resolution)\n", rep.resized,
                    r.size.width, r.size.height);
    std::printf("wall time   %.2f s, %.1f fps end to end, %.1f fps tracking alone\n", secs,
                frames / std::max(secs, 1e-9), frames > 1 ? (frames - 1) * 1000.0 / std::max(st.track_ms, 1e-9) : 0.0);
    std::printf("kernel      %s (%d target%s, %s)\n", kernel.c_str(), static_cast<int>(boxes.size()),
                boxes.size() == 1 ? "" : "s", r.on_gpu ? "GPU" : "CPU");
    std::printf("decode      %s\n", r.decode_mode.c_str());
    if (!r.encoder.empty()) {
        const VideoQueueStats& vs = r.video_stats;
        std::printf(
            "video       %s, %ld frames; the tracker waited for the encoder %ld time(s), %.1f ms in all "
            "(queue of %d)\n",
            r.encoder.c_str(), vs.frames, vs.waits, vs.wait_ms, vs.depth);
        if (!r.encoder_note.empty()) std::printf("            %s\n", r.encoder_note.c_str());
    }
    std::printf("stage times (per frame, first target):\n%s", r.samples.summary().c_str());
    if (r.live_dropped > 0) std::printf("dropped     %ld frames (live source)\n", r.live_dropped);
    if (a.realtime) std::printf("late        %ld frames dropped to keep real time\n", st.late_drops);
    if (r.signalled)
        std::printf("stopped     by %s after frame %ld; the outputs cover the frames up to it\n",
                    InterruptGuard::signal_name(), r.last_index);
    for (const auto& [flag, path] : stream_outputs(p, r)) std::printf("wrote %-5s %s\n", flag.c_str(), path.c_str());
}

}  // namespace corrtrack
