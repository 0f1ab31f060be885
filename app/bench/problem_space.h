// The bench's problem space, after CUTLASS's profiler: the kernels to time and the sizes x
// templates x modes grid read from the options (defaults: the timed cases of cases.h), and the
// cases it spans. --batch adds a batched form of every window case (see runner.h).
// Thread rules: plain values and pure functions.
#pragma once

#include <string>
#include <vector>

#include "app/bench/cases.h"
#include "app/bench/options.h"

namespace corrtrack::bench {

struct Plan {
    std::vector<const KernelEntry*> kernels;  // registry order
    std::vector<Size> sizes, templates;       // ascending pixel count
    std::vector<Mode> modes;                  // kFull and/or kWindow, as given
    std::vector<std::string> ratio_to;        // extra "x NAME" columns

    // Every case of the grid, size-major (size, template, mode), batch 1.
    std::vector<KernelCase> cases() const;
    std::size_t case_count() const { return sizes.size() * templates.size() * modes.size(); }
};

// Reads and checks the options; false with *error (a usage error) when they are wrong.
bool make_plan(const BenchOptions& o, Plan* plan, std::string* error);

}  // namespace corrtrack::bench
