// CORRTRACK_TRACE_START=1: one line on stderr for each one-time cost a run pays as it starts
// (auto's timing rounds, cuFFT plans, device allocations and their growth, CUDA graph
// capture and instantiation, a context's first launches), with the time since the process
// started and what the cost took, so that a slow first frame can be read off the trace. Off,
// each call is one test of a cached flag.
// Thread rules: any thread; each line is written with one call (lines do not interleave).
#pragma once

#include <chrono>
#include <string>
#include <utility>

namespace corrtrack {

// CORRTRACK_TRACE_START set and not "0", read once.
bool start_trace_enabled();

// "corrtrack start-trace: +1234.5 ms  <what>  <ms> ms  <detail>" on stderr, when enabled.
void start_trace(const char* what, double ms, const std::string& detail = {});

// Times its scope and traces it when it ends (when enabled; else it reads no clock).
class StartTraceScope {
public:
    explicit StartTraceScope(const char* what, std::string detail = {})
        : what_(what), detail_(std::move(detail)), on_(start_trace_enabled()) {
        if (on_) t0_ = std::chrono::steady_clock::now();
    }
    ~StartTraceScope() {
        if (on_)
            start_trace(what_,
                        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count(),
                        detail_);
    }
    StartTraceScope(const StartTraceScope&) = delete;
    StartTraceScope& operator=(const StartTraceScope&) = delete;
    void set_detail(std::string detail) { detail_ = std::move(detail); }

private:
    const char* what_;
    std::string detail_;
    bool on_;
    std::chrono::steady_clock::time_point t0_;
};

}  // namespace corrtrack
