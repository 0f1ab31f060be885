// The bench's data: random frames and templates (host), their device copies and the output maps
// every run writes into, one per shape and memory space.
// random_image here is the bench's own generator, moved from app/cli/bench_command.cpp as it
// was: it makes different bytes from tests/support/random_image.h's (which the kernel tests
// use), and must keep making the same ones, so that a --seed means the same data as in every
// committed bench result.
// Thread rules: each object is used by one thread at a time (the bench's main thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "corrtrack/image.h"

namespace corrtrack::bench {

struct HostImage {
    std::vector<std::uint8_t> bytes;
    Size size;
    std::size_t pitch = 0;
    ImageView view() const { return {bytes.data(), size.width, size.height, pitch, MemorySpace::kHost}; }
};

// Random bytes from mt19937 (specified bit for bit by the standard), so a seed means the same
// data everywhere; rows padded to a multiple of `align` bytes. Random templates are
// asymmetric, which is what every kernel must handle.
HostImage random_image(Size s, std::uint32_t seed, std::size_t align);

// A pitched device copy of a host image (cudaMallocPitch).
class DeviceImage {
public:
    explicit DeviceImage(const HostImage& host);
    ~DeviceImage();
    DeviceImage(const DeviceImage&) = delete;
    DeviceImage& operator=(const DeviceImage&) = delete;
    ImageView view() const { return {ptr_, size_.width, size_.height, pitch_, MemorySpace::kDevice}; }

private:
    Size size_;
    std::uint8_t* ptr_ = nullptr;
    std::size_t pitch_ = 0;
};

// Output maps, one per output shape and memory space, reused by every run of that shape.
class MapStore {
public:
    MapStore() = default;
    ~MapStore() { clear(); }
    MapStore(const MapStore&) = delete;
    MapStore& operator=(const MapStore&) = delete;

    MapView get(Size shape, bool device);
    void clear();

private:
    struct Entry {
        float* data = nullptr;
        std::size_t pitch = 0;
        std::vector<float> host;
    };
    std::map<std::tuple<int, int, bool>, Entry> maps_;
};

}  // namespace corrtrack::bench
