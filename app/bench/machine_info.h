// The machine a bench runs on, for the report header: the GPU (SMs, clocks, memory bus, DP4A
// peak), the driver and CUDA runtime, the CPU, the date and the exact command line.
// Thread rules: call from one thread; the functions read the CUDA runtime, /proc and the clock.
#pragma once

#include <string>

namespace corrtrack::bench {

struct GpuInfo {
    bool present = false;
    std::string description, name;
    int sms = 0, major = 0, minor = 0;
    double clock_mhz = 0;
    std::string clock_source;
    int dp4a_per_clock = 0;  // DP4A instructions per clock per SM
    double peak_gmacs = 0;   // 0: unknown
    std::string peak_note;
    // Memory interface for the roofline's bandwidth (roofline.h); 0: not reported.
    double mem_clock_khz = 0;  // cudaDevAttrMemoryClockRate
    int mem_bus_bits = 0;      // cudaDevAttrGlobalMemoryBusWidth
};

// The current CUDA device, if any; peak_override > 0 (--peak-gmacs) replaces the computed peak.
GpuInfo query_gpu(double peak_override);
std::string cuda_version_text(int v);  // 13000 -> "13.0"; 0 -> "none"
std::string cuda_runtime_text();       // the runtime's version, as cuda_version_text
std::string driver_text();             // "580.159.04 (CUDA driver API 13.0)", or "none"
std::string cpu_text();                // model name and hardware threads
std::string utc_now_iso();
// The exact argv of this process, shell-quoted where needed.
std::string command_line();

}  // namespace corrtrack::bench
