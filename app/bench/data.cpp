#include "app/bench/data.h"

#include <random>

#include "corrtrack/cuda_util.h"

namespace corrtrack::bench {

HostImage random_image(Size s, std::uint32_t seed, std::size_t align) {
    HostImage img;
    img.size = s;
    img.pitch = (static_cast<std::size_t>(s.width) + align - 1) / align * align;
    img.bytes.resize(img.pitch * s.height);
    std::mt19937 rng(seed ^ (static_cast<std::uint32_t>(s.width) * 73856093u) ^
                     (static_cast<std::uint32_t>(s.height) * 19349663u));
    for (std::uint8_t& b : img.bytes) b = static_cast<std::uint8_t>(rng() >> 24);
    return img;
}

DeviceImage::DeviceImage(const HostImage& host) : size_(host.size) {
    CORRTRACK_CUDA(cudaMallocPitch(reinterpret_cast<void**>(&ptr_), &pitch_, size_.width, size_.height));
    CORRTRACK_CUDA(
        cudaMemcpy2D(ptr_, pitch_, host.bytes.data(), host.pitch, size_.width, size_.height, cudaMemcpyHostToDevice));
}

DeviceImage::~DeviceImage() { cudaFree(ptr_); }

MapView MapStore::get(Size shape, bool device) {
    Entry& e = maps_[{shape.width, shape.height, device}];
    if (!e.data) {
        if (device) {
            std::size_t pitch_bytes = 0;
            CORRTRACK_CUDA(cudaMallocPitch(reinterpret_cast<void**>(&e.data), &pitch_bytes, shape.width * sizeof(float),
                                           shape.height));
            e.pitch = pitch_bytes / sizeof(float);
        } else {
            e.pitch = static_cast<std::size_t>(shape.width);
            e.host.resize(e.pitch * shape.height);
            e.data = e.host.data();
        }
    }
    return {e.data, shape.width, shape.height, e.pitch, device ? MemorySpace::kDevice : MemorySpace::kHost};
}

void MapStore::clear() {
    for (auto& [key, e] : maps_)
        if (std::get<2>(key) && e.data) cudaFree(e.data);
    maps_.clear();
}

}  // namespace corrtrack::bench
