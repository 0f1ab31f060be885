// What the CPU kernels see of this CPU: the int8 ISA they run, the cores they use, and from
// those a multiply-accumulate peak and a measured memory bandwidth for the bench's roofline.
// Thread rules: every function may be called from any thread (results cached after the first).
#pragma once

#include <string>

namespace corrtrack {

struct CpuInt8Peak {
    std::string isa;         // "vnni", "avx2" or "scalar": what cpu_fast's numerator runs now
    int cores = 0;           // threads the CPU kernels use
    double ghz = 0;          // /proc/cpuinfo's clock (0 when unknown)
    int macs_per_cycle = 0;  // per core, from the ISA's instruction width and issue rate
    double tmacs = 0;        // cores x ghz x macs_per_cycle / 1000; 0 when unknown
    std::string note;        // how it was worked out, for the bench's report
};
CpuInt8Peak cpu_int8_peak();

// Read bandwidth of a 256 MiB buffer streamed by the CPU kernels' threads (best of 3), GB/s.
double cpu_measured_read_gbps();

// CPU model name ("AMD EPYC 9454 ..." from /proc/cpuinfo) and the flags that matter to the
// CPU kernels ("avx2 avx512bw avx512vbmi avx512_vnni ..."), for bench results.
std::string cpu_model_name();
std::string cpu_kernel_flags();

}  // namespace corrtrack
