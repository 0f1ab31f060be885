// Exact integer numerators SIT = sum T * I for every valid position, on the CPU's vector
// units: AVX2 (vpmaddwd, 16 multiply-accumulates an instruction) and AVX-512 VNNI (vpdpbusd,
// 64). Both are built into every binary (per-function target attributes); the CPU's features
// pick what can run, capped by the environment variable CORRTRACK_CPU_ISA (scalar, avx2 or
// vnni), so tests and users can force the fallback.
// Thread rules: an Int8Numerator is used by one thread at a time; run() may use all cores.
#pragma once

#include <cstdint>
#include <vector>

#include "corrtrack/image.h"

namespace corrtrack {

enum class CpuIsa { kScalar = 0, kAvx2 = 1, kVnni = 2 };

const char* cpu_isa_name(CpuIsa isa);
// What this CPU supports (cpuid), ignoring the environment.
CpuIsa cpu_isa_detected();
// The detected ISA capped by CORRTRACK_CPU_ISA (read on every call: tests change it).
CpuIsa cpu_isa_best();

class Int8Numerator {
public:
    explicit Int8Numerator(CpuIsa isa) : isa_(isa) {}
    CpuIsa isa() const { return isa_; }
    // Keeps the template in the layout the kernel reads (columns padded with zeros).
    void set_template(ImageView templ);
    // out[y * out_pitch + x] = SIT of position (x, y), exact. Large problems use all cores.
    void run(ImageView image, std::uint32_t* out, std::size_t out_pitch) const;

    struct Layout;  // the padded shapes both kernels share (int8_numerator.cpp)

private:
    CpuIsa isa_;
    int tw_ = 0, th_ = 0, tw_padded_ = 0;
    std::uint32_t bias_ = 0;           // what the kernel's shifted sums lack (VNNI: 128 * sum T)
    std::vector<std::uint8_t> bytes_;  // VNNI: T as u8, rows of tw_padded_ (a multiple of 4)
    std::vector<std::int32_t> pairs_;  // AVX2: T[2m] | T[2m+1] << 16, rows of tw_padded_ / 2
};

// The kernels themselves (int8_avx2.cpp, int8_vnni.cpp): output rows [y_begin, y_end) of a
// image whose rows are `pitch` bytes and readable 64 bytes past the last output column plus
// the template; rows readable up to y_end rounded up to the row block + th - 1.
struct Int8Args {
    const std::uint8_t* image;  // the pixels as they are (VNNI flips them to I - 128 itself)
    std::size_t pitch;
    int ow, oh;
    int tw_padded, th;
    const void* templ;  // bytes (VNNI) or pairs (AVX2)
    std::uint32_t bias;
    std::uint32_t* out;
    std::size_t out_pitch;
};
constexpr int kVnniRows = 4;  // output rows per register block
constexpr int kAvx2Rows = 4;
// Output columns [x_begin, x_end): x_begin a multiple of the block's columns (64 VNNI, 16 AVX2).
void int8_rows_vnni(const Int8Args& a, int y_begin, int y_end, int x_begin, int x_end);
void int8_rows_avx2(const Int8Args& a, int y_begin, int y_end, int x_begin, int x_end);

}  // namespace corrtrack
