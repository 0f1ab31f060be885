// The clock realtime pacing reads and waits on: the steady clock in the app; a test passes a
// fake one (tests/support/fake_clock.h) so that which frames are late, and each frame's
// latency, follow from the timestamps and not from how loaded the machine is.
// Thread rules: now() and sleep_until() may be called from any thread (a fake clock shared by
// several streams, a source stamping decode times on its decode thread).
#pragma once

#include <chrono>

namespace corrtrack {

class PacingClock {
public:
    using time_point = std::chrono::steady_clock::time_point;
    virtual ~PacingClock() = default;
    virtual time_point now() const = 0;
    // Returns at or after t (at once when t has passed).
    virtual void sleep_until(time_point t) = 0;
    // The steady clock and std::this_thread::sleep_until.
    static PacingClock& steady();
};

}  // namespace corrtrack
