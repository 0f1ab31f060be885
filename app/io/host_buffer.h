// Byte buffers for decoded frames: page-locked (a portable PinnedBuffer, corrtrack/cuda_util.h)
// when a GPU is present, so that the tracker's cudaMemcpy2DAsync from a frame slot is a true
// asynchronous DMA; plain heap memory otherwise, or where pinned memory cannot be had. Memory
// only grows: resize() to a size already held never reallocates.
// Thread rules: a plain value type; one thread uses a buffer at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace corrtrack {

template <typename T>
class PinnedBuffer;

class HostBuffer {
public:
    HostBuffer();
    ~HostBuffer();
    HostBuffer(const HostBuffer& other);
    HostBuffer& operator=(const HostBuffer& other);  // reuses this buffer's memory if it fits
    HostBuffer(HostBuffer&& other) noexcept;
    HostBuffer& operator=(HostBuffer&& other) noexcept;

    void resize(std::size_t size);
    void assign(std::size_t size, std::uint8_t value);
    void clear() { size_ = 0; }

    std::uint8_t* data() { return data_; }
    const std::uint8_t* data() const { return data_; }
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    bool pinned() const { return pinned_ != nullptr; }
    std::uint8_t& operator[](std::size_t i) { return data_[i]; }
    const std::uint8_t& operator[](std::size_t i) const { return data_[i]; }
    std::uint8_t* begin() { return data_; }
    std::uint8_t* end() { return data_ + size_; }
    const std::uint8_t* begin() const { return data_; }
    const std::uint8_t* end() const { return data_ + size_; }

private:
    void release();
    std::uint8_t* data_ = nullptr;  // pinned_'s memory, or malloc'd
    std::size_t size_ = 0, capacity_ = 0;
    std::unique_ptr<PinnedBuffer<std::uint8_t>> pinned_;  // held while data_ is pinned
};

}  // namespace corrtrack
