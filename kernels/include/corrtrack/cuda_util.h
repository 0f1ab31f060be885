// The kernel library's public CUDA utilities, for every GPU path outside kernels/ (app, render,
// python, tests) as well as the kernels themselves: error checks that name the failing call
// (CORRTRACK_CUDA, CORRTRACK_CUDA_LAUNCHED, CORRTRACK_CUFFT), the Stream <-> cudaStream_t
// conversion, device and pinned host buffers that grow once per shape, stream and event RAII
// and a GPU timer. The kernels' private pieces (template upload, tiles, integral tables) stay in
// kernels/cuda/ and are not reachable from outside the library.
// Needs the CUDA runtime headers (CUDA::cudart); CPU-only code includes corrtrack/image.h alone.
// Thread rules: the check functions are stateless; an object here is used by one thread at a
// time; nothing synchronizes the device unless its name says so (synchronize, elapsed_ms).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "corrtrack/image.h"

namespace corrtrack {

[[noreturn]] inline void cuda_fail(cudaError_t err, const char* call, const char* file, int line) {
    throw std::runtime_error(std::string("CUDA error ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) +
                             ") in " + call + " at " + file + ":" + std::to_string(line));
}

// cuFFT reports a cufftResult; taken as int so this header needs no cufft.h.
[[noreturn]] inline void cufft_fail(int result, const char* call, const char* file, int line) {
    static const char* const kNames[] = {"CUFFT_SUCCESS",
                                         "CUFFT_INVALID_PLAN",
                                         "CUFFT_ALLOC_FAILED",
                                         "CUFFT_INVALID_TYPE",
                                         "CUFFT_INVALID_VALUE",
                                         "CUFFT_INTERNAL_ERROR",
                                         "CUFFT_EXEC_FAILED",
                                         "CUFFT_SETUP_FAILED",
                                         "CUFFT_INVALID_SIZE",
                                         "CUFFT_UNALIGNED_DATA",
                                         "CUFFT_INCOMPLETE_PARAMETER_LIST",
                                         "CUFFT_INVALID_DEVICE",
                                         "CUFFT_PARSE_ERROR",
                                         "CUFFT_NO_WORKSPACE",
                                         "CUFFT_NOT_IMPLEMENTED",
                                         "CUFFT_LICENSE_ERROR",
                                         "CUFFT_NOT_SUPPORTED",
                                         "CUFFT_MISSING_DEPENDENCY",
                                         "CUFFT_NVRTC_FAILURE",
                                         "CUFFT_NVJITLINK_FAILURE",
                                         "CUFFT_NVSHMEM_FAILURE"};
    const bool known = result >= 0 && result < static_cast<int>(sizeof kNames / sizeof kNames[0]);
    throw std::runtime_error(std::string("cuFFT error ") + (known ? kNames[result] : "unknown") + " (" +
                             std::to_string(result) + ") in " + call + " at " + file + ":" + std::to_string(line));
}

}  // namespace corrtrack

// Every runtime call goes through CORRTRACK_CUDA (and every cuFFT call through CORRTRACK_CUFFT)
// so that a failure names the call, file and line.
#define CORRTRACK_CUDA(call)                                                                                  \
    do {                                                                                                      \
        const cudaError_t corrtrack_err_ = (call);                                                            \
        if (corrtrack_err_ != cudaSuccess) ::corrtrack::cuda_fail(corrtrack_err_, #call, __FILE__, __LINE__); \
    } while (0)

// After a launch: catches bad configurations at once (asynchronous faults surface later).
#define CORRTRACK_CUDA_LAUNCHED() CORRTRACK_CUDA(cudaGetLastError())

#define CORRTRACK_CUFFT(call)                                                                                \
    do {                                                                                                     \
        const int corrtrack_fft_err_ = static_cast<int>(call);                                               \
        if (corrtrack_fft_err_ != 0) ::corrtrack::cufft_fail(corrtrack_fft_err_, #call, __FILE__, __LINE__); \
    } while (0)

namespace corrtrack {

// The one stream type at interfaces is Stream (corrtrack/image.h); CUDA calls take this.
inline cudaStream_t as_cuda(Stream s) { return static_cast<cudaStream_t>(s); }

// The capacity a buffer's grow() takes: a quarter more than asked at the first allocation, at
// least twice the old capacity after, so that sizes creeping up frame by frame (windows that
// follow their targets' speed, targets added one by one) reallocate a few times, not at every
// new maximum (a cudaFree waits for the whole device).
inline std::size_t grown_capacity(std::size_t count, std::size_t capacity) {
    return std::max(count + count / 4, 2 * capacity);
}

// Device memory that only reallocates when it must grow (never per frame at a fixed shape).
template <typename T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    ~DeviceBuffer() {
        if (ptr_) cudaFree(ptr_);
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    T* ensure(std::size_t count) {
        if (count > capacity_) {
            if (ptr_) CORRTRACK_CUDA(cudaFree(ptr_));
            ptr_ = nullptr;
            CORRTRACK_CUDA(cudaMalloc(&ptr_, count * sizeof(T)));
            capacity_ = count;
        }
        return ptr_;
    }
    // As ensure(), with headroom where it must grow (grown_capacity).
    T* grow(std::size_t count) { return count > capacity_ ? ensure(grown_capacity(count, capacity_)) : ptr_; }
    T* get() const { return ptr_; }
    std::size_t capacity() const { return capacity_; }

private:
    T* ptr_ = nullptr;
    std::size_t capacity_ = 0;
};

// Page-locked host memory (cudaHostAlloc), grown like DeviceBuffer: the host end of async copies.
// `flags` are cudaHostAlloc's: cudaHostAllocMapped also maps it into the device's address space
// (device() is the alias kernels write through: no copy call, no copy on a stream);
// cudaHostAllocPortable makes it pinned for every CUDA context. Movable, not copyable.
template <typename T>
class PinnedBuffer {
public:
    explicit PinnedBuffer(unsigned flags = cudaHostAllocDefault) : flags_(flags) {}
    ~PinnedBuffer() { release(); }
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    PinnedBuffer(PinnedBuffer&& other) noexcept { *this = static_cast<PinnedBuffer&&>(other); }
    PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
        if (this == &other) return *this;
        release();
        flags_ = other.flags_;
        ptr_ = other.ptr_;
        device_ = other.device_;
        capacity_ = other.capacity_;
        other.ptr_ = other.device_ = nullptr;
        other.capacity_ = 0;
        return *this;
    }
    // Grows to `count` elements (contents are not kept); throws on a CUDA error.
    T* ensure(std::size_t count) {
        if (count > capacity_) {
            release();
            T* p = nullptr;
            CORRTRACK_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&p), count * sizeof(T), flags_));
            ptr_ = p;  // held from here: freed on a throw below too
            capacity_ = count;
            if (flags_ & cudaHostAllocMapped)
                CORRTRACK_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_), ptr_, 0));
        }
        return ptr_;
    }
    // As ensure(), with headroom where it must grow (grown_capacity).
    T* grow(std::size_t count) { return count > capacity_ ? ensure(grown_capacity(count, capacity_)) : ptr_; }
    // As ensure(), for callers with a fallback: false, holding nothing and with the CUDA error
    // cleared, where the allocation fails.
    bool try_ensure(std::size_t count) noexcept {
        if (count <= capacity_) return true;
        release();
        T* p = nullptr;
        T* d = nullptr;
        if (cudaHostAlloc(reinterpret_cast<void**>(&p), count * sizeof(T), flags_) != cudaSuccess) p = nullptr;
        if (p && (flags_ & cudaHostAllocMapped) &&
            cudaHostGetDevicePointer(reinterpret_cast<void**>(&d), p, 0) != cudaSuccess) {
            cudaFreeHost(p);
            p = nullptr;
        }
        if (!p) {
            cudaGetLastError();  // not sticky: later calls must not see it
            return false;
        }
        ptr_ = p;
        device_ = d;
        capacity_ = count;
        return true;
    }
    void release() noexcept {
        if (ptr_) cudaFreeHost(ptr_);
        ptr_ = device_ = nullptr;
        capacity_ = 0;
    }
    T* get() const { return ptr_; }
    T* device() const { return device_; }  // the device's alias of get() (mapped), else nullptr
    std::size_t capacity() const { return capacity_; }

private:
    unsigned flags_;
    T* ptr_ = nullptr;
    T* device_ = nullptr;
    std::size_t capacity_ = 0;
};

// An owned CUDA stream, non-blocking by default (it does not wait on the legacy default stream).
class CudaStream {
public:
    explicit CudaStream(unsigned flags = cudaStreamNonBlocking) {
        CORRTRACK_CUDA(cudaStreamCreateWithFlags(&stream_, flags));
    }
    ~CudaStream() {
        if (stream_) cudaStreamDestroy(stream_);
    }
    CudaStream(const CudaStream&) = delete;
    CudaStream& operator=(const CudaStream&) = delete;
    Stream get() const { return stream_; }         // for interfaces
    cudaStream_t cuda() const { return stream_; }  // for CUDA calls
    void synchronize() const { CORRTRACK_CUDA(cudaStreamSynchronize(stream_)); }

private:
    cudaStream_t stream_ = nullptr;
};

// An owned CUDA event; cudaEventDisableTiming for pure ordering (cheaper), default for timing.
class CudaEvent {
public:
    explicit CudaEvent(unsigned flags = cudaEventDefault) { CORRTRACK_CUDA(cudaEventCreateWithFlags(&event_, flags)); }
    ~CudaEvent() {
        if (event_) cudaEventDestroy(event_);
    }
    CudaEvent(const CudaEvent&) = delete;
    CudaEvent& operator=(const CudaEvent&) = delete;
    cudaEvent_t get() const { return event_; }
    void record(Stream s) { CORRTRACK_CUDA(cudaEventRecord(event_, as_cuda(s))); }
    // Makes `s` wait on the device (not the host) for the last record.
    void wait_on(Stream s) const { CORRTRACK_CUDA(cudaStreamWaitEvent(as_cuda(s), event_, 0)); }
    void synchronize() const { CORRTRACK_CUDA(cudaEventSynchronize(event_)); }
    bool done() const { return cudaEventQuery(event_) == cudaSuccess; }
    // Milliseconds between two recorded timing events (both must have completed).
    static double elapsed_ms(const CudaEvent& from, const CudaEvent& to) {
        float ms = 0;
        CORRTRACK_CUDA(cudaEventElapsedTime(&ms, from.event_, to.event_));
        return ms;
    }

private:
    cudaEvent_t event_ = nullptr;
};

// Device time of the work queued on a stream between start() and stop(), by two events.
class GpuTimer {
public:
    void start(Stream s) { start_.record(s); }
    void stop(Stream s) { stop_.record(s); }
    // Waits for stop() on the host, then returns the milliseconds between the two.
    double elapsed_ms() const {
        stop_.synchronize();
        return CudaEvent::elapsed_ms(start_, stop_);
    }

private:
    CudaEvent start_, stop_;
};

}  // namespace corrtrack
