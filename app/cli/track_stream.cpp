// One stream of `corrtrack track` (see track_stream.h): outputs (output_sinks.h) opened before
// the run, written as frames come (each write checked) and renamed into place at the end, also
// after Ctrl-C.
#include "app/cli/track_stream.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "app/cli/commands.h"
#include "app/cli/interrupt.h"
#include "app/cli/output_sinks.h"
#include "app/pipeline/frame_ring.h"

namespace corrtrack {
namespace {

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

// Every output of a run (the table's sinks the plan asks for), opened before it so that an
// unwritable path fails at once; each is renamed into place by finish(), or dropped (the
// destination untouched).
struct Outputs {
    struct Entry {
        const OutputSpec* spec;
        std::unique_ptr<OutputSink> sink;
    };
    std::vector<Entry> sinks;          // in the table's order
    bool pictures = false;             // a sink shows the frames: they keep their YUV picture and maps
    std::string error;                 // the first write error
    std::vector<std::string> written;  // the outputs finish() completed, by the table's names

    bool open(const StreamPlan& p, const SinkSettings& settings, std::string* why) {
        for (const OutputSpec& spec : output_table()) {
            const std::vector<std::string> files = p.files(spec.kind);
            if (files.empty()) continue;
            sinks.push_back({&spec, spec.make()});
            if (!sinks.back().sink->open(files, settings, why)) return false;
            pictures = pictures || spec.needs_pictures;
        }
        return true;
    }
    // The frame to the sinks that show it; false + *why when one failed.
    bool picture(const SinkPicture& pic, std::string* why) {
        for (Entry& e : sinks)
            if (e.spec->needs_pictures && !e.sink->picture(pic, why)) return false;
        return true;
    }
    // Rows of one frame; false (error set) on the first failed write.
    bool write(const FrameRecord& rec) {
        bool ok = true;
        for (Entry& e : sinks) ok = e.sink->write(rec) && ok;
        if (!ok) first_error();
        return ok;
    }
    // Pushes the frame's rows to the files: a full disk stops the run at this frame.
    bool flush() {
        bool ok = true;
        for (Entry& e : sinks) ok = e.sink->flush() && ok;
        if (!ok) first_error();
        return ok;
    }
    // A failure that is not a row's (the video): said once, by the run.
    void note_error(const std::string& why) {
        if (error.empty()) error = why;
    }
    void first_error() {
        for (const Entry& e : sinks)
            if (error.empty() && !e.sink->error().empty()) error = e.sink->error();
    }
    void input_ended(long source_frames) {
        for (Entry& e : sinks) e.sink->input_ended(source_frames);
    }
    void drain() {
        for (Entry& e : sinks) e.sink->drain();
    }
    // Completes every output; false with the messages printed when any failed. keep = false
    // drops them all (nothing was tracked).
    bool finish(bool keep, const nlohmann::json& json_tail, const char* cmd) {
        if (!keep) {
            for (Entry& e : sinks) e.sink->discard();
            return true;
        }
        drain();
        nlohmann::json tail = json_tail;
        for (const Entry& e : sinks) e.sink->describe(&tail);
        bool ok = true;
        for (Entry& e : sinks) {
            std::string why;
            if (e.sink->finish(tail, &why)) {
                if (e.sink->started()) written.push_back(e.spec->name);
                continue;
            }
            ok = false;
            if (why != error) std::fprintf(stderr, "corrtrack %s: %s\n", cmd, why.c_str());  // else said already
        }
        return ok;
    }
    void report(StreamResult* r) const {
        for (const Entry& e : sinks) e.sink->report(r);
        r->written = written;
    }
};

// Says how the input ended, once the loop is over: the exit code it gives (0, damaged or
// failed) with its message on stderr and in r->error. Only for a run that no write error,
// signal or --frames ended.
int judge_input(const TrackArgs& a, const StreamPlan& p, const std::string& cmd, const char* nl,
                const FramePipeline& pipeline, const SourceReport& rep, long frames, StreamResult* r) {
    int exit_code = 0;
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
    return exit_code;
}

// --frames ended the run: frames lost among those it covered still make it damaged.
int judge_limited(const TrackArgs& a, const StreamPlan& p, const std::string& cmd, const char* nl,
                  const SourceReport& rep, long last_index, StreamResult* r) {
    const long lost = static_cast<long>(
        std::count_if(rep.lost_at.begin(), rep.lost_at.end(), [&](long i) { return i <= last_index; }));
    if (lost == 0) return 0;
    std::fprintf(stderr, "%scorrtrack %s: '%s': %ld frame(s) up to frame %ld missing or undecodable%s\n", nl,
                 cmd.c_str(), p.input.c_str(), lost, last_index,
                 a.allow_damaged ? " (--allow-damaged)" : " (--allow-damaged accepts this)");
    r->error = std::to_string(lost) + " frame(s) missing or undecodable";
    return a.allow_damaged ? 0 : kExitDamaged;
}

// The stream's status word for the summaries.
std::string stream_status(bool failed, int exit_code, bool signalled, bool limit_reached, EndReason end,
                          const std::string& end_word) {
    if (failed) return "failed";
    if (exit_code == kExitInput) return end == EndReason::kStalled ? "stalled" : "failed";
    if (exit_code == kExitDamaged || (!signalled && !limit_reached && end == EndReason::kDamaged)) return "damaged";
    if (signalled) return "stopped";
    return end_word;
}

// "frame N/M  F fps" on stderr about once a second (an unnamed stream, not --quiet).
class ProgressLine {
public:
    ProgressLine(bool on, bool tty) : on_(on), tty_(tty) {}
    void frame_done(long frames_done, long total) {
        if (!on_) return;
        const auto now = std::chrono::steady_clock::now();
        if (std::chrono::duration<double>(now - last_).count() < 1.0) return;
        last_ = now;
        const double secs = std::chrono::duration<double>(now - start_).count();
        std::fprintf(stderr, tty_ ? "\rframe %ld%s%s  %.1f fps   " : "frame %ld%s%s  %.1f fps\n", frames_done,
                     total > 0 ? "/" : "", total > 0 ? std::to_string(total).c_str() : "", frames_done / secs);
    }
    double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

private:
    bool on_, tty_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_ = start_;
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
    Outputs out;
    SinkSettings settings;
    settings.json_head = {{"input", p.input}, {"kernel", kernel}};
    if (named) settings.json_head["stream"] = p.name;
    settings.video_quality = a.video_quality;
    settings.heatmap = a.heatmap;
    if (!out.open(p, settings, &error)) return fail(kExitInput, error);
    announce_compute_path();
    const std::atomic<bool>* stop_flag = &InterruptGuard::flag();
    auto interrupted = [] { return InterruptGuard::signal_number() != 0; };

    // The tracker exists before the source: NVDEC decodes on the tracker's stream.
    TrackerOptions topt = a.tracker;
    topt.keep_maps = out.pictures && a.heatmap;
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
    so.want_yuv = out.pictures;  // the decoder's YUV goes to the encoder unconverted
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

    long lost_frames = 0, frames_done = 0, last_index = -1;
    bool resize_told = false;
    const bool tty = isatty(STDERR_FILENO);
    ProgressLine progress_line(progress, tty);
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
        // A write error stops the run after this frame, whose rows the other outputs still
        // get: every count (summary, JSON "frames") is then the rows they hold.
        std::string failure;
        double render_ms = 0;
        if (out.pictures) {
            const auto t_render = std::chrono::steady_clock::now();
            if (!out.picture({lf, results, tracker, pipeline.fps()}, &failure)) out.note_error(failure);
            render_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_render).count();
        }
        for (std::size_t i = 0; i < results.size(); ++i) {
            results[i].times.render_ms = render_ms;
            if (!out.write({lf.index, lf.pts, static_cast<int>(i), results[i]}) && failure.empty()) failure = out.error;
            if (results[i].lost) ++lost_frames;
            if (i == 0) r->samples.add(results[i].times);
        }
        if (!out.flush() && failure.empty()) failure = out.error;
        ++frames_done;
        r->progress.store(frames_done, std::memory_order_relaxed);
        last_index = lf.index;
        progress_line.frame_done(frames_done, pipeline.frame_count());
        *why = failure;
        return failure.empty();
    };
    TrackLoopOptions lo;
    lo.pacing.realtime = a.realtime;
    lo.pacing.max_frames = a.max_frames;
    lo.need_host_frame = out.pictures;
    lo.pacing.stop = stop_flag;
    lo.pacing.clock = a.pacing_clock;
    TrackLoopStats& st = r->loop;
    const int loop_rc = run_track_loop(*session, p.boxes, lo, on_frame, &st, &error);
    // The decoder is done (or stops now): its account of the input is final after this.
    pipeline.stop();
    if (st.frames > 0) out.drain();  // before the clock stops: the run includes the video's queue
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
    if (!failed && !signalled)
        exit_code = limit_reached ? judge_limited(a, p, cmd, nl, rep, last_index, r)
                                  : judge_input(a, p, cmd, nl, pipeline, rep, frames, r);
    // Frames lost after the last one tracked, or missing at the end, count in outputs that keep
    // one line per source frame.
    if (!failed && !signalled && !limit_reached && (rep.end == EndReason::kClean || rep.end == EndReason::kDamaged))
        out.input_ended(rep.delivered + rep.lost + rep.missing_at_end);
    const double secs = progress_line.seconds();
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
          {"lost_frames", rep.lost_at},
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
    r->status = stream_status(failed, exit_code, signalled, limit_reached, rep.end, end);
    r->frames = frames;
    r->lost_frames = lost_frames;
    r->last_index = last_index;
    r->seconds = secs;
    r->report = rep;
    r->live_dropped = pipeline.dropped();
    r->size = pipeline.size();
    out.report(r);
    r->signalled = signalled;
    return exit_code;
}

std::vector<std::pair<std::string, std::string>> stream_outputs(const StreamPlan& p, const StreamResult& r) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const OutputSpec& spec : output_table()) {
        const std::string& path = p.output(spec.kind);
        if (!path.empty() && std::find(r.written.begin(), r.written.end(), spec.name) != r.written.end())
            out.emplace_back(spec.name, path);
    }
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
