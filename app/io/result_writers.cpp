#include "app/io/result_writers.h"

#include <algorithm>
#include <cstring>

namespace corrtrack {
namespace {

std::string otb_line(const BoxF& b) {
    char line[160];
    std::snprintf(line, sizeof line, "%.2f,%.2f,%.2f,%.2f\n", b.x + 1, b.y + 1, b.width, b.height);
    return line;
}

// Writes through `out` unless an earlier write failed; keeps the first error.
bool checked(OutputFile& out, std::string& error, const std::string& text) {
    if (!error.empty()) return false;
    if (!out.is_open()) {
        error = "writing '" + out.path() + "': the output is not open";
        return false;
    }
    return out.write(text, &error);
}

bool checked_flush(OutputFile& out, std::string& error) {
    if (!error.empty()) return false;
    return out.flush(&error);
}

bool checked_close(OutputFile& out, std::string& error, std::string* out_error) {
    if (error.empty() && out.commit(&error)) return true;
    out.discard();
    if (out_error) *out_error = error;
    return false;
}

}  // namespace

const char* CsvWriter::header() {
    return "frame,pts,target,x,y,w,h,cx,cy,score,confidence,lost,redetected,"
           "decode_ms,upload_ms,correlate_ms,peak_ms,render_ms,latency_ms";
}

bool CsvWriter::open(const std::string& path, std::string* error) {
    error_.clear();
    if (!out_.open(path, OutputFile::Mode::kStream, error)) return false;
    if (!checked(out_, error_, std::string(header()) + "\n")) {
        if (error) *error = error_;
        return false;
    }
    return true;
}

bool CsvWriter::write(const FrameRecord& r) {
    const TrackResult& t = r.result;
    char row[512];
    std::snprintf(row, sizeof row,
                  "%ld,%.6f,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.5f,%.3f,%d,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n", r.frame,
                  r.pts, r.target, t.box.x, t.box.y, t.box.width, t.box.height, t.sub_cx, t.sub_cy, t.score,
                  t.confidence, t.lost ? 1 : 0, t.redetected ? 1 : 0, t.times.decode_ms, t.times.upload_ms,
                  t.times.correlate_ms, t.times.peak_ms, t.times.render_ms, t.times.latency_ms);
    return checked(out_, error_, row);
}

bool CsvWriter::flush() { return checked_flush(out_, error_); }

bool CsvWriter::close(std::string* error) {
    if (!out_.is_open() && error_.empty()) return true;
    return checked_close(out_, error_, error);
}

bool JsonResultsWriter::open(const std::string& path, const nlohmann::json& head, std::string* error) {
    error_.clear();
    rows_ = 0;
    if (!out_.open(path, OutputFile::Mode::kStream, error)) return false;
    std::string text = "{\n";
    for (const auto& [key, value] : head.items())
        text += "  " + nlohmann::json(key).dump() + ": " + value.dump() + ",\n";
    text += "  \"results\": [";
    if (!checked(out_, error_, text)) {
        if (error) *error = error_;
        return false;
    }
    return true;
}

bool JsonResultsWriter::write(const nlohmann::json& row) {
    return checked(out_, error_, (rows_++ ? ",\n    " : "\n    ") + row.dump());
}

bool JsonResultsWriter::flush() { return checked_flush(out_, error_); }

bool JsonResultsWriter::close(const nlohmann::json& tail, std::string* error) {
    if (!out_.is_open() && error_.empty()) return true;
    std::string text = rows_ ? "\n  ]" : "]";
    for (const auto& [key, value] : tail.items()) text += ",\n  " + nlohmann::json(key).dump() + ": " + value.dump();
    text += "\n}\n";
    checked(out_, error_, text);
    return checked_close(out_, error_, error);
}

bool OtbWriter::open(const std::string& path, std::string* error) {
    error_.clear();
    next_frame_ = 0;
    return out_.open(path, OutputFile::Mode::kStream, error);
}

bool OtbWriter::write(long frame, const BoxF& box) {
    std::string text;
    for (; next_frame_ < frame; ++next_frame_) text += "NaN,NaN,NaN,NaN\n";
    text += otb_line(box);
    next_frame_ = std::max(next_frame_, frame) + 1;
    return checked(out_, error_, text);
}

bool OtbWriter::pad_to(long frames) {
    std::string text;
    for (; next_frame_ < frames; ++next_frame_) text += "NaN,NaN,NaN,NaN\n";
    return text.empty() || checked(out_, error_, text);
}

bool OtbWriter::flush() { return checked_flush(out_, error_); }

bool OtbWriter::close(std::string* error) {
    if (!out_.is_open() && error_.empty()) return true;
    return checked_close(out_, error_, error);
}

bool write_otb_results(const std::string& path, const std::vector<BoxF>& boxes, std::string* error) {
    std::string text;
    for (const BoxF& b : boxes) text += otb_line(b);
    return write_file_atomically(path, text, error);
}

nlohmann::json to_json(const FrameRecord& r) {
    const TrackResult& t = r.result;
    return {{"frame", r.frame},
            {"pts", r.pts},
            {"target", r.target},
            {"box", {t.box.x, t.box.y, t.box.width, t.box.height}},
            {"center", {t.sub_cx, t.sub_cy}},
            {"score", t.score},
            {"confidence", t.confidence},
            {"lost", t.lost},
            {"redetected", t.redetected},
            {"ms",
             {{"decode", t.times.decode_ms},
              {"upload", t.times.upload_ms},
              {"correlate", t.times.correlate_ms},
              {"peak", t.times.peak_ms},
              {"render", t.times.render_ms},
              {"latency", t.times.latency_ms}}}};
}

bool write_json_file(const std::string& path, const nlohmann::json& doc, std::string* error) {
    return write_file_atomically(path, doc.dump(2) + "\n", error);
}

}  // namespace corrtrack
