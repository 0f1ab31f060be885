#include "app/bench/roofline.h"

#include "corrtrack/cpu_info.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace corrtrack::bench {
namespace {

// Datasheet bandwidths (GB/s) for when the driver reports no memory clock or bus width.
double known_bandwidth_gbps(const std::string& name) {
    static const std::pair<const char*, double> table[] = {
        {"H200", 4800}, {"H100 PCIe", 2000}, {"H100", 3350}, {"L40S", 864}, {"L4", 300}, {"T4", 320},
    };
    for (const auto& [key, gbps] : table)
        if (name.find(key) != std::string::npos) return gbps;
    return 0;
}

std::string format(const char* f, double a, double b = 0, double c = 0, double d = 0) {
    char buf[256];
    std::snprintf(buf, sizeof buf, f, a, b, c, d);
    return buf;
}

}  // namespace

// Dense int8 rates per SM per clock, each checked against a datasheet (ops = 2 MACs):
//   sm_75 T4:    40 SMs x 1590 MHz x 1024 x 2 = 130 TOPS (datasheet 130)
//   sm_80 A100: 108 SMs x 1410 MHz x 2048 x 2 = 624 TOPS (datasheet 624)
//   sm_86 A10:   72 SMs x 1695 MHz x 1024 x 2 = 250 TOPS (datasheet 250)
//   sm_89 L40S: 142 SMs x 2520 MHz x 1024 x 2 = 733 TOPS (datasheet 1466 sparse = 733 dense)
//   sm_90 H100/H200 SXM: 132 SMs x 1830 MHz x 4096 x 2 = 1979 TOPS (datasheet 1979 dense,
//         3958 sparse; H200 SXM the same), i.e. 989e12 MAC/s at 1830 MHz.
// Volta (sm_70) has no int8 MMA; others (sm_87, Blackwell) are not in the table.
int int8_mma_macs_per_clock_per_sm(int major, int minor) {
    if (major == 7 && minor == 5) return 1024;
    if (major == 8 && minor == 0) return 2048;
    if (major == 8 && (minor == 6 || minor == 9)) return 1024;
    if (major == 9 && minor == 0) return 4096;
    return 0;
}

double dram_bandwidth_gbps(double mem_clock_khz, int bus_bits) {
    return mem_clock_khz * 1e3 * 2 * (bus_bits / 8.0) / 1e9;
}

Peaks gpu_peaks(const GpuInfo& g, double bw_override_gbps, double macs_override_tmacs) {
    Peaks p;
    if (bw_override_gbps > 0) {
        p.mem_gbps = bw_override_gbps;
        p.mem_note = format("%.0f GB/s (--peak-bw)", bw_override_gbps);
    } else if (g.present && g.mem_clock_khz > 0 && g.mem_bus_bits > 0) {
        p.mem_gbps = dram_bandwidth_gbps(g.mem_clock_khz, g.mem_bus_bits);
        p.mem_note = format("%.0f GB/s = memory clock %.0f MHz x %.0f-bit bus / 8 x 2 (cudaDeviceProp)", p.mem_gbps,
                            g.mem_clock_khz / 1e3, g.mem_bus_bits);
    } else if (g.present && (p.mem_gbps = known_bandwidth_gbps(g.name)) > 0) {
        p.mem_note = format("%.0f GB/s (datasheet, corrtrack's table: the driver reports no memory clock)", p.mem_gbps);
    } else if (g.present) {
        p.mem_note = "unknown for " + g.name + "; give --peak-bw";
    }
    const int per_sm = int8_mma_macs_per_clock_per_sm(g.major, g.minor);
    if (macs_override_tmacs > 0) {
        p.mma_tmacs = macs_override_tmacs;
        p.mma_note = format("%.1f TMAC/s (--peak-macs)", macs_override_tmacs);
    } else if (g.present && per_sm > 0 && g.clock_mhz > 0) {
        p.mma_tmacs = g.sms * g.clock_mhz * 1e6 * per_sm / 1e12;
        p.mma_note = format("%.0f TMAC/s = %.0f SMs x %.0f MHz x %.0f dense int8 MAC/clk/SM", p.mma_tmacs, g.sms,
                            g.clock_mhz, per_sm) +
                     " (rate per SM from NVIDIA's datasheets, app/bench/roofline.cpp; H100/H200 SXM: 1979 dense "
                     "INT8 TOPS = 989 TMAC/s at 1830 MHz, --peak-macs 989 for that figure)";
    } else if (g.present) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "unknown for %s (sm_%d%d: no int8 MMA or not in the table); give --peak-macs",
                      g.name.c_str(), g.major, g.minor);
        p.mma_note = buf;
    }
    return p;
}

Peaks cpu_peaks(double bw_gbps, double tmacs) {
    Peaks p;
    p.mem_gbps = std::max(0.0, bw_gbps);
    p.mma_tmacs = std::max(0.0, tmacs);
    p.mem_note = p.mem_gbps > 0 ? format("%g GB/s (--cpu-peak-bw)", p.mem_gbps) : "not stated (--cpu-peak-bw)";
    p.mma_note = p.mma_tmacs > 0 ? format("%g TMAC/s (--cpu-peak-macs)", p.mma_tmacs) : "not stated (--cpu-peak-macs)";
    return p;
}

Peaks cpu_peaks_detected(double bw_gbps, double tmacs) {
    Peaks p = cpu_peaks(bw_gbps, tmacs);
    if (p.mma_tmacs <= 0) {
        const CpuInt8Peak peak = cpu_int8_peak();
        p.mma_tmacs = peak.tmacs;
        p.mma_note = peak.note + " (--cpu-peak-macs overrides)";
    }
    if (p.mem_gbps <= 0) {
        p.mem_gbps = cpu_measured_read_gbps();
        p.mem_note =
            format("%.3g GB/s measured (256 MiB read by every core, best of 3; --cpu-peak-bw overrides)", p.mem_gbps);
    }
    return p;
}

double Floors::floor_us() const {
    if (std::isnan(mem_us)) return mma_us;
    if (std::isnan(mma_us)) return mem_us;
    return std::max(mem_us, mma_us);
}

double Floors::pct(double floor_us, double measured_ms) {
    return std::isfinite(floor_us) && measured_ms > 0 ? 100.0 * floor_us / (measured_ms * 1e3) : NAN;
}

Floors case_floors(const KernelCase& c, const Peaks& p) {
    Floors f;
    const long long positions = c.positions();
    if (positions <= 0) return f;
    const Rect roi = c.problem().roi;
    f.bytes = static_cast<double>(roi.width) * roi.height * c.batch + 4.0 * positions * c.batch;
    f.macs = c.macs() * c.batch;
    if (p.mem_gbps > 0) f.mem_us = f.bytes / (p.mem_gbps * 1e9) * 1e6;
    if (p.mma_tmacs > 0) f.mma_us = f.macs / (p.mma_tmacs * 1e12) * 1e6;
    return f;
}

}  // namespace corrtrack::bench
