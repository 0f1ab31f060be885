// `corrtrack bench` without --e2e: the module's entry point. Reads the plan from the options
// (problem_space.h), times its cases (runner.h) and reports them (report.h); --e2e is
// e2e_bench.h. The command line is registered in app/cli/bench_command.cpp.
// Thread rules: call from the main thread; see runner.h for the watchdog it starts.
#pragma once

#include "app/bench/options.h"

namespace corrtrack::bench {

// Returns the process exit status: 0, 1 (a case or an output failed), 2 (bad options).
// dry_run: check the options only.
int run_bench(const BenchOptions& o, bool dry_run);

}  // namespace corrtrack::bench
