#include "corrtrack/cpu_info.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "cpu/int8_numerator.h"
#include "corrtrack/work_pool.h"

namespace corrtrack {
namespace {

// The value of the first "key : value" line of /proc/cpuinfo, or "".
std::string cpuinfo(const std::string& key) {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
        if (line.rfind(key, 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos) return line.substr(std::min(line.size(), colon + 2));
        }
    return "";
}

}  // namespace

std::string cpu_model_name() { return cpuinfo("model name"); }

std::string cpu_kernel_flags() {
    std::istringstream flags(cpuinfo("flags"));
    std::string out;
    for (std::string f; flags >> f;)
        if (f.find("avx") != std::string::npos || f.find("amx") != std::string::npos || f == "fma" ||
            f.find("vnni") != std::string::npos)
            out += (out.empty() ? "" : " ") + f;
    return out;
}

CpuInt8Peak cpu_int8_peak() {
    CpuInt8Peak p;
    const CpuIsa isa = cpu_isa_best();
    p.isa = cpu_isa_name(isa);
    p.cores = work_pool_workers() + 1;
    const std::string mhz = cpuinfo("cpu MHz");
    p.ghz = mhz.empty() ? 0 : std::atof(mhz.c_str()) / 1000;
    // One 512-bit vpdpbusd a cycle (64 MACs; Zen 4 issues one, Intel server cores with two FMA
    // units two: this is the lower figure); two 256-bit vpmaddwd a cycle (2 x 16 MACs).
    p.macs_per_cycle = isa == CpuIsa::kVnni ? 64 : isa == CpuIsa::kAvx2 ? 32 : 0;
    p.tmacs = p.cores * p.ghz * p.macs_per_cycle / 1000;
    char buf[256];
    if (p.tmacs > 0)
        std::snprintf(buf, sizeof buf, "%.3g TMAC/s = %d cores x %.2f GHz (/proc/cpuinfo) x %d int8 MAC/clk (%s)",
                      p.tmacs, p.cores, p.ghz, p.macs_per_cycle, p.isa.c_str());
    else
        std::snprintf(buf, sizeof buf, "unknown for ISA %s (--cpu-peak-macs)", p.isa.c_str());
    p.note = buf;
    return p;
}

double cpu_measured_read_gbps() {
    static const double gbps = [] {
        constexpr std::size_t kBytes = 256u << 20, kChunk = 1u << 20;
        std::vector<std::uint64_t> buf(kBytes / 8, 1);
        const int chunks = static_cast<int>(kBytes / kChunk);
        double best = 0;
        for (int pass = 0; pass < 3; ++pass) {
            std::atomic<std::uint64_t> total{0};
            const auto t0 = std::chrono::steady_clock::now();
            parallel_for(chunks, [&](int c) {
                const std::uint64_t* p = buf.data() + c * (kChunk / 8);
                std::uint64_t s = 0;
                for (std::size_t i = 0; i < kChunk / 8; ++i) s += p[i];
                total.fetch_add(s, std::memory_order_relaxed);
            });
            const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (total.load() == kBytes / 8) best = std::max(best, kBytes / s / 1e9);
        }
        return best;
    }();
    return gbps;
}

}  // namespace corrtrack
