#include "app/io/host_buffer.h"

#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "corrtrack/correlator.h"
#include "corrtrack/cuda_util.h"

namespace corrtrack {

HostBuffer::HostBuffer() = default;
HostBuffer::~HostBuffer() { release(); }

HostBuffer::HostBuffer(const HostBuffer& other) { *this = other; }

HostBuffer& HostBuffer::operator=(const HostBuffer& other) {
    if (this == &other) return *this;
    resize(other.size_);
    if (other.size_) std::memcpy(data_, other.data_, other.size_);
    return *this;
}

HostBuffer::HostBuffer(HostBuffer&& other) noexcept { *this = std::move(other); }

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
    if (this == &other) return *this;
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
    pinned_ = std::move(other.pinned_);
    return *this;
}

void HostBuffer::release() {
    if (!data_) return;
    if (pinned_)
        pinned_.reset();
    else
        std::free(data_);
    data_ = nullptr;
    size_ = capacity_ = 0;
}

void HostBuffer::resize(std::size_t size) {
    if (size <= capacity_) {
        size_ = size;
        return;
    }
    // Growing keeps no contents: frames are rewritten whole after a resize.
    release();
    if (cuda_available()) {
        auto pinned = std::make_unique<PinnedBuffer<std::uint8_t>>(cudaHostAllocPortable);
        if (pinned->try_ensure(size)) {  // a failed pinned allocation falls back to pageable memory
            data_ = pinned->get();
            pinned_ = std::move(pinned);
        }
    }
    if (!data_) {
        data_ = static_cast<std::uint8_t*>(std::malloc(size));
        if (!data_) throw std::bad_alloc();
    }
    size_ = capacity_ = size;
}

void HostBuffer::assign(std::size_t size, std::uint8_t value) {
    resize(size);
    if (size) std::memset(data_, value, size);
}

}  // namespace corrtrack
