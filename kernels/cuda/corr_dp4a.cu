// cuda_dp4a and cuda_dp4a_ilp: the shared-memory tile of corr_shared.cu read as 32-bit words,
// four pixels per unsigned __dp4a (CUDA Handbook ch. 15, corrShared4Dp4a and
// corrShared4Dp4aIlp). cuda_dp4a computes one output column per thread; cuda_dp4a_ilp computes
// C neighbouring columns per thread with independent accumulators (C = 2, 4 or 8). Both run
// batches in one launch: gridDim.z is the template, whose roi, template words, statistics
// (from the stack's prefix table, integral.cuh) and output map are offset by its index.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "cuda/common.cuh"
#include "cuda/cuda_kernels.h"
#include "cuda/integral.cuh"
#include "cuda/ncc_tile.cuh"

namespace corrtrack {
namespace {

using direct::NccArgs;
using direct::TileSource;

constexpr int kBlockX = 32;
constexpr int kBlockY = 8;  // one output row per warp
constexpr int kThreads = kBlockX * kBlockY;

// Tile words a thread keeps in registers per template word. A thread's first column is
// cx = threadIdx.x * C. With C % 4 == 0 it is word-aligned, and column c's four window bytes
// start at byte c & 3 of word c >> 2: words 0 .. C/4 of the window. With C = 1 or 2 the window
// starts at byte (cx & 3) + c <= 3 of word 0, so words 0 and 1 suffice.
template <int C>
constexpr int window_words() {
    return C % 4 == 0 ? C / 4 + 1 : 2;
}

// Words per staged row: the last thread's first word, (31 * C) / 4, plus every word its window
// reaches, twords - 1 + window_words - 1 further on; rounded to 16 bytes. This is always more
// than the 32 * C + tw - 1 bytes a tile needs, and the extra words are staged as 0.
template <int C>
int tile_words(int twords) {
    return direct::round_up((kBlockX - 1) * C / 4 + twords + window_words<C>() - 1, 4);
}
template <int C>
std::size_t tile_bytes(int twords, int th) {
    return sizeof(std::uint32_t) * tile_words<C>(twords) * (kBlockY + th - 1);
}

// One template word (word i of its row) against the window for each of the C columns. w[q]
// holds tile word (first word of the thread) + i + q; `shift` (bits) is the thread's start byte
// within w[0] when C is 1 or 2. `mask` keeps the window bytes that lie inside the template: the
// template word is zero-padded, so SumIT would be right without it, but SumI and SumISq would not.
template <int C, int NW>
__device__ __forceinline__ void accumulate(const std::uint32_t (&w)[NW], std::uint32_t t, std::uint32_t mask,
                                           unsigned shift, unsigned (&si)[C], unsigned (&sii)[C], unsigned (&sit)[C]) {
#pragma unroll
    for (int c = 0; c < C; ++c) {
        std::uint32_t v;
        if constexpr (C % 4 == 0)
            v = (c & 3) == 0 ? w[c >> 2] : __funnelshift_r(w[c >> 2], w[(c >> 2) + 1], 8u * (c & 3));
        else
            v = __funnelshift_r(w[0], w[1], shift + 8u * c);
        v &= mask;
        // Unsigned overload: pixels above 127 must not turn negative.
        si[c] = __dp4a(v, 0x01010101u, si[c]);
        sii[c] = __dp4a(v, v, sii[c]);
        sit[c] = __dp4a(v, t, sit[c]);
    }
}

// Blocks of 256 threads per SM the register budget must allow (65536 / (256 * blocks) registers
// a thread). C = 1 is latency-bound and fits 32 registers without spilling: full occupancy.
// C = 4 fits 48 (5 blocks) without spilling; under a 64 cap ptxas hoists the template-stats
// loads above the main loop and takes 53, which costs a block per SM (sm_90, ptxas -v).
// C = 8's 24 accumulators spill under a 64-register cap, so it gets up to 85.
// Never more than the SM holds (ptxas ignores a larger value, with a warning): the device pass
// sees the architecture, as in the CUDA Programming Guide's __launch_bounds__ example.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
constexpr int kMaxThreadsPerSm = 1024;
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890)
constexpr int kMaxThreadsPerSm = 1536;
#else
constexpr int kMaxThreadsPerSm = 2048;
#endif
// The single-template kernel keeps the budget it was tuned with (C = 4: 4 blocks); the batched
// one, with its template-stats loads, fits 5 (see above).
template <int C, bool kBatch>
constexpr int min_blocks() {
    constexpr int wanted = C == 1 ? 8 : C == 2 ? 6 : C == 4 ? (kBatch ? 5 : 4) : 3;
    return wanted < kMaxThreadsPerSm / kThreads ? wanted : kMaxThreadsPerSm / kThreads;
}

// templ: the packed words of the whole stack (twords per row, th rows per template); prefix:
// the stack's (templates * th + 1)-entry prefix table. Template k = blockIdx.z searches the roi
// k * roi_step rows down and writes map k, out rows [k * out_h, (k + 1) * out_h).
// kBatch = false is the one-template kernel exactly as before batches existed: no grid z, no
// offsets, the template's sums as arguments (a.n, a.st, a.stt). Folding it into the batched
// kernel cost 4% at 1080p / 64x64 on the H200 (478-481 us -> 498-501 us, same machine).
template <int C, bool kBatch>
static __global__ void __launch_bounds__(kThreads, min_blocks<C, kBatch>())
    corr_dp4a_kernel(NccArgs a, const std::uint32_t* __restrict__ templ, const TemplatePrefix* __restrict__ prefix,
                     int twords, int row_words) {
    static_assert(C == 1 || C == 2 || C % 4 == 0, "columns per thread: 1, 2 or a multiple of 4");
    constexpr int kNW = window_words<C>();
    extern __shared__ std::uint32_t tile[];
    const int k = kBatch ? static_cast<int>(blockIdx.z) : 0;
    const int ox0 = blockIdx.x * (kBlockX * C);
    const int oy0 = blockIdx.y * kBlockY;
    // Rows of template k's roi: [roi_y + k * roi_step, + roi_h), inside the frame (validated).
    const TileSource src{a.frame,
                         a.frame_pitch,
                         a.frame_width,
                         a.roi_x + ox0,
                         a.roi_y + (kBatch ? k * a.roi_step : 0) + oy0,
                         min(kBlockX * C + a.tw - 1, a.roi_w - ox0),
                         min(kBlockY + a.th - 1, a.roi_h - oy0)};
    direct::stage_tile_words(src, tile, row_words);
    __syncthreads();

    const int cx = threadIdx.x * C;  // first column of this thread, tile-relative
    const int x0 = ox0 + cx;
    const int y = oy0 + threadIdx.y;
    if (x0 >= a.out_w || y >= a.out_h) return;
    // Tile rows read: threadIdx.y + j < threadIdx.y + th <= src.rows (y valid). Words read:
    // < cx / 4 + twords + kNW - 1 <= row_words, all staged. Every window byte inside the
    // template of a valid column is < src.cols, so staged from the frame.
    const unsigned shift = C % 4 == 0 ? 0u : 8u * (cx & 3);
    const unsigned rem = a.tw & 3;
    const std::uint32_t last_mask = rem ? (1u << (8 * rem)) - 1u : 0xffffffffu;

    unsigned si[C], sii[C], sit[C];
#pragma unroll
    for (int c = 0; c < C; ++c) si[c] = sii[c] = sit[c] = 0;

    const std::uint32_t* srow = tile + threadIdx.y * row_words + (cx >> 2);
    const std::uint32_t* trow = kBatch ? templ + static_cast<std::size_t>(k) * a.th * twords : templ;
    for (int j = 0; j < a.th; ++j, srow += row_words, trow += twords) {
        std::uint32_t w[kNW];
#pragma unroll
        for (int q = 0; q < kNW - 1; ++q) w[q] = srow[q];
#pragma unroll 4
        for (int i = 0; i < twords - 1; ++i) {
            w[kNW - 1] = srow[i + kNW - 1];
            accumulate<C>(w, __ldg(trow + i), 0xffffffffu, shift, si, sii, sit);
#pragma unroll
            for (int q = 0; q < kNW - 1; ++q) w[q] = w[q + 1];
        }
        w[kNW - 1] = srow[twords - 1 + kNW - 1];
        accumulate<C>(w, __ldg(trow + twords - 1), last_mask, shift, si, sii, sit);
    }

    const DeviceTemplateStats ts =
        kBatch ? stacked_template_stats(prefix, k, a.tw, a.th) : DeviceTemplateStats{a.n, a.st, a.stt};
    float* out = a.out + ((kBatch ? static_cast<std::size_t>(k) * a.out_h : 0) + y) * a.out_pitch + x0;
#pragma unroll
    for (int c = 0; c < C; ++c)
        if (x0 + c < a.out_w) out[c] = ncc_from_sums(ts.n, si[c], sii[c], sit[c], ts.sum, ts.sum_sq);
}

template <int C, bool kBatch>
static void launch_corr_dp4a(const NccArgs& a, const std::uint32_t* templ, const TemplatePrefix* prefix,
                             cudaStream_t stream) {
    const int twords = (a.tw + 3) / 4;
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid((a.out_w + kBlockX * C - 1) / (kBlockX * C), (a.out_h + kBlockY - 1) / kBlockY,
                    kBatch ? a.templates : 1);
    corr_dp4a_kernel<C, kBatch>
        <<<grid, block, tile_bytes<C>(twords, a.th), stream>>>(a, templ, prefix, twords, tile_words<C>(twords));
    CORRTRACK_CUDA_LAUNCHED();
}

class CudaDp4a final : public Correlator {
public:
    CudaDp4a(KernelInfo info, int columns) : info_(std::move(info)), columns_(columns) {}
    const KernelInfo& info() const override { return info_; }
    bool supports(const NccProblem& p, std::string* why) const override {
        return direct::ncc_direct_supports(p, why, /*batches=*/true);
    }
    // A batch's templates come stacked in one image; words and the prefix table cover the whole
    // stack, so run() can split it any way (one kernel launch here, as the packing was before).
    void set_template(ImageView templ, Stream stream) override {
        upload_.set(templ, templ.height, stream);
        const int twords = (templ.width + 3) / 4;
        words_.grow(static_cast<std::size_t>(twords) * templ.height);  // stacks grow by a template
        prefix_.grow(static_cast<std::size_t>(templ.height) + 1);
        launch_template_prefix(upload_.device(), templ.width, templ.height, prefix_.get(), words_.get(), prefix_scan_,
                               as_cuda(stream));
        fallback_.template_changed();
    }
    // Launches only, once the same problem ran the direct kernel (not the texture fallback,
    // which waits for its texture slots).
    bool capturable(const NccProblem& p, Stream) override { return ran_.same(p); }
    void run(ImageView frame, const NccProblem& p, MapView out, Stream stream) override {
        const NccArgs a = check_.args(*this, upload_, frame, p, out);
        switch (columns_) {
        case 1: return run_columns<1>(a, frame, p, out, stream);
        case 2: return run_columns<2>(a, frame, p, out, stream);
        case 4: return run_columns<4>(a, frame, p, out, stream);
        default: return run_columns<8>(a, frame, p, out, stream);
        }
    }

private:
    template <int C>
    void run_columns(const NccArgs& a, ImageView frame, const NccProblem& p, MapView out, Stream stream) {
        const int twords = (a.tw + 3) / 4;
        // One stored template, one map: the single-template kernel with the sums in `a`
        // (NccArgs holds the whole stack's sums, which are then this template's).
        const bool single = a.templates == 1 && upload_.height() == a.th;
        const void* kernel = single ? reinterpret_cast<const void*>(&corr_dp4a_kernel<C, false>)
                                    : reinterpret_cast<const void*>(&corr_dp4a_kernel<C, true>);
        if (!smem_.allow(kernel, tile_bytes<C>(twords, a.th))) {
            fallback_.run(upload_, frame, p, out, stream);
            return;
        }
        ran_.note(p);
        if (single)
            launch_corr_dp4a<C, false>(a, words_.get(), nullptr, as_cuda(stream));
        else
            launch_corr_dp4a<C, true>(a, words_.get(), prefix_.get(), as_cuda(stream));
    }

    KernelInfo info_;
    int columns_;
    TemplateUpload upload_;
    DeviceBuffer<std::uint32_t> words_;
    DeviceBuffer<TemplatePrefix> prefix_;
    DeviceBuffer<std::uint8_t> prefix_scan_;  // launch_template_prefix's workspace (large stacks)
    direct::NccRunCheck check_;
    direct::SmemLimit smem_;
    direct::TexFallback fallback_;
    RanProblem ran_;
};

}  // namespace

std::unique_ptr<Correlator> make_cuda_dp4a() { return std::make_unique<CudaDp4a>(registry_info("cuda_dp4a"), 1); }

std::unique_ptr<Correlator> make_cuda_dp4a_ilp() {
    return std::make_unique<CudaDp4a>(registry_info("cuda_dp4a_ilp"), kDp4aIlpColumns);
}

std::unique_ptr<Correlator> make_cuda_dp4a_ilp_columns(int columns) {
    if (columns != 2 && columns != 4 && columns != 8) return nullptr;
    return std::make_unique<CudaDp4a>(registry_info("cuda_dp4a_ilp_c" + std::to_string(columns)), columns);
}

}  // namespace corrtrack
