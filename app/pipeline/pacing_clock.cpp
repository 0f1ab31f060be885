#include "app/pipeline/pacing_clock.h"

#include <thread>

namespace corrtrack {
namespace {

class SteadyClock : public PacingClock {
public:
    time_point now() const override { return std::chrono::steady_clock::now(); }
    void sleep_until(time_point t) override { std::this_thread::sleep_until(t); }
};

}  // namespace

PacingClock& PacingClock::steady() {
    static SteadyClock clock;
    return clock;
}

}  // namespace corrtrack
