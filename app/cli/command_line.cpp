// The command line shared by the executable and the option-parser fuzz target.
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <new>
#include <vector>

#include "app/cli/commands.h"
#include "app/cli/version.h"

namespace corrtrack {
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

}  // namespace

int run_command_line(int argc, const char* const* argv, bool dry_run, CommandRegistrar extra,
                     const char* bare_input_command) {
    CLI::App root{"corrtrack: real-time normalized cross-correlation tracking (CPU and CUDA)"};
    root.require_subcommand(1);
    // CLI11 prints the text and a newline, then parse() throws CallForVersion (exit 0).
    root.set_version_flag(
        "--version",
        [] {
            std::string t = version_text();
            t.pop_back();
            return t;
        },
        "Print the version, git revision, CUDA runtime and the kernels usable here, then exit");
    CommandOutcome outcome;
    outcome.dry_run = dry_run;
    register_track_command(root, outcome);
    register_eval_command(root, outcome);
    register_bench_command(root, outcome);
    register_kernels_command(root, outcome);
    register_cameras_command(root, outcome);
    if (extra) extra(root, outcome);
    std::vector<const char*> args(argv, argv + argc);
    if (argc >= 2 && looks_like_input(argv[1], root)) args.insert(args.begin() + 1, bare_input_command);
    try {
        root.parse(static_cast<int>(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        // --help and --version exit 0; every other parse error is a usage error (exit 2, as
        // docs/usage.md says), whatever code CLI11 gives that kind of error.
        const int rc = root.exit(e);
        return rc == 0 ? 0 : 2;
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "corrtrack: error: out of memory\n");
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "corrtrack: error: %s\n", e.what());
        return 1;
    }
    return outcome.exit_code;
}

}  // namespace corrtrack
