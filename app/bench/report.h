// The bench's report: the header (machine, peaks, timing and metric notes), the text table
// (with the roofline's floors, roofline.h) and CPU comparison on stdout, the CSV, the JSON
// (every timed run) and the PNG plot (or its gnuplot script), and the exit status they add up to. Column layouts and formats are the bench's
// contract with scripts and committed results: change them only on purpose.
// Thread rules: one thread at a time (the main thread, or the watchdog after a hang while the
// main thread is held off by the runner).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "app/bench/machine_info.h"
#include "app/bench/problem_space.h"
#include "app/bench/roofline.h"
#include "app/bench/runner.h"

namespace corrtrack::bench {

struct Report {
    std::vector<std::pair<std::string, std::string>> header;  // key, value
    std::vector<Result> rows;                                 // kernel, size, template, mode order
    std::vector<std::string> ratio_names;                     // cuda_shared, cuda_fft, --ratio-to
    std::map<std::string, const Result*> by_kernel_case;
    GpuInfo gpu;
    Peaks gpu_peaks, cpu_peaks;  // the roofline's: a row is held to its own device's
    int batch = 0;               // --batch N: the batch columns are there when N > 0
    std::string interrupted;     // the signal that stopped the bench ("SIGINT"), or empty

    const Result* find(const std::string& kernel, const KernelCase& c) const {
        const auto it = by_kernel_case.find(kernel + "|" + c.key());
        return it == by_kernel_case.end() ? nullptr : it->second;
    }
    // time_baseline / time_kernel; NaN when either did not run.
    double ratio(const Result& r, const std::string& baseline) const {
        const Result* b = find(baseline, r.c);
        return r.ok() && b && b->ok() ? b->median_ms / r.median_ms : NAN;
    }
    double dp4a_pct(const Result& r) const {
        return r.ok() && r.gpu() && gpu.peak_gmacs > 0 ? 100.0 * r.gmac_per_s() / gpu.peak_gmacs : NAN;
    }
    Floors floors(const Result& r) const { return case_floors(r.c, r.gpu() ? gpu_peaks : cpu_peaks); }
    // Floor / median x 100 for a row that ran; NaN otherwise or where the peak is unknown.
    double mem_floor_pct(const Result& r) const { return r.ok() ? floors(r).mem_pct(r.median_ms) : NAN; }
    double mma_peak_pct(const Result& r) const { return r.ok() ? floors(r).mma_pct(r.median_ms) : NAN; }
};

// The header lines: machine (GPU, driver, runtime, CPU), date, command, timing and metric notes,
// the window rule and, with --batch, what the batch columns mean.
Report make_report(const BenchOptions& o);

// Sorts and completes the rows (cases that never ran, after a hang, appear as skipped, so the
// grid is always complete), prints the table, the CPU comparison and the case counts, writes
// --csv/--json/--plot, and returns the exit status (0, or 1 for a failed case or output).
int finish_report(const BenchOptions& o, const Plan& plan, Report rep, std::vector<Result> results);

}  // namespace corrtrack::bench
