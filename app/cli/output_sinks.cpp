// The output table and its row sinks (CSV, JSON, OTB text); the video sink is in
// video_sink.cpp. See output_sinks.h.
#include "app/cli/output_sinks.h"

#include "app/cli/video_sink.h"

namespace corrtrack {
namespace {

class CsvSink : public OutputSink {
public:
    bool open(const std::vector<std::string>& files, const SinkSettings&, std::string* why) override {
        return w_.open(files.at(0), why);
    }
    bool write(const FrameRecord& rec) override { return w_.write(rec); }
    bool flush() override { return w_.flush(); }
    bool finish(const nlohmann::json&, std::string* why) override { return w_.close(why); }
    void discard() override {}  // the writer's destructor drops the temporary
    const std::string& error() const override { return w_.error(); }

private:
    CsvWriter w_;
};

class JsonSink : public OutputSink {
public:
    bool open(const std::vector<std::string>& files, const SinkSettings& s, std::string* why) override {
        return w_.open(files.at(0), s.json_head, why);
    }
    bool write(const FrameRecord& rec) override { return w_.write(to_json(rec)); }
    bool flush() override { return w_.flush(); }
    bool finish(const nlohmann::json& tail, std::string* why) override { return w_.close(tail, why); }
    void discard() override {}
    const std::string& error() const override { return w_.error(); }

private:
    JsonResultsWriter w_;
};

// One file per target; line k is source frame k.
class OtbSink : public OutputSink {
public:
    bool open(const std::vector<std::string>& files, const SinkSettings&, std::string* why) override {
        for (const std::string& path : files) {
            w_.push_back(std::make_unique<OtbWriter>());
            if (!w_.back()->open(path, why)) return false;
        }
        return true;
    }
    bool write(const FrameRecord& rec) override {
        return w_.at(static_cast<std::size_t>(rec.target))->write(rec.frame, rec.result.box);
    }
    bool flush() override {
        bool ok = true;
        for (auto& w : w_) ok = w->flush() && ok;
        return ok;
    }
    // Frames lost after the last one tracked, or missing at the end, get their NaN lines as a
    // gap in the middle does.
    void input_ended(long source_frames) override {
        for (auto& w : w_) w->pad_to(source_frames);
    }
    bool finish(const nlohmann::json&, std::string* why) override {
        bool ok = !w_.empty();
        for (auto& w : w_) ok = w->close(why) && ok;
        return ok;
    }
    void discard() override {}
    const std::string& error() const override {
        for (const auto& w : w_)
            if (!w->error().empty()) return w->error();
        return none_;
    }

private:
    std::vector<std::unique_ptr<OtbWriter>> w_;
    std::string none_;
};

template <class Sink>
std::unique_ptr<OutputSink> make() {
    return std::make_unique<Sink>();
}

bool check_video_path(const std::string& path, std::string* why) { return VideoWriter::check_path(path, why); }

}  // namespace

const std::array<OutputSpec, kOutputKinds>& output_table() {
    // Rows in OutputKind's order.
    static const std::array<OutputSpec, kOutputKinds> table{{
        {OutputKind::kCsv, "csv", "--csv",
         "per-frame rows: frame, pts, box, centre, score, confidence, lost, stage times", "csv", false, false, false,
         nullptr, make<CsvSink>},
        {OutputKind::kJson, "json", "--json", "the same rows as one JSON document", "json", false, false, false,
         nullptr, make<JsonSink>},
        {OutputKind::kVideo, "video", "--video", "annotated video (.mp4/.mkv): boxes, search window, heatmap inset",
         "mp4", false, true, true, check_video_path, make_video_sink},
        {OutputKind::kOtb, "otb", "--otb", "OTB-style results: x,y,w,h per frame, 1-based", "txt", true, false, false,
         nullptr, make<OtbSink>},
    }};
    return table;
}

std::vector<std::string> output_files(const OutputSpec& spec, const std::string& path, std::size_t targets) {
    if (path.empty()) return {};
    if (!spec.per_target || targets <= 1) return {path};
    std::vector<std::string> files;
    for (std::size_t t = 0; t < targets; ++t) files.push_back(path + "." + std::to_string(t));
    return files;
}

}  // namespace corrtrack
