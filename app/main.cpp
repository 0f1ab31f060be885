// corrtrack entry point: gui | track | eval | bench | kernels.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <vector>

#include "app/cli/commands.h"

#if CORRTRACK_HAVE_GUI
namespace corrtrack {
void register_gui_command(CLI::App& root, CommandOutcome& outcome);  // app/cli/gui_command.cpp
}
#endif

namespace {

// `corrtrack INPUT` without a subcommand: an existing path, a URL, an image pattern or a
// camera device (anything else still gets CLI11's "unknown subcommand" message).
bool looks_like_input(const char* arg, CLI::App& root) {
    if (!arg[0] || arg[0] == '-') return false;
    for (const CLI::App* sub : root.get_subcommands([](CLI::App*) { return true; }))
        if (sub->check_name(arg)) return false;
    std::error_code ec;
    return std::filesystem::exists(arg, ec) || std::strstr(arg, "://") || std::strchr(arg, '%') ||
           std::strncmp(arg, "/dev/video", 10) == 0;
}

bool display_present() {
    const char* x11 = std::getenv("DISPLAY");
    const char* wayland = std::getenv("WAYLAND_DISPLAY");
    return (x11 && *x11) || (wayland && *wayland);
}

}  // namespace

extern "C" {
#include <libavutil/log.h>
}

int main(int argc, char** argv) {
    // A reader that goes away (`corrtrack track ... --csv /dev/stdout | head`) is a write
    // error to report (EPIPE, exit 1), not a silent death by SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    // Encoders (x264) and demuxers chatter at INFO level; keep stderr for what matters.
    av_log_set_level(AV_LOG_ERROR);
    CLI::App root{"corrtrack: real-time normalized cross-correlation tracking (CPU and CUDA)"};
    root.require_subcommand(1);
    corrtrack::CommandOutcome outcome;
    corrtrack::register_track_command(root, outcome);
    corrtrack::register_eval_command(root, outcome);
    corrtrack::register_bench_command(root, outcome);
    corrtrack::register_kernels_command(root, outcome);
#if CORRTRACK_HAVE_GUI
    corrtrack::register_gui_command(root, outcome);
#endif
    const bool gui = CORRTRACK_HAVE_GUI && display_present();
    // `corrtrack INPUT ...` runs `gui INPUT ...` when a display is there, else `track INPUT ...`.
    std::vector<const char*> args(argv, argv + argc);
    if (argc >= 2 && looks_like_input(argv[1], root)) args.insert(args.begin() + 1, gui ? "gui" : "track");
    try {
        root.parse(static_cast<int>(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        // --help and --version exit 0; every other parse error is a usage error (exit 2, as
        // the README says), whatever code CLI11 gives that kind of error.
        const int rc = root.exit(e);
        return rc == 0 ? 0 : 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "corrtrack: error: %s\n", e.what());
        return 1;
    }
    return outcome.exit_code;
}
