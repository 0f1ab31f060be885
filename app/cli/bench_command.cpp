// `corrtrack bench`: the command line only. The bench itself is app/bench/ (bench.h: the kernel
// timings over frame sizes x template sizes x search modes, with --batch; e2e_bench.h: --e2e,
// the whole pipeline); every option here fills app/bench/options.h's BenchOptions or E2eOptions.
// Thread rules: main thread only.
#include <memory>
#include <string>
#include <vector>

#include "app/bench/bench.h"
#include "app/bench/e2e_bench.h"
#include "app/bench/options.h"
#include "app/cli/cli_common.h"
#include "app/cli/commands.h"
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
                    "CPU memory bandwidth in GB/s for the CPU rows' roofline columns (default: none, '-')")
        ->check(finite_range(0, 1e6));
    cmd->add_option("--cpu-peak-macs", o->cpu_peak_tmacs,
                    "CPU multiply-add peak in TMAC/s for the CPU rows' roofline columns (default: none, '-')")
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
        "could not be written, 2 for bad options.");
    // --e2e switches from the kernel sweep to the whole pipeline (e2e_bench.h).
    auto e2e = std::make_shared<E2eOptions>();
    cmd->add_option("--e2e", e2e->clips,
                    "Time the whole pipeline instead, on these video files: decode alone vs decode + track, "
                    "software decode and NVDEC, fps, overhead and latency (median/p95)")
        ->delimiter(',');
    cmd->add_option("--e2e-box", e2e->boxes, "e2e target box x,y,w,h; repeat for more (default: 64x64 in the middle)");
    cmd->add_option("--e2e-kernel", e2e->kernel, "e2e tracker kernel")->capture_default_str();
    cmd->add_option("--e2e-frames", e2e->frames, "e2e frames per pass (-1: whole clip)")
        ->check(frame_count())
        ->capture_default_str();
    add_ranged_option(*cmd, "--e2e-repeats", e2e->repeats, "e2e passes per configuration (median fps)", 1, 1000);
    cmd->callback([o, e2e, &outcome] {
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
            outcome.exit_code = run_e2e_bench(*e2e);
            return;
        }
        outcome.exit_code = bench::run_bench(*o, outcome.dry_run);
    });
}

}  // namespace corrtrack
