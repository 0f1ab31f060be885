// Per-frame result output, streamed as frames come: CSV rows, one JSON document whose
// "results" array grows row by row, and OTB-style result text (x,y,w,h per line, 1-based like
// OTB ground truth). Each goes through an OutputFile: a temporary file beside the destination,
// renamed into place by close(); every write is checked and the first error is kept.
// Thread rules: one thread owns each writer.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/io/output_file.h"
#include "app/track/types.h"

namespace corrtrack {

struct FrameRecord {
    long frame = 0;  // the frame's index in the source (a lost frame leaves a gap)
    double pts = 0;
    int target = 0;
    TrackResult result;
};

// Columns: frame,pts,target,x,y,w,h,cx,cy,score,confidence,lost,redetected,
// decode_ms,upload_ms,correlate_ms,peak_ms,render_ms,latency_ms (boxes 0-based, top-left corner).
class CsvWriter {
public:
    bool open(const std::string& path, std::string* error);
    bool is_open() const { return out_.is_open(); }
    // False once a write failed (error() says why); later writes do nothing.
    bool write(const FrameRecord& r);
    // Pushes buffered rows to the file: a full disk shows up at this frame, not at the end.
    bool flush();
    // Completes the file (rename into place). False + *error when any write failed.
    bool close(std::string* error);
    const std::string& error() const { return error_; }
    static const char* header();

private:
    OutputFile out_;
    std::string error_;
};

// {"input": ..., <head fields>, "results": [ one object per row ], <tail fields>}: rows are
// written as they come, the tail (counts known only at the end) by close().
class JsonResultsWriter {
public:
    bool open(const std::string& path, const nlohmann::json& head, std::string* error);
    bool is_open() const { return out_.is_open(); }
    bool write(const nlohmann::json& row);
    bool flush();
    bool close(const nlohmann::json& tail, std::string* error);
    const std::string& error() const { return error_; }

private:
    OutputFile out_;
    std::string error_;
    long rows_ = 0;
};

// OTB result text for one target: line k is source frame k. Frames without a result (lost in
// decoding, or before the first) get "NaN,NaN,NaN,NaN", which OTB tools read as "no box".
class OtbWriter {
public:
    bool open(const std::string& path, std::string* error);
    bool is_open() const { return out_.is_open(); }
    bool write(long frame, const BoxF& box);
    // NaN lines up to `frames` lines in all: source frames after the last box that were lost
    // or are missing at the end, so that the file has a line for every frame of the source.
    bool pad_to(long frames);
    bool flush();
    bool close(std::string* error);
    const std::string& error() const { return error_; }

private:
    OutputFile out_;
    std::string error_;
    long next_frame_ = 0;
};

// One "x,y,w,h" line per frame, 1-based top-left like the ground truth (temporary + rename).
bool write_otb_results(const std::string& path, const std::vector<BoxF>& boxes, std::string* error);

nlohmann::json to_json(const FrameRecord& r);
bool write_json_file(const std::string& path, const nlohmann::json& doc, std::string* error);

}  // namespace corrtrack
