#include "app/bench/machine_info.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <thread>
#include <utility>

#include "app/bench/options.h"
#include "corrtrack/correlator.h"
#include "corrtrack/cpu_info.h"

namespace corrtrack::bench {
namespace {

// Boost clocks (MHz) for GPUs whose driver may not report cudaDevAttrClockRate.
double known_boost_clock_mhz(const std::string& name) {
    static const std::pair<const char*, double> table[] = {
        {"H200", 1980}, {"H100 PCIe", 1755}, {"H100", 1980}, {"H800", 1980}, {"A100", 1410},
        {"A800", 1410}, {"L40S", 2520},      {"L40", 2490},  {"L4", 2040},   {"RTX 4090", 2520},
        {"A10", 1695},  {"T4", 1590},        {"V100", 1530},
    };
    for (const auto& [key, mhz] : table)
        if (name.find(key) != std::string::npos) return mhz;
    return 0;
}

// DP4A issue rate per SM: Volta and later run 64 per clock (one per INT32 lane); Pascal
// sm_61/62 runs 128; earlier GPUs have no DP4A.
int dp4a_per_clock_per_sm(int major, int minor) {
    if (major >= 7) return 64;
    if (major == 6 && minor >= 1) return 128;
    return 0;
}

std::string first_line_matching(const char* path, const char* prefix) {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);)
        if (line.rfind(prefix, 0) == 0) return line;
    return {};
}

}  // namespace

GpuInfo query_gpu(double peak_override) {
    GpuInfo g;
    if (peak_override > 0) {
        g.peak_gmacs = peak_override;
        g.peak_note = "DP4A peak " + std::to_string(static_cast<long long>(peak_override)) + " GMAC/s (--peak-gmacs)";
    }
    if (!cuda_available()) return g;
    int dev = 0;
    cudaDeviceProp prop{};
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
        cudaGetLastError();
        return g;
    }
    g.present = true;
    g.description = cuda_device_description();
    g.name = prop.name;
    g.sms = prop.multiProcessorCount;
    g.major = prop.major;
    g.minor = prop.minor;
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) == cudaSuccess && khz > 0) {
        g.clock_mhz = khz / 1000.0;
        g.clock_source = "cudaDevAttrClockRate";
    } else {
        cudaGetLastError();
        g.clock_mhz = known_boost_clock_mhz(g.name);
        g.clock_source = "corrtrack's boost-clock table";
    }
    int mem_khz = 0, bus_bits = 0;
    if (cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev) == cudaSuccess) {
        g.mem_clock_khz = mem_khz;
        g.mem_bus_bits = bus_bits;
    } else {
        cudaGetLastError();
    }
    g.dp4a_per_clock = dp4a_per_clock_per_sm(g.major, g.minor);
    if (peak_override > 0) return g;
    char buf[320];
    if (g.clock_mhz > 0 && g.dp4a_per_clock > 0) {
        g.peak_gmacs = g.sms * g.clock_mhz * 1e-3 * g.dp4a_per_clock * 4;
        std::snprintf(buf, sizeof buf, "DP4A peak = %d SMs x %.0f MHz (%s) x %d DP4A/clk/SM x 4 MAC = %.0f GMAC/s",
                      g.sms, g.clock_mhz, g.clock_source.c_str(), g.dp4a_per_clock, g.peak_gmacs);
    } else {
        std::snprintf(buf, sizeof buf, "DP4A peak unknown for %s (sm_%d%d); give --peak-gmacs", g.name.c_str(), g.major,
                      g.minor);
    }
    g.peak_note = buf;
    return g;
}

std::string cuda_version_text(int v) {
    return v > 0 ? std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10) : "none";
}

std::string cuda_runtime_text() {
    int runtime = 0;
    if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) cudaGetLastError();
    return cuda_version_text(runtime);
}

std::string driver_text() {
    int api = 0;
    if (cudaDriverGetVersion(&api) != cudaSuccess) cudaGetLastError();
    std::string kernel_module;
    std::smatch m;
    const std::string line = first_line_matching("/proc/driver/nvidia/version", "NVRM version:");
    if (std::regex_search(line, m, std::regex(R"(\b(\d+\.\d+(\.\d+)?)\b)"))) kernel_module = m[1];
    if (kernel_module.empty() && api == 0) return "none";
    return (kernel_module.empty() ? "unknown" : kernel_module) + " (CUDA driver API " + cuda_version_text(api) + ")";
}

std::string cpu_text() {
    std::string line = first_line_matching("/proc/cpuinfo", "model name");
    const auto colon = line.find(':');
    std::string model = colon == std::string::npos ? "unknown CPU" : trim(line.substr(colon + 1));
    // The flags the CPU kernels dispatch on, and the int8 ISA they run (CORRTRACK_CPU_ISA caps it).
    return model + " (" + std::to_string(std::thread::hardware_concurrency()) +
           " hardware threads; flags: " + cpu_kernel_flags() + "; CPU int8 kernels: " + cpu_int8_peak().isa + ")";
}

std::string utc_now_iso() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string command_line() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (raw.empty()) return "corrtrack bench (command line unavailable)";
    std::string out;
    std::stringstream args(raw);
    for (std::string a; std::getline(args, a, '\0');) {
        const bool plain =
            !a.empty() &&
            a.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./,:=+%@") ==
                std::string::npos;
        std::string q = a;
        if (!plain) {
            q = "'";
            for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
            q += "'";
        }
        out += (out.empty() ? "" : " ") + q;
    }
    return out;
}

}  // namespace corrtrack::bench
