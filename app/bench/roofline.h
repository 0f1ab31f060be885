// The bench's roofline: the device's peaks (memory bandwidth, dense int8 tensor-core MAC rate)
// and, for each case, the two floors no kernel can beat: the bytes that must move over the
// bandwidth, and the multiply-adds over the MMA peak. The report prints the floors beside the
// measured medians (report.h), so that the distance to the limit is a number.
// Thread rules: plain values and pure functions.
#pragma once

#include <cmath>
#include <string>

#include "app/bench/cases.h"
#include "app/bench/machine_info.h"

namespace corrtrack::bench {

// The peaks of the device a row ran on; 0: unknown (that floor and its column stay empty).
struct Peaks {
    double mem_gbps = 0;             // memory bandwidth, 1e9 bytes/s
    double mma_tmacs = 0;            // dense int8 tensor-core multiply-adds, 1e12 per second
    std::string mem_note, mma_note;  // where each number comes from, for the report header
};

// Dense (not sparse) int8 tensor-core multiply-adds per clock per SM by compute capability,
// read off NVIDIA's datasheets (roofline.cpp cites them); 0: no int8 MMA or not in the table.
int int8_mma_macs_per_clock_per_sm(int major, int minor);
// Peak DRAM bandwidth in GB/s: memory clock (kHz) x bus width (bits) / 8 x 2 (double data rate).
double dram_bandwidth_gbps(double mem_clock_khz, int bus_bits);

// The GPU's peaks: bandwidth from its memory clock and bus width (a small table by name when
// the driver reports neither), MMA peak = SMs x clock x int8_mma_macs_per_clock_per_sm.
// Overrides > 0 (--peak-bw GB/s, --peak-macs TMAC/s) replace the computed values.
Peaks gpu_peaks(const GpuInfo& g, double bw_override_gbps, double macs_override_tmacs);
// CPU rows: the peaks stated on the command line (--cpu-peak-bw, --cpu-peak-macs), else unknown.
Peaks cpu_peaks(double bw_gbps, double tmacs);
// The same, with what is not stated worked out: MAC peak from the CPU kernels' ISA, cores and
// clock (corrtrack/cpu_info.h), bandwidth measured.
Peaks cpu_peaks_detected(double bw_gbps, double tmacs);

// What one case must do at least, and how long that takes at the peaks.
struct Floors {
    double bytes = 0;                   // the searched region read once as u8 + the float map written once
    double macs = 0;                    // output positions x template pixels
    double mem_us = NAN, mma_us = NAN;  // NaN where that peak is unknown

    // The roofline floor: the larger of the known floors; NaN when neither is known.
    double floor_us() const;
    // Floor / measured x 100 (100: the kernel runs at that limit); NaN when unknown.
    double mem_pct(double measured_ms) const { return pct(mem_us, measured_ms); }
    double mma_pct(double measured_ms) const { return pct(mma_us, measured_ms); }

private:
    static double pct(double floor_us, double measured_ms);
};

// Bytes: the case's roi (the whole frame in full mode, the window in window mode) once, u8,
// plus its map once, float; the template (at most 256x256 bytes) is left out.
Floors case_floors(const KernelCase& c, const Peaks& p);

}  // namespace corrtrack::bench
