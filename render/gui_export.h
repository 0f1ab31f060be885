// The GUI's outputs: the --csv file written as frames are tracked, the log's per-frame event,
// the Export panel's files of the history (the row outputs of app/cli/output_sinks.h's table,
// written by the same sinks as `corrtrack track`), the annotated video recording and the
// screenshot message. The recording goes through the CLI's video queue (app/io/async_video.h):
// annotate_frame() says what to draw, exactly as for `corrtrack track --video`, and the
// queue's writer thread draws and encodes, so the GUI thread only copies the frame.
// Thread rules: main thread only; while recording, the video queue's writer thread owns the
// encoder (close() joins it).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app/cli/output_sinks.h"
#include "app/io/annotate.h"
#include "app/io/async_video.h"
#include "app/io/frame.h"
#include "app/io/result_writers.h"
#include "render/frame_sink.h"
#include "render/gui_log.h"
#include "render/panels.h"

namespace corrtrack {

class GuiExport {
public:
    static constexpr int kVideoQueueDepth = 4;  // frames the recording queue holds

    GuiExport(GuiModel& model, EventLog& log);
    ~GuiExport() { close(); }

    bool open_csv(const std::string& path, std::string* error);  // --csv
    // Ends the recording (every queued frame encoded) and completes the --csv file.
    void close();

    // A frame's rows (history[first..]): --csv rows and the log's "frame" event.
    void rows_added(const std::vector<FrameRecord>& history, std::size_t first, long frame, const std::string& kernel);

    bool recording() const { return video_ != nullptr; }
    // Queues `frame` for the recording with `targets` drawn on it. Frames without host RGB
    // (NVDEC through interop) are read back from `sink`, which must show this frame.
    void record(const Frame& frame, const FrameSink& sink, const std::vector<AnnotatedTarget>& targets);
    // Starts recording (from the next frame, at `fps`, in `size`) or stops.
    void toggle_recording(bool has_frame, double fps, Size size);
    // A new input: a recording of another size stops (its encoder is sized for the old one).
    void input_opened(Size size);

    // The history as `spec`'s output (one the panel saves: gui_exports()), to its export path.
    void save(const OutputSpec& spec, const std::vector<FrameRecord>& history, const std::string& input,
              const std::string& kernel);
    void screenshot_saved(const std::string& path, bool ok);

private:
    void stop_recording();

    GuiModel& model_;
    EventLog& log_;
    std::unique_ptr<OutputSink> csv_;  // --csv: the table's CSV sink
    std::unique_ptr<AsyncVideoWriter> video_;
    Size video_size_;
    std::vector<std::uint8_t> readback_;  // frames read back from the frame texture
};

}  // namespace corrtrack
