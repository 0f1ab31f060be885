#include "app/track/matcher.h"

#include <cuda_runtime.h>

#include <chrono>
#include <stdexcept>

#include "app/util/stats.h"
#include "corrtrack/cuda_util.h"

namespace corrtrack {
// Device-side state for CUDA kernels: the context's compute stream, events around the stages,
// device copies of the patch and the map, and a pinned host map. Buffers grow only when a shape
// needs more.
struct Matcher::Gpu {
    explicit Gpu(Stream s) : stream(s) {}
    Stream stream;
    CudaEvent start, uploaded, correlated, downloaded;
    std::uint8_t* d_patch = nullptr;
    std::size_t patch_pitch = 0;
    Size patch_capacity;
    DeviceBuffer<float> d_map;
    PinnedBuffer<float> h_map;

    ~Gpu() {
        cudaStreamSynchronize(as_cuda(stream));  // queued copies still target our buffers
        cudaFree(d_patch);
    }
    void ensure(Size patch, std::size_t map_floats) {
        if (patch.width > patch_capacity.width || patch.height > patch_capacity.height) {
            cudaFree(d_patch);
            patch_capacity = {std::max(patch.width, patch_capacity.width),
                              std::max(patch.height, patch_capacity.height)};
            CORRTRACK_CUDA(cudaMallocPitch(&d_patch, &patch_pitch, patch_capacity.width, patch_capacity.height));
        }
        d_map.ensure(map_floats);
        h_map.ensure(map_floats);
    }
};

Matcher::Matcher(const GpuContext& gpu) : context_(gpu) {}
Matcher::~Matcher() = default;

bool Matcher::set_kernel(const std::string& name, std::string* error) {
    std::string why;
    auto k = make_correlator(name, &why);
    if (!k) {
        if (error) *error = why;
        return false;
    }
    if (k->info().device == Device::kCuda && !context_.available()) {
        if (error) *error = "kernel " + name + " needs a CUDA GPU and this GPU context has none";
        return false;
    }
    kernel_ = std::move(k);
    name_ = name;
    on_gpu_ = kernel_->info().device == Device::kCuda;
    if (on_gpu_ && !gpu_) gpu_ = std::make_unique<Gpu>(context_.compute());
    templ_size_ = {};
    return true;
}

std::string Matcher::kernel_summary() const { return kernel_ ? kernel_->info().summary : ""; }

void Matcher::set_template(ImageView templ) {
    templ_size_ = templ.size();
    if (!on_gpu_) {
        kernel_->set_template(templ, nullptr);
        return;
    }
    kernel_->set_template(templ, gpu_->stream);
    // The stream is shared (the tracker's work may still be queued on it): match() is timed.
    CORRTRACK_CUDA(cudaStreamSynchronize(as_cuda(gpu_->stream)));
}

MapView Matcher::match(ImageView search, StageTimes* times) {
    NccProblem p = NccProblem::full_frame(search.size(), templ_size_);
    std::string why;
    if (!kernel_->supports(p, &why)) throw std::runtime_error("kernel " + name_ + " cannot run this search: " + why);
    const Size o = p.out_size();
    const std::size_t floats = static_cast<std::size_t>(o.width) * o.height;
    if (!on_gpu_) {
        if (map_.size() < floats) map_.resize(floats);
        const auto t0 = std::chrono::steady_clock::now();
        MapView out{map_.data(), o.width, o.height, static_cast<std::size_t>(o.width)};
        kernel_->run(search, p, out, nullptr);
        if (times) times->correlate_ms += ms_since(t0);
        return out;
    }
    Gpu& g = *gpu_;
    g.ensure(search.size(), floats);
    g.start.record(g.stream);
    CORRTRACK_CUDA(cudaMemcpy2DAsync(g.d_patch, g.patch_pitch, search.data, search.pitch, search.width, search.height,
                                     cudaMemcpyHostToDevice, as_cuda(g.stream)));
    g.uploaded.record(g.stream);
    const ImageView dev{g.d_patch, search.width, search.height, g.patch_pitch, MemorySpace::kDevice};
    kernel_->run(dev, p, {g.d_map.get(), o.width, o.height, static_cast<std::size_t>(o.width), MemorySpace::kDevice},
                 g.stream);
    g.correlated.record(g.stream);
    CORRTRACK_CUDA(cudaMemcpyAsync(g.h_map.get(), g.d_map.get(), floats * sizeof(float), cudaMemcpyDeviceToHost,
                                   as_cuda(g.stream)));
    g.downloaded.record(g.stream);
    g.downloaded.synchronize();
    float upload = 0, correlate = 0;
    cudaEventElapsedTime(&upload, g.start.get(), g.uploaded.get());
    cudaEventElapsedTime(&correlate, g.uploaded.get(), g.correlated.get());
    if (times) {
        times->upload_ms += upload;
        times->correlate_ms += correlate;
    }
    return {g.h_map.get(), o.width, o.height, static_cast<std::size_t>(o.width)};
}

}  // namespace corrtrack
