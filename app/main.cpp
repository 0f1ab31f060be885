// corrtrack entry point: gui | track | eval | bench | kernels.
#include <cstdio>
#include <exception>

#include "app/cli/commands.h"

extern "C" {
#include <libavutil/log.h>
}

int main(int argc, char** argv) {
    // Encoders (x264) and demuxers chatter at INFO level; keep stderr for what matters.
    av_log_set_level(AV_LOG_ERROR);
    CLI::App root{"corrtrack: real-time normalized cross-correlation tracking (CPU and CUDA)"};
    root.require_subcommand(1);
    corrtrack::CommandOutcome outcome;
    corrtrack::register_track_command(root, outcome);
    corrtrack::register_eval_command(root, outcome);
    corrtrack::register_bench_command(root, outcome);
    corrtrack::register_kernels_command(root, outcome);
    try {
        root.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return root.exit(e);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "corrtrack: error: %s\n", e.what());
        return 1;
    }
    return outcome.exit_code;
}
