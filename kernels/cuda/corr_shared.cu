// cuda_shared and cuda_shared_u4: a block's output tile plus the template-size overfetch staged
// in dynamic shared memory, then one thread per output (CUDA Handbook ch. 15, corrShared).
// cuda_shared stages with 4-byte loads, cuda_shared_u4 with 16-byte (uint4) loads.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "cuda/common.cuh"
#include "cuda/cuda_kernels.h"
#include "cuda/ncc_tile.cuh"

namespace corrtrack {
namespace {

using direct::NccArgs;
using direct::TileSource;

constexpr int kTileW = 32;  // outputs per tile row: one warp, 32 neighbouring bytes per read
constexpr int kTileH = 8;   // outputs per tile column: one row per warp
constexpr int kThreads = kTileW * kTileH;

// Row pitch of the staged tile: room for the largest load phase (V - 1 bytes before the first
// needed byte) and the overfetch, rounded to 16 bytes so 16-byte stores stay aligned. No
// further padding: a warp reads 32 consecutive bytes of one row (8 or 9 words, no two in one
// bank), so the pitch never decides a bank conflict.
int tile_pitch(int v, int tw) { return direct::round_up(v - 1 + kTileW + tw - 1, 16); }
std::size_t tile_bytes(int v, int tw, int th) {
    return static_cast<std::size_t>(tile_pitch(v, tw)) * (kTileH + th - 1);
}

// The template is read from global memory: all threads of a warp read the same byte, one L1
// broadcast; keeping it out of shared memory leaves the whole budget (and occupancy) to the tile.
template <int V>
static __global__ void __launch_bounds__(kThreads)
    corr_shared_kernel(NccArgs a, const std::uint8_t* __restrict__ templ, int pitch) {
    extern __shared__ uint4 smem_u4[];  // uint4: 16-byte alignment for the staging stores
    std::uint8_t* tile = reinterpret_cast<std::uint8_t*>(smem_u4);
    const int ox0 = blockIdx.x * kTileW;
    const int oy0 = blockIdx.y * kTileH;
    const TileSource src{a.frame,
                         a.frame_pitch,
                         a.frame_width,
                         a.roi_x + ox0,
                         a.roi_y + oy0,
                         min(kTileW + a.tw - 1, a.roi_w - ox0),
                         min(kTileH + a.th - 1, a.roi_h - oy0)};
    const int phase = static_cast<int>(reinterpret_cast<std::uintptr_t>(a.frame + src.x0) & (V - 1));
    direct::stage_tile_aligned<V>(src, tile, pitch, phase);
    __syncthreads();

    const int x = ox0 + threadIdx.x;
    const int y = oy0 + threadIdx.y;
    if (x >= a.out_w || y >= a.out_h) return;
    // A valid output reads tile rows < th + threadIdx.y <= src.rows and columns
    // < tw + threadIdx.x <= src.cols: all staged.
    const std::uint8_t* s = tile + threadIdx.y * pitch + phase + threadIdx.x;
    unsigned si = 0, sii = 0, sit = 0;
    for (int j = 0; j < a.th; ++j, s += pitch) {
        const std::uint8_t* trow = templ + j * a.tw;
        for (int i = 0; i < a.tw; ++i) {
            const unsigned v = s[i];
            const unsigned t = __ldg(trow + i);
            si += v;
            sii += v * v;
            sit += v * t;
        }
    }
    a.out[static_cast<std::size_t>(y) * a.out_pitch + x] = ncc_from_sums(a.n, si, sii, sit, a.st, a.stt);
}

template <int V>
static void launch_corr_shared(const NccArgs& a, const std::uint8_t* templ, cudaStream_t stream) {
    const dim3 block(kTileW, kTileH);
    const dim3 grid((a.out_w + kTileW - 1) / kTileW, (a.out_h + kTileH - 1) / kTileH);
    corr_shared_kernel<V><<<grid, block, tile_bytes(V, a.tw, a.th), stream>>>(a, templ, tile_pitch(V, a.tw));
    CORRTRACK_CUDA_LAUNCHED();
}

using Launcher = void (*)(const NccArgs&, const std::uint8_t*, cudaStream_t);
struct Variant {
    int v;
    const void* kernel;
    Launcher launch;
};
template <int V>
Variant variant() {
    return {V, reinterpret_cast<const void*>(&corr_shared_kernel<V>), &launch_corr_shared<V>};
}

class CudaShared final : public Correlator {
public:
    CudaShared(KernelInfo info, int max_load) : info_(std::move(info)), max_load_(max_load) {}
    const KernelInfo& info() const override { return info_; }
    bool supports(const NccProblem& p, std::string* why) const override { return direct::ncc_direct_supports(p, why); }
    void set_template(ImageView templ, Stream stream) override {
        upload_.set(templ, templ.height, stream);
        fallback_.template_changed();
    }
    void run(ImageView frame, const NccProblem& p, MapView out, Stream stream) override {
        const NccArgs a = check_.args(*this, upload_, frame, p, out);
        // Wide loads need every row to start at the same phase: a pitch that is a multiple of
        // the load width. Otherwise narrower loads (the frame base's alignment does not matter,
        // the phase absorbs it).
        const Variant k = max_load_ >= 16 && frame.pitch % 16 == 0 ? variant<16>()
                          : frame.pitch % 4 == 0                   ? variant<4>()
                                                                   : variant<1>();
        if (!smem_.allow(k.kernel, tile_bytes(k.v, a.tw, a.th))) {
            fallback_.run(upload_, frame, p, out, stream);
            return;
        }
        k.launch(a, upload_.device(), as_cuda(stream));
    }

private:
    KernelInfo info_;
    int max_load_;
    TemplateUpload upload_;
    direct::NccRunCheck check_;
    direct::SmemLimit smem_;
    direct::TexFallback fallback_;
};

}  // namespace

std::unique_ptr<Correlator> make_cuda_shared() { return std::make_unique<CudaShared>(registry_info("cuda_shared"), 4); }

std::unique_ptr<Correlator> make_cuda_shared_u4() {
    return std::make_unique<CudaShared>(registry_info("cuda_shared_u4"), 16);
}

}  // namespace corrtrack
