// The outputs `corrtrack track` writes, as one table: each row says the output's flag, its
// help, whether it is one file per target, whether an image pattern is allowed, and how to make
// its sink. The command line (the flags), the per-stream paths, the overwrite check, the
// stream's run, the summaries and the GUI's export all read this table, so a new output is a
// row here and a sink class (docs/adding_an_output.md).
// Thread rules: the table is constant; a sink belongs to the thread of the stream that made it.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/io/result_writers.h"
#include "app/io/video_writer.h"
#include "app/pipeline/track_loop.h"

namespace corrtrack {

struct StreamResult;

// Row numbers of the table, in its order (the order outputs are listed in summaries).
enum class OutputKind : int { kCsv, kJson, kVideo, kOtb };
constexpr std::size_t kOutputKinds = 4;
// One path per output (empty: not written), indexed by OutputKind.
using OutputPaths = std::array<std::string, kOutputKinds>;

// What a sink needs besides its paths: the stream's settings.
struct SinkSettings {
    nlohmann::json json_head;  // the fields a JSON document starts with (input, kernel, stream)
    VideoQuality video_quality = VideoQuality::kFast;
    bool heatmap = true;  // the video shows the search window and the heatmap inset
};

// A tracked frame as a sink that shows pictures gets it.
struct SinkPicture {
    const LoopFrame& frame;
    const std::vector<TrackResult>& results;
    const MultiTracker& tracker;  // its last maps and search windows
    double fps = 0;               // the input's rate (0: unknown)
};

// One output of one stream: opened before the run (an unwritable path fails at once), fed
// every frame, completed (renamed into place) or dropped at the end.
class OutputSink {
public:
    virtual ~OutputSink() = default;
    // `files`: the path, or one per target for a per-target output. False + *why.
    virtual bool open(const std::vector<std::string>& files, const SinkSettings& settings, std::string* why) = 0;
    // Before the frame's rows (sinks with needs_pictures only); the time it takes is the rows'
    // render_ms. False + *why: the output failed (the run stops after this frame).
    virtual bool picture(const SinkPicture&, std::string*) { return true; }
    // One row per target; false once a write failed (error()).
    virtual bool write(const FrameRecord&) { return true; }
    // The frame's rows to the file: a full disk stops the run at this frame.
    virtual bool flush() { return true; }
    // The input's frame count once it ended cleanly: room for frames never tracked.
    virtual void input_ended(long /*source_frames*/) {}
    // The run is over: finish work of the sink's own (the video's queue); the run's wall time
    // includes it.
    virtual void drain() {}
    // Adds what the sink knows to the JSON document's tail (the video's encoder and queue).
    virtual void describe(nlohmann::json* /*tail*/) const {}
    // Completes the output: false + *why when it cannot be (a write failed).
    virtual bool finish(const nlohmann::json& tail, std::string* why) = 0;
    // Nothing was tracked: the destination stays untouched.
    virtual void discard() = 0;
    // Whether the output exists: a video starts with its first frame.
    virtual bool started() const { return true; }
    virtual const std::string& error() const = 0;  // the first write error
    // The sink's part of the stream's result (the video's encoder, queue and status).
    virtual void report(StreamResult*) const {}
};

struct OutputSpec {
    OutputKind kind;
    const char* name;  // "csv": "wrote csv ...", the summary's "outputs" keys, StreamResult::written
    const char* flag;  // "--csv"
    const char* help;
    const char* extension;  // of the GUI's default file name (corrtrack_boxes.csv)
    bool per_target;        // one file per target: PATH, or PATH.0, PATH.1 ... with several targets
    bool pattern_ok;        // a printf pattern (out/%05d.png) means numbered files
    bool needs_pictures;    // reads the frames' pictures and the tracker's maps
    // Checks a path before anything runs (nullptr: any path); false + *why is a usage error.
    bool (*check_path)(const std::string& path, std::string* why);
    std::unique_ptr<OutputSink> (*make)();
};

const std::array<OutputSpec, kOutputKinds>& output_table();
inline const OutputSpec& output_spec(OutputKind k) { return output_table()[static_cast<std::size_t>(k)]; }

// Whether the GUI's Export panel saves this output from its history: one file of rows (the
// GUI's targets come and go, so per-target files have no fixed list; a video is recorded live).
inline bool gui_exports(const OutputSpec& spec) { return !spec.per_target && !spec.needs_pictures; }

// The files an output writes for `targets` targets: {path}, or path.0, path.1 ... for a
// per-target output with several targets; none when path is empty.
std::vector<std::string> output_files(const OutputSpec& spec, const std::string& path, std::size_t targets);

}  // namespace corrtrack
