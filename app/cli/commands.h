// The CLI's subcommands. Each registers itself on the root CLI11 app; its callback does the
// work and leaves the process exit code in `outcome`.
// Thread rules: called from main() only.
#pragma once

#include <CLI/CLI.hpp>

namespace corrtrack {

struct CommandOutcome {
    int exit_code = 0;
    // Check the arguments only (options, boxes, box files, output paths) and return before any
    // input is opened or output written: the option-parser fuzz target.
    bool dry_run = false;
};

void register_track_command(CLI::App& root, CommandOutcome& outcome);
void register_eval_command(CLI::App& root, CommandOutcome& outcome);
void register_bench_command(CLI::App& root, CommandOutcome& outcome);
void register_kernels_command(CLI::App& root, CommandOutcome& outcome);
void register_cameras_command(CLI::App& root, CommandOutcome& outcome);

// The whole command line: `corrtrack track|eval|bench|kernels|cameras ...`, or `corrtrack INPUT`
// (gui with a display, else track). extra_commands registers what only the executable has (the
// GUI). Returns the process exit code: 0, 1 input/runtime, 2 usage, 3 damaged input, 128+N.
using CommandRegistrar = void (*)(CLI::App& root, CommandOutcome& outcome);
int run_command_line(int argc, const char* const* argv, bool dry_run = false, CommandRegistrar extra = nullptr,
                     const char* bare_input_command = "track");

// Prints "corrtrack: no CUDA GPU found, running on the CPU path" once per process when there
// is no GPU; silent otherwise.
void announce_compute_path();

}  // namespace corrtrack
