// Several streams in one `corrtrack track` process: the input list (--inputs), stream names
// and per-stream output paths, and the run of every stream on threads of its own with the
// per-stream and aggregate summary.
//
// Names: a stream is named after its input's file name without the extension (cam1.mp4 ->
// cam1, /dev/video0 -> video0, seq/img/%05d.jpg -> seq, an OTB folder -> the folder's name,
// rtsp://host/live/cam3?x=1 -> cam3, - and pipe:0 -> stdin), characters other than letters,
// digits, '.', '_' and '-' replaced by '_'; a name already taken gets -2, -3, ... Each output
// flag becomes one file per stream with the name before the extension: --csv out.csv ->
// out.cam1.csv (out -> out.cam1). --json out.json writes out.cam1.json ... per stream and, in
// out.json itself, the run's summary (per stream and in all).
// Thread rules: main thread, but run_streams, which starts one thread per stream (at most
// --jobs at once).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/cli/nvdec_share.h"
#include "app/cli/track_stream.h"

namespace corrtrack {

// One line of an input list: `input box [box...]`.
struct InputEntry {
    std::string input;
    std::vector<BoxF> boxes;
    int line = 0;  // 1-based, for messages
};

// Lines `input x,y,w,h [x,y,w,h ...]`, fields separated by spaces or tabs (an input with spaces
// in double quotes); '#' at the start of a field starts a comment; blank lines are skipped.
// False + *error naming `name` and the line ("cams.txt line 3: box '1,2,3' is not x,y,w,h").
constexpr std::size_t kMaxInputsListBytes = 1 << 20;
bool parse_inputs_list(const std::string& text, const std::string& name, std::vector<InputEntry>* entries,
                       std::string* error);
bool read_inputs_list(const std::string& path, std::vector<InputEntry>* entries, std::string* error);

// The stream name of an input (see above), before making it unique.
std::string stream_name_of(const std::string& input);
// One name per input, unique in the run.
std::vector<std::string> unique_stream_names(const std::vector<std::string>& inputs);
// The per-stream path of an output: out.csv -> out.<name>.csv. /dev/null stays /dev/null;
// any other device or FIFO cannot be split: false + *error (a usage error).
bool stream_output_path(const std::string& path, const std::string& name, const std::string& flag, std::string* result,
                        std::string* error);

// What run_stream_set did: each plan's result and decoder (in plan order) and the wall time
// from the first stream's start to the last one's end.
struct StreamSetRun {
    std::vector<std::unique_ptr<StreamResult>> results;
    std::vector<DecoderChoice> decoders;
    std::size_t jobs = 0;  // streams at once
    double seconds = 0;
};

// Runs every plan (each named) on its own thread, at most args.jobs at once (0: all), each
// with the decoder an NvdecShare of args.nvdec_streams gives it (plan.decode is what it asks
// for). Prints progress lines on stderr unless args.quiet, nothing else; the bench's --streams
// runs it too.
StreamSetRun run_stream_set(const TrackArgs& args, const std::vector<StreamPlan>& plans, const std::string& kernel);

// run_stream_set, then the per-stream and aggregate summary on stdout and args.json's summary.
// Returns the exit code: 1 if any stream failed (or the summary could not be written), else
// 128+N after signal N, else 3 if any stream was damaged (not with --allow-damaged), else 0.
int run_streams(const TrackArgs& args, const std::vector<StreamPlan>& plans, const std::string& kernel);

}  // namespace corrtrack
