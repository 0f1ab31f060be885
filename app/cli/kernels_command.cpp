// `corrtrack kernels`: the registry and what runs on this machine.
#include <cstdio>
#include <string>

#include "app/cli/commands.h"
#include "corrtrack/correlator.h"
#include "corrtrack/cpu_info.h"

namespace corrtrack {

void announce_compute_path() {
    static bool said = false;
    if (said) return;
    said = true;
    if (!cuda_available()) std::fprintf(stderr, "corrtrack: no CUDA GPU found, running on the CPU path\n");
}

void register_kernels_command(CLI::App& root, CommandOutcome& outcome) {
    CLI::App* cmd = root.add_subcommand("kernels", "list the correlation kernels and which run here");
    cmd->callback([&outcome] {
        if (outcome.dry_run) return;
        const std::string gpu = cuda_device_description();
        std::printf("GPU: %s\n", gpu.empty() ? "none (CUDA kernels unavailable)" : gpu.c_str());
        // The CPU kernels dispatch on these flags; CORRTRACK_CPU_ISA=avx2|scalar caps them.
        std::printf("CPU: %s; int8 kernels run %s (flags: %s)\n\n", cpu_model_name().c_str(),
                    cpu_int8_peak().isa.c_str(), cpu_kernel_flags().c_str());
        std::printf("%-24s %-6s %-10s %s\n", "kernel", "device", "available", "what it is");
        for (const KernelEntry& e : kernel_registry()) {
            const std::string why = unavailable_reason(e);
            std::printf("%-24s %-6s %-10s %s\n", e.name, e.device == Device::kCuda ? "cuda" : "cpu",
                        why.empty() ? "yes" : "no", e.summary);
            // Under the summary, so that a user knows what would make the kernel run.
            if (!why.empty()) std::printf("%43snot here: %s\n", "", why.c_str());
        }
        outcome.exit_code = 0;
    });
}

}  // namespace corrtrack
