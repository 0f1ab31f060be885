#include "app/bench/bench.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "app/bench/problem_space.h"
#include "app/bench/report.h"
#include "app/bench/runner.h"
#include "app/cli/cli_common.h"  // kExitUsage, kExitInput

namespace corrtrack::bench {

int run_bench(const BenchOptions& o, bool dry_run) {
    Plan plan;
    std::string error;
    if (!make_plan(o, &plan, &error)) {
        std::fprintf(stderr, "corrtrack bench: error: %s\n", error.c_str());
        return kExitUsage;
    }
    if (dry_run) return 0;
    const bool any_gpu_kernel = std::any_of(plan.kernels.begin(), plan.kernels.end(),
                                            [](const KernelEntry* k) { return k->device == Device::kCuda; });
    if (any_gpu_kernel && o.runs < kMinGpuRuns)
        std::fprintf(
            stderr,
            "corrtrack bench: warning: --runs %d is below %d; GPU medians will be noisy (fine for a quick check)\n",
            o.runs, kMinGpuRuns);
    for (const KernelEntry* k : plan.kernels)
        if (!k->available())
            std::fprintf(stderr, "corrtrack bench: warning: %s cannot run here (%s); its rows say unavailable\n",
                         k->name, k->device == Device::kCuda ? "no usable CUDA GPU" : "not available");

    const Report rep = make_report(o);
    std::vector<Result> results = run_cases(o, plan, [&](std::vector<Result> done) {
        const int code = finish_report(o, plan, rep, std::move(done));
        std::fflush(nullptr);
        std::_Exit(code == 0 ? kExitInput : code);
    });
    return finish_report(o, plan, rep, std::move(results));
}

}  // namespace corrtrack::bench
