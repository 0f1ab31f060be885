// A PacingClock for tests: time moves only when the test advances it, or, when paced, when
// something sleeps until a later time (the sleep then returns at once at exactly that time).
// Tracking therefore costs no time unless the test says how much, and realtime pacing's drops
// and latencies are exact. It starts at the steady clock's now(), so that times stamped by a
// real decoder compare sensibly with it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "app/pipeline/pacing_clock.h"

namespace corrtrack::test {

class FakeClock : public PacingClock {
public:
    // paced = false: sleeping does not move the clock either, so no frame is ever late (a
    // clock shared by several streams, each of which would otherwise make the others late).
    // Latencies read on it then mean nothing: a real decoder stamps its frames on the steady
    // clock.
    explicit FakeClock(bool paced = true)
        : paced_(paced), start_ns_(std::chrono::steady_clock::now().time_since_epoch().count()), ns_(start_ns_) {}

    time_point now() const override { return time_point(std::chrono::steady_clock::duration(ns_.load())); }
    void sleep_until(time_point t) override {
        if (!paced_) return;
        const std::int64_t target = t.time_since_epoch().count();
        std::int64_t cur = ns_.load();
        while (cur < target && !ns_.compare_exchange_weak(cur, target)) {}
    }
    // Moves the clock on: the time a step of the test takes (tracking a frame, say).
    void advance(std::chrono::duration<double, std::milli> d) {
        ns_ += std::chrono::duration_cast<std::chrono::steady_clock::duration>(d).count();
    }
    // Milliseconds since the clock was made.
    double elapsed_ms() const {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::duration(ns_.load() - start_ns_))
            .count();
    }

private:
    const bool paced_;
    const std::int64_t start_ns_;
    std::atomic<std::int64_t> ns_;
};

}  // namespace corrtrack::test
