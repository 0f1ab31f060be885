// What every piece of the GUI reports to: the UI event log (--log: one JSON object a line,
// flushed at once, so scripts and the tests can follow the GUI while it runs) and the status
// bar's message (errors also go to stderr).
// Thread rules: main thread only.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "app/track/types.h"

namespace corrtrack {

class EventLog {
public:
    EventLog() = default;
    ~EventLog() { close(); }
    EventLog(const EventLog&) = delete;
    EventLog& operator=(const EventLog&) = delete;

    bool open(const std::string& path);  // false: cannot write it
    void close();
    bool enabled() const { return file_ != nullptr; }
    // Adds "t" (seconds since the log was made) and writes the event; nothing without a log.
    void log(nlohmann::json event);

private:
    std::FILE* file_ = nullptr;
    std::chrono::steady_clock::time_point t_start_ = std::chrono::steady_clock::now();
};

// The status bar's message: shown for a few seconds (errors longer).
struct StatusLine {
    std::string text;
    bool error = false;
    double time = -1;  // glfwGetTime() when set
    void set(const std::string& message, bool is_error);
};

// A box as the log writes it: [x, y, w, h] rounded to 1/1000 px.
nlohmann::json box_json(const BoxF& b);

}  // namespace corrtrack
