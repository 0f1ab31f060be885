// Per-frame result output: CSV rows as they come, a JSON document at the end, and OTB-style
// result text (x,y,w,h per line, 1-based like OTB ground truth).
// Thread rules: one thread owns each writer.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/track/types.h"

namespace corrtrack {

struct FrameRecord {
    long frame = 0;
    double pts = 0;
    int target = 0;
    TrackResult result;
};

// Columns: frame,pts,target,x,y,w,h,cx,cy,score,confidence,lost,redetected,
// decode_ms,upload_ms,correlate_ms,peak_ms,render_ms,latency_ms (boxes 0-based, top-left corner).
class CsvWriter {
public:
    ~CsvWriter();
    bool open(const std::string& path, std::string* error);
    void write(const FrameRecord& r);
    bool close(std::string* error);
    static const char* header();

private:
    std::FILE* file_ = nullptr;
    std::string path_;
};

// OTB result text: one "x,y,w,h" line per frame, 1-based top-left like the ground truth.
bool write_otb_results(const std::string& path, const std::vector<BoxF>& boxes, std::string* error);

nlohmann::json to_json(const FrameRecord& r);
bool write_json_file(const std::string& path, const nlohmann::json& doc, std::string* error);

}  // namespace corrtrack
