// `corrtrack bench`: the command line only. The bench itself is app/bench/ (bench.h: the kernel
// timings over frame sizes x template sizes x search modes, with --batch; e2e_bench.h: --e2e,
// the whole pipeline); every option here fills app/bench/options.h's BenchOptions or E2eOptions.
// Thread rules: main thread only.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "app/bench/bench.h"
#include "app/bench/e2e_bench.h"
#include "app/bench/options.h"
#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
#include "app/cli/interrupt.h"
#include "app/cli/output_paths.h"

namespace corrtrack {

void register_bench_command(CLI::App& root, CommandOutcome& outcome) {
    auto o = std::make_shared<bench::BenchOptions>();
    CLI::App* cmd =
        root.add_subcommand("bench", "Time the correlation kernels over frame sizes, template sizes and search modes");
    cmd->add_option("--kernels", o->kernels,
                    "Comma-separated kernel names (default: every kernel available here except 'auto')");
    cmd->add_option("--sizes", o->sizes, "Frame sizes, WIDTHxHEIGHT, comma-separated")->capture_default_str();
    cmd->add_option("--templates", o->templates, "Template sizes, N (square) or WIDTHxHEIGHT, comma-separated")
        ->capture_default_str();
    cmd->add_option("--modes", o->modes,
                    "full (whole frame) and/or window (search region 3x the template side, centred)")
        ->capture_default_str();
    add_ranged_option(*cmd, "--runs", o->runs, "Timed runs per case (median; 20+ for GPU kernels)", 1, 100000);
    add_ranged_option(*cmd, "--warmup", o->warmup, "Untimed runs before timing", 0, 10000);
    add_ranged_option(*cmd, "--max-seconds", o->max_seconds,
                      "Time budget per case: a case whose single run takes longer (measured, or predicted from "
                      "the kernel's smaller cases) is skipped as too slow; CPU kernels time fewer runs to fit",
                      0.001, 86400.0);
    add_ranged_option(*cmd, "--max-total-seconds", o->max_total_seconds,
                      "Stop starting new cases after this long (0: no limit); the rest are marked skipped, "
                      "outputs are still written. GPU kernels run first",
                      0.0, 1e7);
    add_ranged_option(*cmd, "--hang-seconds", o->hang_seconds,
                      "Give up on a kernel call that has not returned after this long (deadlock, spinning GPU "
                      "kernel): write what was measured, mark the case hung, exit 1 (0: max(60, 30 x --max-seconds))",
                      0.0, 1e7);
    cmd->add_option("--csv", o->csv, "Write the results as CSV ('#' header lines, then one row per case)");
    cmd->add_option("--json", o->json, "Write the results, with every timed run, as JSON");
    cmd->add_option("--plot", o->plot,
                    "Write a PNG: GMAC/s per template at 1920x1080 (else the largest size), one panel per mode "
                    "side by side; needs gnuplot (without it the script is saved next to it as .gp)");
    cmd->add_option("--seed", o->seed, "Seed of the random frames and templates")->capture_default_str();
    cmd->add_option("--peak-gmacs", o->peak_gmacs,
                    "DP4A peak in GMAC/s for the %DP4A column (default: SMs x clock x DP4A/clk/SM x 4)")
        ->check(finite_range(0, 1e9));
    cmd->add_option("--peak-bw", o->peak_bw_gbps,
                    "GPU memory bandwidth in GB/s for the roofline columns (default: memory clock x bus width x 2 "
                    "from the driver)")
        ->check(finite_range(0, 1e6));
    cmd->add_option("--peak-macs", o->peak_tmacs,
                    "GPU dense int8 tensor-core peak in TMAC/s for the roofline columns (default: SMs x clock x "
                    "MAC/clk/SM from a table by compute capability; H200 SXM datasheet: 989)")
        ->check(finite_range(0, 1e6));
    cmd->add_option("--cpu-peak-bw", o->cpu_peak_bw_gbps,
                    "CPU memory bandwidth in GB/s for the CPU rows' roofline columns (default: measured, a "
                    "256 MiB read by every core)")
        ->check(finite_range(0, 1e6));
    cmd->add_option("--cpu-peak-macs", o->cpu_peak_tmacs,
                    "CPU multiply-add peak in TMAC/s for the CPU rows' roofline columns (default: cores x "
                    "clock x int8 MAC/clk of the CPU kernels' ISA)")
        ->check(finite_range(0, 1e6));
    cmd->add_flag("--variants", o->variants,
                  "also time the tuning variants (cuda_dp4a_ilp_c2/c4/c8, cuda_shuffle_grouped_r2/r4/r8)");
    cmd->add_option("--ratio-to", o->ratio_to, "Extra 'x NAME' columns: median(NAME) / median(row) on the same case")
        ->delimiter(',');
    add_ranged_option(*cmd, "--batch", o->batch,
                      "Window cases also time N targets as one batched run (atlas of N search windows, "
                      "templates=N, template_roi_step=window height) against N separate run() calls; adds "
                      "batch_n, batch_ms, per_target_ms, batch_speedup, batch_status columns (0: off)",
                      0, bench::kMaxBatch);
    cmd->add_flag("--quiet", o->quiet, "No per-case progress lines on stderr");
    cmd->footer(
        "Rows: every kernel x size x template x mode. Status: ok, unsupported (the kernel said why), "
        "skipped (too slow for --max-seconds, or --max-total-seconds), unavailable (no GPU) or error.\n"
        "Exit status: 0 when every case ran or was declined/skipped, 1 when a case failed or an output "
        "could not be written, 2 for bad options; 130/143/129 after SIGINT/SIGTERM/SIGHUP (the case in flight "
        "finishes, the rest are skipped, the outputs are written).");
    // --e2e switches from the kernel sweep to the whole pipeline (e2e_bench.h).
    auto e2e = std::make_shared<E2eOptions>();
    cmd->add_option("--e2e", e2e->clips,
                    "Time the whole pipeline instead, on these video files: decode alone vs decode + track, "
                    "software decode and NVDEC, fps, overhead and latency (median/p95)")
        ->delimiter(',');
    cmd->add_option("--e2e-box", e2e->boxes, "e2e target box x,y,w,h; repeat for more (default: 64x64 in the middle)");
    cmd->add_option("--e2e-kernel", e2e->kernel, "e2e tracker kernel")->capture_default_str();
    add_no_cache_option(*cmd);
    cmd->add_option("--e2e-frames", e2e->frames, "e2e frames per pass (-1: whole clip)")
        ->check(frame_count())
        ->capture_default_str();
    add_ranged_option(*cmd, "--e2e-repeats", e2e->repeats, "e2e passes per configuration (median fps)", 1, 1000);
    auto decoders = std::make_shared<std::vector<std::string>>();
    cmd->add_option("--e2e-decode", *decoders,
                    "e2e decoders, comma-separated sw,nvdec,auto (default all three): the decode-vs-track table and "
                    "--targets time sw and nvdec of them, --streams all")
        ->delimiter(',');
    auto target_counts = std::make_shared<std::vector<int>>();
    cmd->add_option("--targets", *target_counts,
                    "e2e: also time N targets per frame, for each N of a comma-separated list: boxes of --target-size "
                    "on a grid, each on the most textured spot of its cell; tracking-alone fps, correlate median, "
                    "latency median / p95")
        ->delimiter(',')
        ->check(CLI::Range(1, kMaxE2eTargets));
    auto target_size = std::make_shared<std::string>("40x40");
    cmd->add_option("--target-size", *target_size, "e2e --targets box size, WIDTHxHEIGHT (or N for N x N)")
        ->capture_default_str();
    auto layout = std::make_shared<std::string>("grid");
    cmd->add_option("--layout", *layout,
                    "e2e --targets layout: grid (one box a cell, on its most textured spot) or crowded (32 a row, "
                    "1.45 box widths apart across, 0.8 box heights down: 40x40 boxes 58 px across and 32 down, "
                    "each overlapping the next row by 8 px)")
        ->check(CLI::IsMember({"grid", "crowded"}))
        ->capture_default_str();
    cmd->add_flag("--targets-only", e2e->targets_only,
                  "e2e: skip the decode-vs-track table, so that the first --targets pass is the process's first "
                  "(its first 100 frames then show a cold start)");
    cmd->add_option("--streams", e2e->streams,
                    "e2e: also track N copies of each clip in one process, for each N of a comma-separated list "
                    "(as `corrtrack track --input CLIP ...` runs them), against N decode-only sessions at once on the "
                    "same decoders: aggregate fps, drops, latency p95")
        ->delimiter(',')
        ->check(CLI::Range(1, kMaxE2eStreams));
    cmd->add_flag("--realtime", e2e->realtime,
                  "e2e --streams and --targets: pace each stream to the clip's timestamps (frames that fall behind "
                  "are dropped and counted), as live cameras would come; a frame's latency is then its own, not "
                  "the wait behind frames decoded ahead of it");
    add_ranged_option(*cmd, "--nvdec-streams", e2e->nvdec_streams,
                      "e2e --streams with auto: at most this many streams on NVDEC at once, the rest on the CPU "
                      "(as `corrtrack track --nvdec-streams`)",
                      1, kMaxNvdecStreams);
    add_ranged_option(*cmd, "--nvdec-rate", e2e->nvdec_rate,
                      "e2e --streams --realtime with auto: paced streams on NVDEC up to this many Mpixel/s, the "
                      "rest on the CPU (as `corrtrack track --nvdec-rate`)",
                      1.0, kMaxNvdecMpixPerS);
    cmd->callback([o, e2e, decoders, target_counts, target_size, layout, &outcome] {
        e2e->targets = *target_counts;
        parse_target_layout(*layout, &e2e->layout);  // checked by IsMember
        if (e2e->clips.empty() && (!e2e->targets.empty() || !e2e->streams.empty() || e2e->realtime)) {
            std::fprintf(stderr,
                         "corrtrack bench: error: --targets, --streams and --realtime time the pipeline: give "
                         "--e2e CLIP\n");
            outcome.exit_code = kExitUsage;
            return;
        }
        if (!bench::parse_size(*target_size, true, &e2e->target_size) ||
            e2e->target_size.width > bench::kMaxFrameSide || e2e->target_size.height > bench::kMaxFrameSide) {
            std::fprintf(stderr, "corrtrack bench: error: --target-size '%s' is not WIDTHxHEIGHT (1 to %d)\n",
                         target_size->c_str(), bench::kMaxFrameSide);
            outcome.exit_code = kExitUsage;
            return;
        }
        if (!decoders->empty()) {
            e2e->decoders.clear();
            for (const std::string& name : *decoders) {
                DecodeMode mode;
                if (!parse_decode_mode(name, &mode)) {
                    std::fprintf(stderr, "corrtrack bench: error: --e2e-decode '%s': must be sw, nvdec or auto\n",
                                 name.c_str());
                    outcome.exit_code = kExitUsage;
                    return;
                }
                if (std::find(e2e->decoders.begin(), e2e->decoders.end(), mode) == e2e->decoders.end())
                    e2e->decoders.push_back(mode);
            }
        }
        std::vector<NamedPath> inputs, outputs{{o->csv, "--csv"}, {o->json, "--json"}, {o->plot, "--plot"}};
        for (const std::string& clip : e2e->clips) inputs.push_back({clip, "the --e2e clip"});
        if (std::string error; !check_output_paths(inputs, outputs, &error)) {
            std::fprintf(stderr, "corrtrack bench: error: %s\n", error.c_str());
            outcome.exit_code = kExitUsage;
            return;
        }
        if (!e2e->clips.empty()) {
            if (outcome.dry_run) return;
            e2e->json = o->json;
            e2e->quiet = o->quiet;
            // The first signal stops the pass in flight; the JSON then holds the passes done.
            InterruptGuard interrupt("abandoning the pass in flight");
            outcome.exit_code = run_e2e_bench(*e2e);
            return;
        }
        // The first signal lets the case in flight finish, skips the rest and writes every
        // output with them (the run's exit code is then 128 + the signal).
        InterruptGuard interrupt("finishing the case in flight");
        const int code = bench::run_bench(*o, outcome.dry_run);
        if (InterruptGuard::signal_number() != 0) {
            std::fprintf(stderr, "corrtrack bench: stopped by %s; the outputs hold the cases done\n",
                         InterruptGuard::signal_name());
            outcome.exit_code = InterruptGuard::exit_code();
            return;
        }
        outcome.exit_code = code;
    });
}

}  // namespace corrtrack
