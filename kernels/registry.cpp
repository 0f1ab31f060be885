// The explicit kernel registry: one line per kernel, in the order `corrtrack kernels` shows.
#include <stdexcept>

#include "corrtrack/correlator.h"
#include "cpu/cpu_kernels.h"
#include "cuda/cuda_kernels.h"

namespace corrtrack {
namespace {

bool always() { return true; }

// What each availability check asks for, said to a user when it says no.
struct Requirement {
    bool (*available)();
    const char* needs;
};
const Requirement kRequirements[] = {
    {cuda_kernels_available, "a usable CUDA GPU"},
    {cuda_mma_available, "a CUDA GPU of compute capability 8.0 or newer (int8 mma.sync)"},
    {cuda_wgmma_available, "a Hopper GPU (sm_90) with wgmma"},
    {cpu_avx2_available, "a CPU with AVX2 (and CORRTRACK_CPU_ISA not below avx2)"},
    {cpu_vnni_available, "a CPU with AVX-512 VNNI, BW and VBMI (and CORRTRACK_CPU_ISA not below vnni)"},
#if CORRTRACK_HAVE_OPENCV
    {cpu_opencv_available, "OpenCV"},
#endif
};

}  // namespace

const std::vector<KernelEntry>& kernel_registry() {
    static const std::vector<KernelEntry> entries = [] {
        std::vector<KernelEntry> e = {
            {"cpu_ref", Device::kCpu, "brute-force exact sums per window, double combine: the oracle", always,
             make_cpu_ref},
            {"cpu_fast", Device::kCpu,
             "sliding window sums + the best exact int8 numerator this CPU has (VNNI, AVX2) or FFTW, all cores", always,
             make_cpu_fast},
            {"cpu_avx2", Device::kCpu, "cpu_fast with the AVX2 int8 numerator always (vpmaddwd, 4x16 outputs a block)",
             cpu_avx2_available, make_cpu_avx2},
            {"cpu_vnni", Device::kCpu,
             "cpu_fast with the AVX-512 VNNI int8 numerator always (vpdpbusd, 4x64 outputs a block)",
             cpu_vnni_available, make_cpu_vnni},
        };
#if CORRTRACK_HAVE_OPENCV
        e.push_back({"cpu_opencv", Device::kCpu, "OpenCV matchTemplate TM_CCOEFF_NORMED (float), a peer",
                     cpu_opencv_available, make_cpu_opencv});
#endif
        // CUDA kernels (kernels/cuda/): each line lands with its kernel, sweep row and bench row.
        e.push_back({"cuda_tex", Device::kCuda, "one thread per position, texture reads (Handbook corrTexTex)",
                     cuda_kernels_available, make_cuda_tex});
        e.push_back({"cuda_shared", Device::kCuda, "shared-memory tile + overfetch, 4-byte loads (Handbook corrShared)",
                     cuda_kernels_available, make_cuda_shared});
        e.push_back({"cuda_shared_u4", Device::kCuda, "shared-memory tile + overfetch, 16-byte uint4 loads",
                     cuda_kernels_available, make_cuda_shared_u4});
        e.push_back({"cuda_dp4a", Device::kCuda,
                     "shared tile as words, 4 pixels per unsigned DP4A (Handbook corrShared4Dp4a)",
                     cuda_kernels_available, make_cuda_dp4a});
        e.push_back({"cuda_dp4a_ilp", Device::kCuda,
                     "DP4A, 4 output columns per thread for ILP (Handbook corrShared4Dp4aIlp)", cuda_kernels_available,
                     make_cuda_dp4a_ilp});
        // JPDC warp-shuffle family, the cuFFT baseline, and auto (which times the ones above it): keep auto last.
        e.push_back({"cuda_shuffle", Device::kCuda,
                     "JPDC warp shuffle: 32-lane register buffers, template broadcast, fused NCC",
                     cuda_kernels_available, make_cuda_shuffle});
        e.push_back({"cuda_shuffle_split", Device::kCuda,
                     "JPDC split-row: template rows shared among warps, atomicAdd, finish pass", cuda_kernels_available,
                     make_cuda_shuffle_split});
        e.push_back({"cuda_shuffle_grouped", Device::kCuda,
                     "JPDC grouped-overlap: 4 outputs per thread share each image row, fused NCC",
                     cuda_kernels_available, make_cuda_shuffle_grouped});
        e.push_back({"cuda_warp_per_overlap", Device::kCuda,
                     "JPDC warp-per-overlap: a warp strides one window, shuffle reduction", cuda_kernels_available,
                     make_cuda_warp_per_overlap});
        e.push_back({"cuda_mma", Device::kCuda,
                     "int8 tensor cores (mma.sync m16n8k32 u8): Toeplitz template GEMM, 4 rows x 8 warps per block, "
                     "4-byte A loads, fused NCC",
                     cuda_mma_available, make_cuda_mma});
        e.push_back({"cuda_mma_fused", Device::kCuda,
                     "int8 tensor cores (mma.sync m16n8k32 u8): Toeplitz template GEMM, window sums from the block's "
                     "shared tile (no integral pass), one launch",
                     cuda_mma_available, make_cuda_mma_fused});
        e.push_back({"cuda_wgmma", Device::kCuda,
                     "Hopper int8 wgmma (m64n32k32 u8, A in registers, B by bulk copy into shared memory): "
                     "Toeplitz template GEMM, window sums from the block's tile, one launch",
                     cuda_wgmma_available, make_cuda_wgmma});
        e.push_back({"cuda_fft", Device::kCuda,
                     "cuFFT double D2Z/Z2D numerator, rounded exact, integral-image denominator",
                     cuda_kernels_available, make_cuda_fft});
        e.push_back({"auto", Device::kCuda, "times every CUDA kernel once per shape bucket, then runs the fastest",
                     cuda_kernels_available, make_auto});
        return e;
    }();
    return entries;
}

const std::vector<KernelEntry>& kernel_variants() {
    static const std::vector<KernelEntry> entries = {
        {"cuda_dp4a_ilp_c2", Device::kCuda, "DP4A, 2 output columns per thread", cuda_kernels_available,
         [] { return make_cuda_dp4a_ilp_columns(2); }},
        {"cuda_dp4a_ilp_c4", Device::kCuda, "DP4A, 4 output columns per thread", cuda_kernels_available,
         [] { return make_cuda_dp4a_ilp_columns(4); }},
        {"cuda_dp4a_ilp_c8", Device::kCuda, "DP4A, 8 output columns per thread", cuda_kernels_available,
         [] { return make_cuda_dp4a_ilp_columns(8); }},
        {"cuda_shuffle_grouped_r2", Device::kCuda,
         "JPDC grouped-overlap: 2 outputs per thread share each image row, fused NCC", cuda_kernels_available,
         [] { return make_cuda_shuffle_grouped_rows(2); }},
        {"cuda_shuffle_grouped_r4", Device::kCuda,
         "JPDC grouped-overlap: 4 outputs per thread share each image row, fused NCC", cuda_kernels_available,
         [] { return make_cuda_shuffle_grouped_rows(4); }},
        {"cuda_shuffle_grouped_r8", Device::kCuda,
         "JPDC grouped-overlap: 8 outputs per thread share each image row, fused NCC", cuda_kernels_available,
         [] { return make_cuda_shuffle_grouped_rows(8); }},
        {"cuda_mma_r8", Device::kCuda, "cuda_mma's first shape: 8 rows per warp, 4 warps, 8-byte A loads",
         cuda_mma_available, [] { return make_cuda_mma_rows(8); }},
        {"cuda_mma_r4", Device::kCuda, "cuda_mma's first shape with 4 output rows per warp", cuda_mma_available,
         [] { return make_cuda_mma_rows(4); }},
        {"cuda_mma_a32", Device::kCuda, "cuda_mma, A fragments as four 4-byte shared loads (no register-quad moves)",
         cuda_mma_available, [] { return make_cuda_mma_variant("a32"); }},
        {"cuda_mma_a32e", Device::kCuda, "cuda_mma_a32, epilogue loads the table corners of a row's 4 outputs first",
         cuda_mma_available, [] { return make_cuda_mma_variant("a32e"); }},
        {"cuda_mma_a32e2", Device::kCuda, "cuda_mma_a32, epilogue loads the table corners of 2 outputs at a time first",
         cuda_mma_available, [] { return make_cuda_mma_variant("a32e2"); }},
        {"cuda_mma_r4a32", Device::kCuda, "cuda_mma_a32, 4 output rows per warp (960 blocks at 1080p)",
         cuda_mma_available, [] { return make_cuda_mma_variant("r4a32"); }},
        {"cuda_mma_a32_split", Device::kCuda,
         "cuda_mma_a32, SIT map + finish kernel, integral build overlapped on a second stream", cuda_mma_available,
         [] { return make_cuda_mma_variant("a32_split"); }},
        {"cuda_mma_fused_w4", Device::kCuda,
         "cuda_mma_fused with 4 warps (16 output rows) per block: half the shared memory per block", cuda_mma_available,
         make_cuda_mma_fused_w4},
        {"cuda_mma_fused_h2", Device::kCuda,
         "cuda_mma_fused with its sum table in two halves of 16 rows: 4 blocks an SM at 64x64 instead of 3",
         cuda_mma_available, make_cuda_mma_fused_h2},
        {"cuda_wgmma_w4", Device::kCuda, "cuda_wgmma with one warpgroup (16 output rows) per block",
         cuda_wgmma_available, make_cuda_wgmma_w4},
        {"cuda_wgmma_c8", Device::kCuda, "cuda_wgmma with B in 8-row chunks through 4 buffers (3 copies ahead)",
         cuda_wgmma_available, make_cuda_wgmma_c8},
        {"cuda_wgmma_d2", Device::kCuda, "cuda_wgmma with two wgmma groups in flight (3 A slots)", cuda_wgmma_available,
         make_cuda_wgmma_d2},
    };
    return entries;
}

const KernelEntry* find_kernel(std::string_view name) {
    for (const auto* list : {&kernel_registry(), &kernel_variants()})
        for (const KernelEntry& e : *list)
            if (name == e.name) return &e;
    return nullptr;
}

std::unique_ptr<Correlator> make_correlator(std::string_view name, std::string* why) {
    const KernelEntry* e = find_kernel(name);
    if (!e) {
        if (why) {
            *why = "unknown kernel '" + std::string(name) + "' (known:";
            for (const KernelEntry& k : kernel_registry()) *why += std::string(" ") + k.name;
            *why += ")";
        }
        return nullptr;
    }
    if (!e->available()) {
        if (why)
            *why = std::string("kernel '") + e->name + "' is not available on this machine (" + unavailable_reason(*e) +
                   ")";
        return nullptr;
    }
    return e->create();
}

KernelInfo registry_info(std::string_view name) {
    const KernelEntry* e = find_kernel(name);
    if (!e) throw std::logic_error("kernel '" + std::string(name) + "' is missing from kernels/registry.cpp");
    return {e->name, e->device, e->summary};
}

std::string unavailable_reason(const KernelEntry& e) {
    if (e.available()) return "";
    // Every CUDA kernel needs a GPU first; say that rather than a finer requirement.
    if (e.device == Device::kCuda && !cuda_available()) return "no usable CUDA GPU";
    for (const Requirement& r : kRequirements)
        if (r.available == e.available) return std::string("needs ") + r.needs;
    return "its availability check says no";
}

std::string resolve_kernel(std::string_view name, bool have_gpu) {
    if (name != "auto") return std::string(name);
    const KernelEntry* e = find_kernel("auto");
    return have_gpu && e && e->available() ? "auto" : "cpu_fast";
}

}  // namespace corrtrack
