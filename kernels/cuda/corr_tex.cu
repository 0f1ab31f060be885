// cuda_tex: one thread per output position, frame pixels fetched through a texture object over
// the pitched frame (CUDA Handbook ch. 15, corrTexTex); exact uint32 sums, double combine.
#include <cstdint>
#include <memory>
#include <string>

#include "cuda/common.cuh"
#include "cuda/cuda_kernels.h"
#include "cuda/ncc_tile.cuh"

namespace corrtrack {
namespace {

using direct::NccArgs;

constexpr int kBlockX = 32;  // a warp reads 32 neighbouring pixels of one row per fetch
constexpr int kBlockY = 8;

// Frame reads through the texture unit. Point filtering, element reads; +0.5 hits the texel
// centre. x_offset is where the frame's first column sits in a texture whose base address had
// to be aligned down to the device's texture alignment.
struct TexReader {
    cudaTextureObject_t tex;
    int x_offset;
    __device__ __forceinline__ unsigned operator()(int x, int y) const {
        return tex2D<unsigned char>(tex, static_cast<float>(x + x_offset) + 0.5f, static_cast<float>(y) + 0.5f);
    }
};

// The same reads through the read-only data cache, for frames no texture can describe (pitch
// not a multiple of the texture pitch alignment, or wider than the texture limits).
struct GlobalReader {
    const std::uint8_t* frame;
    std::size_t pitch;
    __device__ __forceinline__ unsigned operator()(int x, int y) const {
        return __ldg(frame + static_cast<std::size_t>(y) * pitch + x);
    }
};

// The template comes from global memory (TemplateUpload's buffer), not __constant__: a
// __constant__ symbol is one per module, so two Correlator instances (or one used on two
// streams) would overwrite each other's template; here every thread of a warp reads the same
// template byte at the same time, which the L1 serves as one broadcast, like the constant cache.
template <typename Reader>
static __global__ void __launch_bounds__(kBlockX* kBlockY)
    corr_tex_kernel(Reader frame, NccArgs a, const std::uint8_t* __restrict__ templ) {
    const int x = blockIdx.x * kBlockX + threadIdx.x;
    const int y = blockIdx.y * kBlockY + threadIdx.y;
    if (x >= a.out_w || y >= a.out_h) return;
    const int fx = a.roi_x + x;
    const int fy = a.roi_y + y;
    unsigned si = 0, sii = 0, sit = 0;
    for (int j = 0; j < a.th; ++j) {
        const std::uint8_t* trow = templ + j * a.tw;
        for (int i = 0; i < a.tw; ++i) {
            const unsigned v = frame(fx + i, fy + j);
            const unsigned t = __ldg(trow + i);
            si += v;
            sii += v * v;
            sit += v * t;
        }
    }
    a.out[static_cast<std::size_t>(y) * a.out_pitch + x] = ncc_from_sums(a.n, si, sii, sit, a.st, a.stt);
}

template <typename Reader>
static void launch_corr_tex(const Reader& frame, const NccArgs& a, const std::uint8_t* templ, cudaStream_t stream) {
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid((a.out_w + kBlockX - 1) / kBlockX, (a.out_h + kBlockY - 1) / kBlockY);
    corr_tex_kernel<<<grid, block, 0, stream>>>(frame, a, templ);
    CORRTRACK_CUDA_LAUNCHED();
}

// Texture objects for the frames this kernel has seen, keyed by address, size and pitch, so a
// ring of frame buffers costs no texture creation per frame. A full cache evicts its least
// recently used entry after waiting for that entry's last kernel (the only wait here, and only
// when a caller cycles through more than kEntries buffers).
class FrameTextures {
public:
    FrameTextures() = default;
    FrameTextures(const FrameTextures&) = delete;
    FrameTextures& operator=(const FrameTextures&) = delete;
    ~FrameTextures() {
        for (Entry& e : entries_) {
            if (e.done) cudaEventSynchronize(e.done);
            if (e.tex) cudaDestroyTextureObject(e.tex);
            if (e.done) cudaEventDestroy(e.done);
        }
    }

    // A texture over `frame`, or nullptr when the device cannot describe it as one.
    const TexReader* get(ImageView frame) {
        ++clock_;
        for (Entry& e : entries_)
            if (e.tex && e.data == frame.data && e.width == frame.width && e.height == frame.height &&
                e.pitch == frame.pitch) {
                e.last_use = clock_;
                current_ = &e;
                return &e.reader;
            }
        if (limits_.tex_align == 0) query_limits();
        const std::uintptr_t addr = reinterpret_cast<std::uintptr_t>(frame.data);
        const std::uintptr_t base = addr & ~static_cast<std::uintptr_t>(limits_.tex_align - 1);
        const std::size_t x_offset = addr - base;
        if (frame.pitch % limits_.pitch_align != 0 || frame.pitch > limits_.max_pitch ||
            x_offset + frame.width > frame.pitch || x_offset + frame.width > limits_.max_width ||
            static_cast<std::size_t>(frame.height) > limits_.max_height)
            return nullptr;

        Entry* slot = &entries_[0];
        for (Entry& e : entries_)
            if (e.last_use < slot->last_use) slot = &e;  // never-used entries have last_use 0
        if (slot->tex) {
            CORRTRACK_CUDA(cudaEventSynchronize(slot->done));
            CORRTRACK_CUDA(cudaDestroyTextureObject(slot->tex));
            slot->tex = 0;
        }
        if (!slot->done) CORRTRACK_CUDA(cudaEventCreateWithFlags(&slot->done, cudaEventDisableTiming));

        cudaResourceDesc res{};
        res.resType = cudaResourceTypePitch2D;
        res.res.pitch2D.devPtr = reinterpret_cast<void*>(base);
        res.res.pitch2D.desc = cudaCreateChannelDesc<unsigned char>();
        res.res.pitch2D.width = x_offset + frame.width;
        res.res.pitch2D.height = frame.height;
        res.res.pitch2D.pitchInBytes = frame.pitch;
        cudaTextureDesc td{};
        td.addressMode[0] = cudaAddressModeClamp;
        td.addressMode[1] = cudaAddressModeClamp;
        td.filterMode = cudaFilterModePoint;
        td.readMode = cudaReadModeElementType;
        td.normalizedCoords = 0;
        CORRTRACK_CUDA(cudaCreateTextureObject(&slot->tex, &res, &td, nullptr));
        slot->data = frame.data;
        slot->width = frame.width;
        slot->height = frame.height;
        slot->pitch = frame.pitch;
        slot->reader = TexReader{slot->tex, static_cast<int>(x_offset)};
        slot->last_use = clock_;
        current_ = slot;
        return &slot->reader;
    }

    // Marks the texture returned by the last get() as in use by work queued on `stream`.
    void used(cudaStream_t stream) { CORRTRACK_CUDA(cudaEventRecord(current_->done, stream)); }

private:
    struct Entry {
        const std::uint8_t* data = nullptr;
        int width = 0, height = 0;
        std::size_t pitch = 0;
        cudaTextureObject_t tex = 0;
        TexReader reader{};
        cudaEvent_t done = nullptr;
        unsigned long long last_use = 0;
    };
    struct Limits {
        std::size_t tex_align = 0, pitch_align = 0, max_width = 0, max_height = 0, max_pitch = 0;
    };
    void query_limits() {
        int dev = 0;
        CORRTRACK_CUDA(cudaGetDevice(&dev));
        const auto attr = [dev](cudaDeviceAttr a) {
            int v = 0;
            CORRTRACK_CUDA(cudaDeviceGetAttribute(&v, a, dev));
            return static_cast<std::size_t>(v);
        };
        limits_.pitch_align = attr(cudaDevAttrTexturePitchAlignment);
        limits_.max_width = attr(cudaDevAttrMaxTexture2DLinearWidth);
        limits_.max_height = attr(cudaDevAttrMaxTexture2DLinearHeight);
        limits_.max_pitch = attr(cudaDevAttrMaxTexture2DLinearPitch);
        limits_.tex_align = attr(cudaDevAttrTextureAlignment);  // set last: it marks "queried"
    }

    static constexpr int kEntries = 8;
    Entry entries_[kEntries];
    Entry* current_ = nullptr;
    unsigned long long clock_ = 0;
    Limits limits_;
};

class CudaTex final : public Correlator {
public:
    const KernelInfo& info() const override { return info_; }
    bool supports(const NccProblem& p, std::string* why) const override { return direct::ncc_direct_supports(p, why); }
    void set_template(ImageView templ, Stream stream) override { upload_.set(templ, templ.height, stream); }
    void run(ImageView frame, const NccProblem& p, MapView out, Stream stream) override {
        const NccArgs a = check_.args(*this, upload_, frame, p, out);
        const cudaStream_t s = as_cuda(stream);
        if (const TexReader* tex = textures_.get(frame)) {
            launch_corr_tex(*tex, a, upload_.device(), s);
            textures_.used(s);
        } else {
            launch_corr_tex(GlobalReader{frame.data, frame.pitch}, a, upload_.device(), s);
        }
    }

private:
    KernelInfo info_ = registry_info("cuda_tex");
    TemplateUpload upload_;
    direct::NccRunCheck check_;
    FrameTextures textures_;
};

}  // namespace

std::unique_ptr<Correlator> make_cuda_tex() { return std::make_unique<CudaTex>(); }

}  // namespace corrtrack
