// Ctrl-C, kill and a closed terminal during a run. The first SIGINT, SIGTERM or SIGHUP sets a
// flag: the run stops reading, finishes the frame in flight, completes and closes every output
// and exits 128 + the signal (130, 143, 129). A second signal ends the process at once with
// that code (the outputs' temporary files, .NAME.XXXXXX beside them, are left behind).
// Thread rules: install from the main thread; the flag may be read from any thread.
#pragma once

#include <atomic>

namespace corrtrack {

class InterruptGuard {
public:
    // Installs the handlers (and resets the flag). `in_flight` completes the first signal's
    // line "stopping: IN_FLIGHT and writing the outputs" (default: finishing the frame in flight).
    explicit InterruptGuard(const char* in_flight = "finishing the frame in flight");
    ~InterruptGuard();  // restores the previous handlers
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;

    // Set by the first signal; hand it to SourceOptions::stop and SessionPacing::stop.
    static const std::atomic<bool>& flag();
    static int signal_number();        // the first signal, or 0
    static int exit_code();            // 128 + signal_number(), or 0
    static const char* signal_name();  // "SIGINT", ...
};

}  // namespace corrtrack
