#include "app/io/result_writers.h"

#include <cerrno>
#include <cstring>
#include <fstream>

namespace corrtrack {

CsvWriter::~CsvWriter() {
    if (file_) std::fclose(file_);
}

const char* CsvWriter::header() {
    return "frame,pts,target,x,y,w,h,cx,cy,score,confidence,lost,redetected,"
           "decode_ms,upload_ms,correlate_ms,peak_ms,render_ms,latency_ms";
}

bool CsvWriter::open(const std::string& path, std::string* error) {
    file_ = std::fopen(path.c_str(), "w");
    if (!file_) {
        if (error) *error = "cannot write '" + path + "': " + std::strerror(errno);
        return false;
    }
    path_ = path;
    std::fprintf(file_, "%s\n", header());
    return true;
}

void CsvWriter::write(const FrameRecord& r) {
    const TrackResult& t = r.result;
    std::fprintf(file_, "%ld,%.6f,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.5f,%.3f,%d,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f\n",
                 r.frame, r.pts, r.target, t.box.x, t.box.y, t.box.width, t.box.height, t.sub_cx, t.sub_cy,
                 t.score, t.confidence, t.lost ? 1 : 0, t.redetected ? 1 : 0, t.times.decode_ms,
                 t.times.upload_ms, t.times.correlate_ms, t.times.peak_ms, t.times.render_ms, t.times.latency_ms);
}

bool CsvWriter::close(std::string* error) {
    if (!file_) return true;
    const bool ok = std::fclose(file_) == 0;
    file_ = nullptr;
    if (!ok && error) *error = "error writing '" + path_ + "'";
    return ok;
}

bool write_otb_results(const std::string& path, const std::vector<BoxF>& boxes, std::string* error) {
    std::ofstream out(path);
    if (!out) {
        if (error) *error = "cannot write '" + path + "': " + std::strerror(errno);
        return false;
    }
    char line[128];
    for (const BoxF& b : boxes) {
        std::snprintf(line, sizeof line, "%.2f,%.2f,%.2f,%.2f\n", b.x + 1, b.y + 1, b.width, b.height);
        out << line;
    }
    if (!out) {
        if (error) *error = "error writing '" + path + "'";
        return false;
    }
    return true;
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
    std::ofstream out(path);
    if (!out) {
        if (error) *error = "cannot write '" + path + "': " + std::strerror(errno);
        return false;
    }
    out << doc.dump(2) << "\n";
    if (!out) {
        if (error) *error = "error writing '" + path + "'";
        return false;
    }
    return true;
}

}  // namespace corrtrack
