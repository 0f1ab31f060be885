// Timing the cases of a plan: one case at a time on random data (data.h), GPU kernels on the
// compute stream of a GPU context of the bench's own (app/gpu) timed with CUDA events (GpuTimer),
// CPU kernels with steady_clock, under a per-case budget, a whole-bench budget and a watchdog
// for calls that never return; with --batch, window cases also time N targets batched against
// N separate calls. The results are rows for report.h.
// Thread rules: run_cases runs on the calling thread, plus a watchdog thread it starts and joins;
// the watchdog calls on_hang (on its own thread) only when a call hangs, and on_hang must end
// the process. One CUDA stream and two timing events while GPU kernels run; that stream is
// synchronized after every timed run.
#pragma once

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "app/bench/cases.h"
#include "app/bench/options.h"
#include "app/bench/problem_space.h"

namespace corrtrack::bench {

enum class Status { kOk, kUnsupported, kSkipped, kUnavailable, kError };

// "ok", or the status and its reason; unsupported: how a kUnsupported case is named (a batch
// that the kernel cannot run is "n/a", a case it cannot run "unsupported").
std::string status_text(Status status, const std::string& note, const char* unsupported);

// --batch: N targets of a window case as one batched run (an atlas of N search windows,
// templates = N, template_roi_step = window height: KernelCase::batched(N)) against N separate
// run() calls, one correlator per target, on the same windows and templates.
struct BatchResult {
    int n = 0;  // 0: not attempted (--batch off, full mode, or the case itself did not run)
    Status status = Status::kOk;
    std::string note;                               // the reason for any status but ok
    std::vector<double> batch_runs, separate_runs;  // timed runs (separate: all N calls)
    double batch_ms = 0, separate_ms = 0;           // medians

    bool attempted() const { return n > 0; }
    bool ok() const { return attempted() && status == Status::kOk; }
    double speedup() const { return ok() ? separate_ms / batch_ms : NAN; }
    std::string status_text() const { return attempted() ? bench::status_text(status, note, "n/a") : std::string(); }
};

struct Result {
    const KernelEntry* kernel = nullptr;
    KernelCase c;
    Status status = Status::kOk;
    std::string note;        // the reason for any status but ok
    bool too_slow = false;   // skipped for the time budget (larger cases of it are skipped too)
    std::vector<double> ms;  // timed runs
    double median_ms = 0, min_ms = 0, p90_ms = 0;
    BatchResult batch;

    bool ok() const { return status == Status::kOk; }
    bool gpu() const { return kernel->device == Device::kCuda; }
    std::string status_text() const { return bench::status_text(status, note, "unsupported"); }
    double mpos_per_s() const { return c.positions() / (median_ms * 1e-3) / 1e6; }
    double gmac_per_s() const { return c.macs() / (median_ms * 1e-3) / 1e9; }
};

// Runs every case of the plan (GPU kernels first, then by size, kernel, template, mode) and
// returns one row per case run, in the order run. When a call has not returned after
// --hang-seconds, the watchdog hands the finished rows plus the hung one to on_hang, which
// writes the outputs and ends the process (it must not return).
using HangHandler = std::function<void(std::vector<Result>)>;
std::vector<Result> run_cases(const BenchOptions& o, const Plan& plan, HangHandler on_hang);

}  // namespace corrtrack::bench
