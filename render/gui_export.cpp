// CSV/JSON export, the recording and the --csv stream; see gui_export.h.
#include "render/gui_export.h"

namespace corrtrack {

GuiExport::GuiExport(GuiModel& model, EventLog& log) : model_(model), log_(log) {}

bool GuiExport::open_csv(const std::string& path, std::string* error) {
    csv_ = output_spec(OutputKind::kCsv).make();
    if (csv_->open({path}, SinkSettings{}, error)) return true;
    csv_.reset();
    return false;
}

void GuiExport::close() {
    std::string error;
    if (video_) video_->close(&error);
    video_.reset();
    if (csv_) csv_->finish({}, &error);
    csv_.reset();
}

void GuiExport::rows_added(const std::vector<FrameRecord>& history, std::size_t first, long frame,
                           const std::string& kernel) {
    nlohmann::json boxes = nlohmann::json::array();
    for (std::size_t i = first; i < history.size(); ++i) {
        const FrameRecord& rec = history[i];
        if (csv_) csv_->write(rec);
        boxes.push_back({{"id", rec.target},
                         {"box", box_json(rec.result.box)},
                         {"score", rec.result.score},
                         {"lost", rec.result.lost}});
    }
    log_.log({{"event", "frame"}, {"frame", frame}, {"kernel", kernel}, {"targets", boxes}});
}

void GuiExport::record(const Frame& frame, const FrameSink& sink, const std::vector<AnnotatedTarget>& targets) {
    if (!video_) return;
    const std::size_t bytes = static_cast<std::size_t>(frame.width) * 3 * frame.height;
    const std::uint8_t* rgb = frame.rgb.data();
    if (frame.rgb.empty()) {
        // A host copy only while recording.
        if (!read_frame_rgb(sink, &readback_) || sink.size() != frame.size()) return;
        rgb = readback_.data();
    } else if (frame.rgb.size() != bytes) {
        return;
    }
    VideoSlot* slot = video_->acquire();  // waits only while every slot is still queued
    if (!slot) {
        model_.export_message = "recording stopped: " + video_->error();
        model_.export_error = true;
        std::string error;
        video_->close(&error);
        video_.reset();
        return;
    }
    slot->rgb.assign(rgb, rgb + bytes);
    slot->width = frame.width;
    slot->height = frame.height;
    annotate_frame(&slot->overlay, frame.width, targets);
    video_->submit(slot);
    ++model_.recorded_frames;
}

void GuiExport::stop_recording() {
    std::string error;
    const bool ok = video_->close(&error);
    model_.recorded_frames = video_->stats().frames;
    video_.reset();
    model_.export_message =
        ok ? "wrote " + model_.video_path + " (" + std::to_string(model_.recorded_frames) + " frames)" : error;
    model_.export_error = !ok;
}

void GuiExport::toggle_recording(bool has_frame, double fps, Size size) {
    if (video_) {
        stop_recording();
        return;
    }
    if (!has_frame) return;
    VideoWriterOptions vo;
    vo.fps = fps;
    video_size_ = size;
    std::string error;
    auto writer = VideoWriter::open(model_.video_path, video_size_, vo, &error);
    if (writer) video_ = std::make_unique<AsyncVideoWriter>(std::move(writer), kVideoQueueDepth);
    model_.recorded_frames = 0;
    model_.export_message = video_ ? "recording from the next frame" : error;
    model_.export_error = !video_;
}

void GuiExport::input_opened(Size size) {
    if (video_ && size != video_size_) stop_recording();
}

void GuiExport::save(const OutputSpec& spec, const std::vector<FrameRecord>& history, const std::string& input,
                     const std::string& kernel) {
    const std::string& path = model_.export_paths[static_cast<std::size_t>(spec.kind)];
    SinkSettings settings;
    settings.json_head = {{"input", input}, {"kernel", kernel}};
    std::unique_ptr<OutputSink> sink = spec.make();
    std::string error;
    bool ok = sink->open({path}, settings, &error);
    if (ok) {
        for (const FrameRecord& r : history) ok = sink->write(r) && ok;
        ok = sink->finish(nlohmann::json::object(), &error) && ok;
    } else {
        sink->discard();
    }
    if (!ok && error.empty()) error = sink->error();
    model_.export_message = ok ? "wrote " + path : error;
    model_.export_error = !ok;
}

void GuiExport::screenshot_saved(const std::string& path, bool ok) {
    model_.export_message = ok ? "wrote " + path : "cannot write " + path;
    model_.export_error = !ok;
}

}  // namespace corrtrack
