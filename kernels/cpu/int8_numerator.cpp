// Dispatch and data layout of the int8 numerators: which ISA runs, the template in the
// kernel's layout, a padded copy of the image (so that the kernels' full-width loads never
// leave it), and the split of output row blocks over the cores.
#include "cpu/int8_numerator.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "corrtrack/work_pool.h"

namespace corrtrack {
namespace {

// Below this many multiply-accumulates a search runs on the calling thread: tracking windows
// are tiny, and waking the thread team costs more than it saves (same rule as cpu_fast).
constexpr double kParallelMacs = 8e6;
// Output columns per stripe (a multiple of both kernels' block widths).
constexpr int kStripe = 512;

int round_up(int v, int m) { return (v + m - 1) / m * m; }

CpuIsa isa_cap_from_env() {
    const char* v = std::getenv("CORRTRACK_CPU_ISA");
    if (!v || !*v) return CpuIsa::kVnni;
    const std::string s(v);
    if (s == "scalar") return CpuIsa::kScalar;
    if (s == "avx2") return CpuIsa::kAvx2;
    return CpuIsa::kVnni;
}

}  // namespace

const char* cpu_isa_name(CpuIsa isa) {
    switch (isa) {
    case CpuIsa::kAvx2: return "avx2";
    case CpuIsa::kVnni: return "vnni";
    default: return "scalar";
    }
}

CpuIsa cpu_isa_detected() {
    static const CpuIsa detected = [] {
        __builtin_cpu_init();
        // vpermb is AVX-512 VBMI; the masked stores AVX-512 F; the NCC epilogue uses VL.
        if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") &&
            __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vl"))
            return CpuIsa::kVnni;
        if (__builtin_cpu_supports("avx2")) return CpuIsa::kAvx2;
        return CpuIsa::kScalar;
    }();
    return detected;
}

CpuIsa cpu_isa_best() { return std::min(cpu_isa_detected(), isa_cap_from_env()); }

void Int8Numerator::set_template(ImageView templ) {
    tw_ = templ.width;
    th_ = templ.height;
    tw_padded_ = round_up(tw_, 4);
    std::uint32_t sum = 0;
    bytes_.assign(static_cast<std::size_t>(tw_padded_) * th_, 0);
    for (int y = 0; y < th_; ++y) {
        std::memcpy(&bytes_[static_cast<std::size_t>(y) * tw_padded_], templ.row(y), tw_);
        for (int x = 0; x < tw_; ++x) sum += templ.row(y)[x];
    }
    // VNNI reads the image as I - 128 (flipped in the kernel): SIT = sum T * (I - 128) + 128 * sum T (mod 2^32, exact).
    bias_ = 128u * sum;
    if (isa_ != CpuIsa::kAvx2) return;  // only the AVX2 kernel reads the pairs
    const int pw = tw_padded_ / 2;
    pairs_.assign(static_cast<std::size_t>(pw) * th_, 0);
    for (int y = 0; y < th_; ++y)
        for (int m = 0; m < pw; ++m) {
            const std::uint8_t* t = &bytes_[static_cast<std::size_t>(y) * tw_padded_ + 2 * m];
            pairs_[static_cast<std::size_t>(y) * pw + m] = static_cast<std::int32_t>(t[0] | (t[1] << 16));
        }
}

void Int8Numerator::run(ImageView image, std::uint32_t* out, std::size_t out_pitch) const {
    const int ow = image.width - tw_ + 1, oh = image.height - th_ + 1;
    const bool vnni = isa_ == CpuIsa::kVnni;
    const int rows_per_block = vnni ? kVnniRows : kAvx2Rows;
    const int cols_per_block = vnni ? 64 : 16;
    const int blocks = (oh + rows_per_block - 1) / rows_per_block;
    // A block reads rows_per_block + th - 1 image rows and, in each, up to
    // kMaxOverread bytes past the image's width (whole register blocks and 64-byte loads).
    // Blocks whose reads end before the image's last row read the image itself (the bytes
    // past a row's end are the next row's, there to be read); the others read a padded copy of
    // the image's last rows. Only masked-off output columns ever see those bytes.
    const int over = round_up(ow, cols_per_block) - ow + tw_padded_ - tw_ + 64 + 48;
    const bool direct_ok = image.pitch >= static_cast<std::size_t>(over);
    int direct_blocks = 0;
    if (direct_ok)
        while (direct_blocks < blocks && (direct_blocks + 1) * rows_per_block + th_ - 1 < image.height) ++direct_blocks;
    // The tail copy: image rows from the first tail block's first row, padded to whole blocks.
    const int tail_y = direct_blocks * rows_per_block;
    const std::size_t pitch = static_cast<std::size_t>(round_up(round_up(ow, cols_per_block) + tw_padded_ + 128, 64));
    const int tail_rows = blocks * rows_per_block + th_ - 1 - tail_y;
    // Scratch of the calling thread, shared by every numerator it runs (a tracker's targets).
    thread_local std::vector<std::uint8_t> padded_tls;
    std::vector<std::uint8_t>& padded = padded_tls;
    if (padded.size() < pitch * tail_rows) padded.resize(pitch * tail_rows);
    for (int y = 0; y < tail_rows; ++y) {
        std::uint8_t* dst = padded.data() + static_cast<std::size_t>(y) * pitch;
        int x = 0;
        if (tail_y + y < image.height) {
            std::memcpy(dst, image.row(tail_y + y), image.width);
            x = image.width;
        }
        std::memset(dst + x, 0, pitch - x);
    }
    const void* templ = vnni ? static_cast<const void*>(bytes_.data()) : pairs_.data();
    const std::uint32_t bias = vnni ? bias_ : 0u;
    const Int8Args in_image{image.data, image.pitch, ow, oh, tw_padded_, th_, templ, bias, out, out_pitch};
    // The tail's rows start at its own row 0: its outputs are offset by tail_y rows.
    const Int8Args in_tail{padded.data(), pitch,      ow,
                           oh - tail_y,   tw_padded_, th_,
                           templ,         bias,       out + static_cast<std::size_t>(tail_y) * out_pitch,
                           out_pitch};
    const bool parallel = static_cast<double>(ow) * oh * tw_ * th_ > kParallelMacs;
    // Items are (stripe, row block), stripe-major: a stripe of kStripe columns keeps the rows a
    // block reads (th + 3 of them) small enough to stay in L2 for the next blocks.
    const int stripes = (ow + kStripe - 1) / kStripe;
    auto block = [&](int item) {
        const int s = item / blocks, b = item % blocks;
        const int x_begin = s * kStripe, x_end = std::min(ow, x_begin + kStripe);
        const bool tail = b >= direct_blocks;
        const Int8Args& a = tail ? in_tail : in_image;
        const int y0 = b * rows_per_block - (tail ? tail_y : 0);
        if (vnni)
            int8_rows_vnni(a, y0, y0 + rows_per_block, x_begin, x_end);
        else
            int8_rows_avx2(a, y0, y0 + rows_per_block, x_begin, x_end);
    };
    // Blocks of a few rows handed out one at a time: a core that another process takes
    // delays one block, not a static half of the frame.
    if (parallel) {
        parallel_for(stripes * blocks, block);
    } else {
        for (int i = 0; i < stripes * blocks; ++i) block(i);
    }
}

}  // namespace corrtrack
