#include "render/frame_sink_cuda.h"
#include "render/interop_texture.h"

// GLEW before cuda_gl_interop.h (which includes GL/gl.h).
#include <GL/glew.h>
#include <cuda_gl_interop.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "corrtrack/correlator.h"
#include "corrtrack/cuda_util.h"
#include "render/yuv_rgb.h"

namespace corrtrack {
namespace {

// One thread per pixel; the UV pair of its 2x2 block (nearest chroma). No uv: grey.
__global__ void nv12_to_rgba_kernel(const std::uint8_t* __restrict__ y_plane, std::size_t y_pitch,
                                    const std::uint8_t* __restrict__ uv_plane, std::size_t uv_pitch, int width,
                                    int height, YuvToRgb k, cudaSurfaceObject_t out) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    const int luma = y_plane[static_cast<std::size_t>(y) * y_pitch + x];
    int u = 128, v = 128;
    if (uv_plane) {
        const std::uint8_t* c = uv_plane + static_cast<std::size_t>(y / 2) * uv_pitch + (x / 2) * 2;
        u = c[0];
        v = c[1];
    }
    std::uint8_t px[4];
    yuv_to_rgba(luma, u, v, k, px);
    surf2Dwrite(make_uchar4(px[0], px[1], px[2], px[3]), out, x * static_cast<int>(sizeof(uchar4)), y);
}

class CudaFrameSink final : public FrameSink {
public:
    CudaFrameSink() : cpu_(make_cpu_frame_sink()) { interop_ = resize({16, 16}); }

    void upload_rgb(const std::uint8_t* rgb, Size size) override {
        cpu_->upload_rgb(rgb, size);
        use_cpu_ = true;
    }

    bool upload_nv12(const Nv12Planes& p, Stream stream_handle) override {
        if (p.width <= 0 || p.height <= 0 || !p.y) return false;
        const auto stream = as_cuda(stream_handle);
        const YuvToRgb k = yuv_to_rgb_coefficients(p.matrix, p.full_range);
        if (interop_ && Size{p.width, p.height} != tex_.size() && !resize({p.width, p.height})) interop_ = false;
        if (!interop_) return upload_through_host(p, k, stream_handle);

        const cudaSurfaceObject_t surface = tex_.map(stream);
        const dim3 block(32, 8);
        const dim3 grid((p.width + block.x - 1) / block.x, (p.height + block.y - 1) / block.y);
        nv12_to_rgba_kernel<<<grid, block, 0, stream>>>(p.y, p.y_pitch, p.uv, p.uv_pitch, p.width, p.height, k,
                                                        surface);
        CORRTRACK_CUDA_LAUNCHED();
        tex_.unmap(stream);
        use_cpu_ = false;
        return true;
    }

    bool takes_device_frames() const override { return interop_; }
    unsigned texture() const override { return use_cpu_ ? cpu_->texture() : tex_.texture(); }
    Size size() const override { return use_cpu_ ? cpu_->size() : tex_.size(); }
    const char* path() const override { return use_cpu_ ? cpu_->path() : "CUDA-GL interop (NV12 -> RGBA on the GPU)"; }

private:
    // False when CUDA refuses the GL context, e.g. GL runs in software or on another GPU.
    bool resize(Size size) { return tex_.resize(size, GL_LINEAR, "video frames take the texture upload path"); }

    // Without interop: both planes to the host on the stream, one wait, the same arithmetic.
    bool upload_through_host(const Nv12Planes& p, const YuvToRgb& k, Stream stream_handle) {
        const auto stream = as_cuda(stream_handle);
        const int cw = (p.width + 1) / 2, ch = (p.height + 1) / 2;
        y_.resize(static_cast<std::size_t>(p.width) * p.height);
        uv_.resize(static_cast<std::size_t>(cw) * 2 * ch);
        CORRTRACK_CUDA(
            cudaMemcpy2DAsync(y_.data(), p.width, p.y, p.y_pitch, p.width, p.height, cudaMemcpyDeviceToHost, stream));
        if (p.uv)
            CORRTRACK_CUDA(
                cudaMemcpy2DAsync(uv_.data(), cw * 2, p.uv, p.uv_pitch, cw * 2, ch, cudaMemcpyDeviceToHost, stream));
        CORRTRACK_CUDA(cudaStreamSynchronize(stream));
        rgb_.resize(y_.size() * 3);
        for (int y = 0; y < p.height; ++y)
            for (int x = 0; x < p.width; ++x) {
                const std::size_t c = static_cast<std::size_t>(y / 2) * cw * 2 + (x / 2) * 2;
                std::uint8_t px[4];
                yuv_to_rgba(y_[static_cast<std::size_t>(y) * p.width + x], p.uv ? uv_[c] : 128, p.uv ? uv_[c + 1] : 128,
                            k, px);
                std::copy(px, px + 3, &rgb_[(static_cast<std::size_t>(y) * p.width + x) * 3]);
            }
        upload_rgb(rgb_.data(), {p.width, p.height});
        return true;
    }

    std::unique_ptr<FrameSink> cpu_;
    bool use_cpu_ = true;  // the last frame went through cpu_
    bool interop_ = false;
    InteropTexture tex_;
    std::vector<std::uint8_t> y_, uv_, rgb_;  // the host fallback's planes and pixels
};

}  // namespace

std::unique_ptr<FrameSink> make_cuda_frame_sink() { return std::make_unique<CudaFrameSink>(); }

std::unique_ptr<FrameSink> make_frame_sink() {
    if (cuda_available()) return make_cuda_frame_sink();
    return make_cpu_frame_sink();
}

}  // namespace corrtrack
