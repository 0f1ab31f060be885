#include "render/heatmap_sink_cuda.h"
#include "render/interop_texture.h"

// GLEW before cuda_gl_interop.h (which includes GL/gl.h).
#include <GL/glew.h>
#include <cuda_gl_interop.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <mutex>

#include "corrtrack/correlator.h"
#include "corrtrack/cuda_util.h"

namespace corrtrack {
namespace {

constexpr int kNumColormaps = 3;  // turbo, grey, viridis: the order of enum Colormap
// The CPU sink's tables (colormap.cpp), copied to constant memory once per process.
__constant__ uchar4 c_lut[kNumColormaps][256];

int colormap_index(Colormap c) { return c == Colormap::kTurbo ? 0 : c == Colormap::kGrey ? 1 : 2; }

void upload_luts() {
    static std::once_flag once;
    std::call_once(once, [] {
        uchar4 host[kNumColormaps][256];
        for (Colormap c : kColormaps) {
            const ColormapLut& lut = colormap_lut(c);
            for (int i = 0; i < 256; ++i)
                host[colormap_index(c)][i] = make_uchar4(lut[i][0], lut[i][1], lut[i][2], lut[i][3]);
        }
        CORRTRACK_CUDA(cudaMemcpyToSymbol(c_lut, host, sizeof host));
    });
}

// Min and max of the map for the stretch mode, one block, into range[0..1]. fminf/fmaxf skip
// NaNs; the CPU sink does too except when the very first value is NaN.
constexpr int kRangeThreads = 256;
__global__ void map_range_kernel(const float* __restrict__ map, int width, int height, size_t pitch,
                                 float* __restrict__ range) {
    __shared__ float s_lo[kRangeThreads], s_hi[kRangeThreads];
    float lo = map[0], hi = map[0];
    const int n = width * height;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const float v = map[static_cast<size_t>(i / width) * pitch + i % width];
        lo = fminf(lo, v);
        hi = fmaxf(hi, v);
    }
    s_lo[threadIdx.x] = lo;
    s_hi[threadIdx.x] = hi;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s) {
            s_lo[threadIdx.x] = fminf(s_lo[threadIdx.x], s_lo[threadIdx.x + s]);
            s_hi[threadIdx.x] = fmaxf(s_hi[threadIdx.x], s_hi[threadIdx.x + s]);
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        range[0] = s_lo[0];
        range[1] = s_hi[0];
    }
}

// One thread per texel. The arithmetic is the CPU sink's, rounded the same way: explicit _rn
// intrinsics so nvcc cannot contract (v - lo) * k + 0.5 into an FMA, which would round once
// instead of three times and could pick a neighbouring table entry.
__global__ void colormap_kernel(const float* __restrict__ map, int width, int height, size_t pitch, float lo, float hi,
                                const float* __restrict__ range, int lut, cudaSurfaceObject_t out) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    if (range) {
        lo = range[0];
        hi = range[1];
    }
    const float k = hi > lo ? __fdiv_rn(255.0f, __fsub_rn(hi, lo)) : 0.0f;
    const float m = map[static_cast<size_t>(y) * pitch + x];
    const float v = isfinite(m) ? __fmul_rn(__fsub_rn(m, lo), k) : 0.0f;
    const float t = fminf(fmaxf(__fadd_rn(v, 0.5f), 0.0f), 255.0f);
    surf2Dwrite(c_lut[lut][static_cast<int>(t)], out, x * static_cast<int>(sizeof(uchar4)), y);
}

class CudaHeatmapSink final : public HeatmapSink {
public:
    CudaHeatmapSink() {
        upload_luts();
        CORRTRACK_CUDA(cudaMalloc(&range_, 2 * sizeof(float)));
    }

    ~CudaHeatmapSink() override {
        // Destructors must not throw: errors here are ignored.
        cudaFree(staging_);
        cudaFree(range_);
    }

    bool takes_device_maps() const override { return !cpu_; }

    void upload(const MapView& map, const HeatmapStyle& style, Stream stream_handle) override {
        if (map.width <= 0 || map.height <= 0 || !map.data) return;
        if (cpu_) {  // interop unavailable (see below): host maps go the CPU way
            cpu_->upload(map, style, stream_handle);
            return;
        }
        const auto stream = as_cuda(stream_handle);
        if (map.size() != tex_.size() && !resize(map.size())) {
            if (map.space == MemorySpace::kHost) cpu_->upload(map, style, stream_handle);
            return;
        }

        const float* src = map.data;
        std::size_t pitch = map.pitch;
        if (map.space == MemorySpace::kHost) {
            // A host map (CPU tracker, A/B): one async copy into the staging buffer (sized
            // once per map size), then the same kernel as for device maps; the GPU tracker's
            // device maps take no copy at all.
            ensure_staging(map.size());
            CORRTRACK_CUDA(cudaMemcpy2DAsync(staging_, staging_pitch_, map.data, map.pitch * sizeof(float),
                                             map.width * sizeof(float), map.height, cudaMemcpyHostToDevice, stream));
            src = staging_;
            pitch = staging_pitch_ / sizeof(float);
        }

        const cudaSurfaceObject_t surface = tex_.map(stream);
        if (style.stretch) map_range_kernel<<<1, kRangeThreads, 0, stream>>>(src, map.width, map.height, pitch, range_);
        const dim3 block(32, 8);
        const dim3 grid((map.width + block.x - 1) / block.x, (map.height + block.y - 1) / block.y);
        colormap_kernel<<<grid, block, 0, stream>>>(src, map.width, map.height, pitch, -1.0f, 1.0f,
                                                    style.stretch ? range_ : nullptr, colormap_index(style.colormap),
                                                    surface);
        CORRTRACK_CUDA_LAUNCHED();
        tex_.unmap(stream);
    }

    unsigned texture() const override { return cpu_ ? cpu_->texture() : tex_.texture(); }
    Size size() const override { return cpu_ ? cpu_->size() : tex_.size(); }

private:
    // False when CUDA refuses the GL context: then this sink falls back to the CPU sink for
    // good, so the GUI still shows heatmaps of host maps.
    bool resize(Size size) {
        if (tex_.resize(size, GL_NEAREST, "heatmaps take the CPU path")) return true;
        cpu_ = make_cpu_heatmap_sink();
        return false;
    }

    void ensure_staging(Size size) {
        if (staging_ && size == staging_size_) return;
        CORRTRACK_CUDA(cudaFree(staging_));
        staging_ = nullptr;
        CORRTRACK_CUDA(cudaMallocPitch(reinterpret_cast<void**>(&staging_), &staging_pitch_, size.width * sizeof(float),
                                       size.height));
        staging_size_ = size;
    }

    InteropTexture tex_;
    float* range_ = nullptr;  // stretch mode's min, max (device)
    float* staging_ = nullptr;
    std::size_t staging_pitch_ = 0;  // bytes
    Size staging_size_;
    std::unique_ptr<HeatmapSink> cpu_;  // set when interop is unavailable
};

}  // namespace

std::unique_ptr<HeatmapSink> make_cuda_heatmap_sink() { return std::make_unique<CudaHeatmapSink>(); }

std::unique_ptr<HeatmapSink> make_heatmap_sink() {
    if (cuda_available()) return make_cuda_heatmap_sink();
    return make_cpu_heatmap_sink();
}

}  // namespace corrtrack
