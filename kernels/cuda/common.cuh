// Shared pieces of the CUDA kernels (device buffers, checks, streams: corrtrack/cuda_util.h):
// the template upload (host copy for the exact statistics, pinned staging, async copy on the
// caller's stream) and the common Correlator plumbing.
// Thread rules: owned by one Correlator, used from the thread that drives it; every copy and
// launch goes on the stream the caller passes; nothing here synchronizes the device except
// TemplateUpload, which waits (rarely) for its own previous staging copy to finish.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "corrtrack/correlator.h"
#include "corrtrack/ncc_math.h"
#include "corrtrack/cuda_util.h"
#include "cpu/integral.h"

namespace corrtrack {

// Exact template sums, as the kernels need them (per template when several are stacked).
struct DeviceTemplateStats {
    std::int64_t n, sum, sum_sq;
};

// The problem a kernel's run() last queued launches for: its workspaces and shared-memory
// attributes are then set for it, so running it again only queues launches, which a CUDA
// graph may capture (Correlator::capturable).
class RanProblem {
public:
    void note(const NccProblem& p) {
        last_ = p;
        valid_ = true;
    }
    bool same(const NccProblem& p) const { return valid_ && last_ == p; }

private:
    NccProblem last_;
    bool valid_ = false;
};

// Template(s) in device memory, packed rows (pitch == width), plus their exact statistics.
// Accepts host or device source views (cudaMemcpyDefault); templates stack vertically.
class TemplateUpload {
public:
    ~TemplateUpload() {
        if (staging_) cudaFreeHost(staging_);
        if (copied_) cudaEventDestroy(copied_);
    }
    // templ_height < templ.height means templ.height / templ_height templates stacked vertically.
    void set(ImageView templ, int templ_height, Stream stream) {
        width_ = templ.width;
        height_ = templ_height;
        count_ = templ.height / templ_height;
        const std::size_t bytes = static_cast<std::size_t>(templ.width) * templ.height;
        if (!copied_) CORRTRACK_CUDA(cudaEventCreateWithFlags(&copied_, cudaEventDisableTiming));
        if (bytes > staging_bytes_) {
            // Headroom: a tracker's stack grows a template at a time as targets are added.
            const std::size_t capacity = grown_capacity(bytes, staging_bytes_);
            if (staging_) CORRTRACK_CUDA(cudaFreeHost(staging_));
            staging_ = nullptr;
            staging_bytes_ = 0;
            CORRTRACK_CUDA(cudaHostAlloc(&staging_, capacity, cudaHostAllocDefault));
            staging_bytes_ = capacity;
        }
        // The previous upload may still read the staging buffer.
        CORRTRACK_CUDA(cudaEventSynchronize(copied_));
        if (templ.space == MemorySpace::kHost) {
            // The per-frame case (the tracker's blended template): a plain copy, no CUDA call
            // that could wait on the legacy default stream.
            if (templ.pitch == static_cast<std::size_t>(templ.width))
                std::memcpy(staging_, templ.data, bytes);
            else
                for (int y = 0; y < templ.height; ++y)
                    std::memcpy(staging_ + static_cast<std::size_t>(y) * templ.width, templ.row(y), templ.width);
        } else {
            // A template cut from a device frame: copy on the caller's stream, after whatever
            // wrote it there, and wait for it (the exact statistics are computed on the host).
            CORRTRACK_CUDA(cudaMemcpy2DAsync(staging_, templ.width, templ.data, templ.pitch, templ.width, templ.height,
                                             cudaMemcpyDeviceToHost, as_cuda(stream)));
            CORRTRACK_CUDA(cudaStreamSynchronize(as_cuda(stream)));
        }
        stats_valid_ = false;
        device_.grow(bytes);
        CORRTRACK_CUDA(cudaMemcpyAsync(device_.get(), staging_, bytes, cudaMemcpyHostToDevice, as_cuda(stream)));
        CORRTRACK_CUDA(cudaEventRecord(copied_, as_cuda(stream)));
    }
    const std::uint8_t* device() const { return device_.get(); }
    // The packed host copy of the last set(): valid until the next set().
    const std::uint8_t* host() const { return staging_; }
    // Exact statistics of template k, computed on first use after a set(): batched runs read
    // theirs from a device prefix instead, so a stack of hundreds of templates skips this.
    const DeviceTemplateStats& stats(int k = 0) const {
        if (!stats_valid_) {
            stats_.resize(count_);
            const std::size_t area = static_cast<std::size_t>(width_) * height_;
            for (int i = 0; i < count_; ++i) {
                const TemplateStats t =
                    template_stats({staging_ + i * area, width_, height_, static_cast<std::size_t>(width_)});
                stats_[i] = {t.n, t.sum, t.sum_sq};
            }
            stats_valid_ = true;
        }
        return stats_[k];
    }
    int width() const { return width_; }
    int height() const { return height_; }
    int count() const { return count_; }

private:
    int width_ = 0, height_ = 0, count_ = 0;
    std::uint8_t* staging_ = nullptr;
    std::size_t staging_bytes_ = 0;
    cudaEvent_t copied_ = nullptr;
    mutable std::vector<DeviceTemplateStats> stats_;
    mutable bool stats_valid_ = false;
    DeviceBuffer<std::uint8_t> device_;
};

// What every CUDA kernel checks before running: the shared problem rules, device memory for
// frame and output, and its own template limits.
inline bool cuda_supports_common(const NccProblem& p, std::string* why) {
    std::string err = validate_problem(p);
    if (why) *why = err;
    return err.empty();
}

}  // namespace corrtrack
