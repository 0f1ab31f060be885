// corrtrack entry point: gui | track | eval | bench | kernels | cameras (app/cli/command_line.cpp;
// the gui command, in main/gui_command.cpp, only when the GUI is built).
#include <csignal>
#include <cstdlib>

#include "app/cli/commands.h"

extern "C" {
#include <libavutil/log.h>
}

#if CORRTRACK_HAVE_GUI
#include "main/gui_command.h"
#endif

namespace {

bool display_present() {
    const char* x11 = std::getenv("DISPLAY");
    const char* wayland = std::getenv("WAYLAND_DISPLAY");
    return (x11 && *x11) || (wayland && *wayland);
}

}  // namespace

int main(int argc, char** argv) {
    // Encoders (x264) and demuxers chatter at INFO level; keep stderr for what matters.
    av_log_set_level(AV_LOG_ERROR);
    // A reader that goes away (`corrtrack track ... --csv /dev/stdout | head`) is a write
    // error to report (EPIPE, exit 1), not a silent death by SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
#if CORRTRACK_HAVE_GUI
    // `corrtrack INPUT ...` runs `gui INPUT ...` when a display is there, else `track INPUT ...`.
    return corrtrack::run_command_line(argc, argv, false, &corrtrack::register_gui_command,
                                       display_present() ? "gui" : "track");
#else
    (void)display_present;
    return corrtrack::run_command_line(argc, argv);
#endif
}
