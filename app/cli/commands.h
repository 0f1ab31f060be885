// The CLI's subcommands. Each registers itself on the root CLI11 app; its callback does the
// work and leaves the process exit code in `outcome`.
// Thread rules: called from main() only.
#pragma once

#include <CLI/CLI.hpp>

namespace corrtrack {

struct CommandOutcome {
    int exit_code = 0;
};

void register_track_command(CLI::App& root, CommandOutcome& outcome);
void register_eval_command(CLI::App& root, CommandOutcome& outcome);
void register_bench_command(CLI::App& root, CommandOutcome& outcome);
void register_kernels_command(CLI::App& root, CommandOutcome& outcome);

// Prints "corrtrack: no CUDA GPU found, running on the CPU path" once per process when there
// is no GPU; silent otherwise.
void announce_compute_path();

}  // namespace corrtrack
