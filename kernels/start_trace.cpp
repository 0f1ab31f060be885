#include "corrtrack/start_trace.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace corrtrack {
namespace {

// The process's start, near enough: static initialisation of the library.
const std::chrono::steady_clock::time_point kProcessStart = std::chrono::steady_clock::now();

}  // namespace

bool start_trace_enabled() {
    static const bool on = [] {
        const char* v = std::getenv("CORRTRACK_TRACE_START");
        return v && *v && std::string(v) != "0";
    }();
    return on;
}

void start_trace(const char* what, double ms, const std::string& detail) {
    if (!start_trace_enabled()) return;
    const double since =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - kProcessStart).count();
    std::fprintf(stderr, "corrtrack start-trace: +%9.1f ms  %-28s %9.3f ms  %s\n", since, what, ms, detail.c_str());
}

}  // namespace corrtrack
