#include "app/cli/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace corrtrack {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[3];
// The first signal's line, made before the handlers are installed: the handler only writes it.
char g_line[256];
std::size_t g_line_size = 0;

// Async-signal-safe: lock-free atomics, write(2) and _exit(2) only.
void on_signal(int sig) {
    int expected = 0;
    if (!g_signal.compare_exchange_strong(expected, sig)) _exit(128 + sig);
    g_stop.store(true);
    const ssize_t ignored = write(STDERR_FILENO, g_line, g_line_size);
    (void)ignored;
}

static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free,
              "the signal handler needs lock-free atomics");

}  // namespace

InterruptGuard::InterruptGuard(const char* in_flight) {
    const int n =
        std::snprintf(g_line, sizeof g_line,
                      "\ncorrtrack: stopping: %s and writing the outputs (signal again to quit at once)\n", in_flight);
    g_line_size = n < 0 ? 0 : std::min(static_cast<std::size_t>(n), sizeof g_line - 1);
    g_stop.store(false);
    g_signal.store(0);
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;  // libraries' blocking calls carry on; our own reads poll the flag
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &g_previous[i]);
}

InterruptGuard::~InterruptGuard() {
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &g_previous[i], nullptr);
}

const std::atomic<bool>& InterruptGuard::flag() { return g_stop; }
int InterruptGuard::signal_number() { return g_signal.load(); }
int InterruptGuard::exit_code() { return g_signal.load() ? 128 + g_signal.load() : 0; }
const char* InterruptGuard::signal_name() {
    switch (g_signal.load()) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "";
    }
}

}  // namespace corrtrack
