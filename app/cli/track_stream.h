// One stream of `corrtrack track`: an input with its targets and its outputs, run start to end
// on the calling thread (its own MultiTracker on the GPU context it is given, FrameSession
// with its decode thread, NVDEC session and video writer thread). A single-input run is one
// stream on the main thread; several inputs are several streams on threads of their own
// (app/cli/track_streams.h).
// Thread rules: run_stream may run on several threads at once, each on its own StreamPlan,
// StreamResult and GpuContext (one CUDA stream per input at a time); the TrackArgs are shared
// and read only. announce_compute_path() and the InterruptGuard belong to the main thread,
// before any stream starts.
#pragma once

#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "app/cli/cli_common.h"
#include "app/cli/nvdec_share.h"
#include "app/cli/output_sinks.h"
#include "app/gpu/gpu_context.h"
#include "app/io/async_video.h"
#include "app/io/frame_source.h"
#include "app/io/video_writer.h"
#include "app/pipeline/track_loop.h"

namespace corrtrack {

// The command line of `track`: settings every stream shares, and the inputs.
struct TrackArgs {
    std::string input;                   // the positional INPUT (one stream)
    std::vector<std::string> boxes;      // --box (with INPUT; with --input they go by group)
    std::vector<std::string> box_files;  // --box-file (at most one per stream)
    std::vector<std::string> inputs;     // --input FILE, each followed by its --box / --box-file
    std::string inputs_list;             // --inputs LIST
    int jobs = 0;                        // streams tracked at once (0: all)
    OutputPaths outputs;  // --csv, --json ... (output_sinks.h); with several inputs --json is also the summary
    bool heatmap = true;
    long max_frames = -1;
    bool quiet = false;
    double read_timeout = 5.0;
    bool realtime = false;
    PacingClock* pacing_clock = nullptr;  // --realtime's clock: null, the steady clock (tests: a fake)
    bool allow_damaged = false;
    DecodeMode decode = DecodeMode::kAuto;
    int nvdec_streams = kDefaultNvdecStreams;   // with several inputs and auto: NVDEC at once at most
    double nvdec_rate = kDefaultNvdecMpixPerS;  // the same for paced streams, in Mpixel/s
    CameraRequest camera;
    VideoQuality video_quality = VideoQuality::kFast;
    TrackerOptions tracker;
    const std::string& output(OutputKind k) const { return outputs[static_cast<std::size_t>(k)]; }
};

// One input, its targets and the outputs it writes (empty: none).
struct StreamPlan {
    std::string name;  // "" in a single-input run (messages and outputs as they always were)
    std::string input;
    std::vector<BoxF> boxes;
    std::string box_file;                   // the box file read, for the output checks ("" if none)
    OutputPaths outputs;                    // each output's path for this stream ("" none)
    DecodeMode decode = DecodeMode::kAuto;  // --decode; run_streams' NvdecShare may send auto to the CPU
    const std::string& output(OutputKind k) const { return outputs[static_cast<std::size_t>(k)]; }
    // The files output k writes: its path, or one per target (output_files()).
    std::vector<std::string> files(OutputKind k) const { return output_files(output_spec(k), output(k), boxes.size()); }
};

// What a stream did, for the summaries and the exit code.
struct StreamResult {
    int exit_code = 0;              // 0, 1 (failed), 2 (usage: a kernel the tracker refused), 3, 128+N
    bool started = false;           // run_stream was called (--jobs and a signal may leave it false)
    bool opened = false;            // the input opened and the loop ran
    std::string error;              // the message that ended the stream, if any
    std::string status;             // clean, damaged, failed, stalled, stopped, not started ...
    std::atomic<long> progress{0};  // frames done so far (read by the main thread)
    long frames = 0, lost_frames = 0, last_index = -1;
    double seconds = 0;
    SourceReport report;
    TrackLoopStats loop;
    StageSamples samples;
    long live_dropped = 0;
    Size size;
    std::string decode_mode;
    std::string decode_why;  // why an auto stream decodes on the CPU ("" when it is no news)
    bool on_gpu = false;
    std::string encoder, encoder_note;
    VideoQueueStats video_stats;
    bool video_ok = true;
    std::vector<std::string> written;  // outputs completed and in place, by OutputSpec::name
    bool signalled = false;
};

// The outputs a stream completed, {name, path} in the output table's order: what the
// summaries may say was written (a failed output is not there).
std::vector<std::pair<std::string, std::string>> stream_outputs(const StreamPlan& plan, const StreamResult& result);

// Runs one stream: opens its outputs, the tracker and the input, tracks every frame, completes
// the outputs and fills *result. Messages go to stderr as "corrtrack track: ..." (with the
// stream's name in brackets when it has one). Progress goes to stderr only for an unnamed
// stream. The tracker works in `gpu` (the caller's, made before and destroyed after the call;
// no other thread uses it meanwhile). Returns the stream's exit code (also in result->exit_code).
int run_stream(const TrackArgs& args, const StreamPlan& plan, const std::string& kernel, const GpuContext& gpu,
               StreamResult* result);

// The summary of a single-input run on stdout (unchanged since before several streams).
void print_stream_summary(const TrackArgs& args, const StreamPlan& plan, const std::string& kernel,
                          const StreamResult& result);

}  // namespace corrtrack
