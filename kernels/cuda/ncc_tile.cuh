// Pieces shared by the direct NCC kernels (corr_tex.cu, corr_shared.cu, corr_dp4a.cu): kernel
// arguments, run() argument checks, shared-memory tile staging and the shared-memory limit.
// Thread rules: device helpers are called by every thread of a block between barriers; host
// helpers belong to one Correlator and run on the thread that drives it; nothing synchronizes.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "corrtrack/correlator.h"
#include "corrtrack/cuda_util.h"
#include "cuda/common.cuh"
#include "cuda/cuda_kernels.h"

namespace corrtrack {
// Nested so that these names cannot meet another kernel family's helpers (ODR).
namespace direct {

// Everything a direct NCC kernel needs, by value (one kernel parameter).
struct NccArgs {
    const std::uint8_t* frame;  // device frame, row 0
    std::size_t frame_pitch;    // bytes
    int frame_width;            // columns that may be read: [0, frame_width)
    int roi_x, roi_y, roi_w, roi_h;
    int tw, th;               // template size
    float* out;               // device map, valid positions only
    std::size_t out_pitch;    // floats
    int out_w, out_h;         // one map; a batch stacks `templates` of them
    std::int64_t n, st, stt;  // template pixel count and exact sums (of the whole stack)
    int templates;            // templates stacked in the template and the output
    int roi_step;             // rows between the rois of successive templates
};

// Grid rows are 8 outputs high in every direct kernel; gridDim.y is capped at 65535.
constexpr int kNccMaxOutHeight = 65535 * 8;
// Batched direct kernels put the template on gridDim.z.
constexpr int kNccMaxTemplates = 65535;

// supports() of the direct kernels: the shared rules, a launchable grid, and one template
// unless the kernel runs batches (`batches`: up to kNccMaxTemplates, any template_roi_step).
inline bool ncc_direct_supports(const NccProblem& p, std::string* why, bool batches = false) {
    if (!cuda_supports_common(p, why)) return false;
    if (p.templates != 1 && !batches) {
        if (why) *why = "batched templates (templates > 1) are not supported by this kernel";
        return false;
    }
    if (p.templates > kNccMaxTemplates) {
        if (why) *why = "more than " + std::to_string(kNccMaxTemplates) + " templates in one pass";
        return false;
    }
    if (p.out_size().height > kNccMaxOutHeight) {
        if (why) *why = "output taller than " + std::to_string(kNccMaxOutHeight) + " rows";
        return false;
    }
    return true;
}

// Refuses (throws) what run() must not compute and fills the kernel arguments. Frame and output
// must be device (or managed) memory: the pointers are checked, not the views' `space` labels,
// and only when they change, so a fixed ring of buffers costs no driver call per frame.
class NccRunCheck {
public:
    NccArgs args(const Correlator& k, const TemplateUpload& t, ImageView frame, const NccProblem& p, MapView out) {
        const auto named = [&k](const std::string& what) { return k.info().name + ": " + what; };
        std::string why;
        if (!k.supports(p, &why)) throw std::invalid_argument(named(why));
        // A batch's templates arrive as one stacked image (set_template cannot know the split).
        const int stack_height = p.templ.height * p.templates;
        if (t.count() != 1 || t.width() != p.templ.width || t.height() != stack_height)
            throw std::logic_error(named("run() needs set_template() with a " + std::to_string(p.templ.width) + "x" +
                                         std::to_string(stack_height) +
                                         (p.templates > 1 ? " stack of " + std::to_string(p.templates) + " templates"
                                                          : std::string(" template")) +
                                         " first"));
        if (frame.width != p.frame.width || frame.height != p.frame.height ||
            frame.pitch < static_cast<std::size_t>(frame.width))
            throw std::invalid_argument(named("frame view does not match the problem's frame size"));
        const Size o = p.out_size();
        if (out.width < o.width || out.height < o.height * p.templates || out.pitch < static_cast<std::size_t>(o.width))
            throw std::invalid_argument(named("output view smaller than the problem's output"));
        if (frame.data != checked_frame_) {
            require_device(frame.data, named("frame"));
            checked_frame_ = frame.data;
        }
        if (out.data != checked_out_) {
            require_device(out.data, named("output"));
            checked_out_ = out.data;
        }
        // A batch's kernels take each template's sums from the device prefix: the stack's are unused.
        const DeviceTemplateStats s = p.templates == 1 ? t.stats() : DeviceTemplateStats{0, 0, 0};
        return NccArgs{frame.data,   frame.pitch,   frame.width,    p.roi.x,  p.roi.y,     p.roi.width,
                       p.roi.height, p.templ.width, p.templ.height, out.data, out.pitch,   o.width,
                       o.height,     s.n,           s.sum,          s.sum_sq, p.templates, p.template_roi_step};
    }

private:
    static void require_device(const void* ptr, const std::string& what) {
        if (ptr == nullptr) throw std::invalid_argument(what + " is null");
        cudaPointerAttributes a{};
        CORRTRACK_CUDA(cudaPointerGetAttributes(&a, ptr));
        if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged)
            throw std::invalid_argument(what + " must be in device memory");
    }
    const void* checked_frame_ = nullptr;
    const void* checked_out_ = nullptr;
};

// Dynamic shared memory beyond the default 48 KB needs a per-kernel opt-in. The kernels using
// this have no static shared memory, so the whole opt-in limit is theirs.
class SmemLimit {
public:
    // True when `kernel` may launch with `bytes` of dynamic shared memory on the current device;
    // raises the kernel's limit to the device's opt-in maximum the first time it is needed.
    bool allow(const void* kernel, std::size_t bytes) {
        if (bytes <= kDefaultBytes) return true;
        if (optin_ < 0) {
            int dev = 0;
            CORRTRACK_CUDA(cudaGetDevice(&dev));
            CORRTRACK_CUDA(cudaDeviceGetAttribute(&optin_, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        }
        if (bytes > static_cast<std::size_t>(optin_)) return false;
        for (const void* k : raised_)
            if (k == kernel) return true;
        CORRTRACK_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin_));
        raised_.push_back(kernel);
        return true;
    }

private:
    static constexpr std::size_t kDefaultBytes = 48 * 1024;
    int optin_ = -1;
    std::vector<const void*> raised_;
};

// Problems whose tile does not fit in shared memory (only on GPUs with a small opt-in limit:
// an H200 fits every tile up to 256x256 templates) run through cuda_tex instead, which needs
// none. Created on first use; it gets the template from the host copy the upload keeps. A
// batch runs one template at a time (cuda_tex takes one), through one cuda_tex per template
// so that each keeps its template between frames.
class TexFallback {
public:
    void template_changed() { stale_.assign(stale_.size(), true); }
    void run(const TemplateUpload& t, ImageView frame, const NccProblem& p, MapView out, Stream s) {
        if (p.templ != split_) {
            template_changed();
            split_ = p.templ;
        }
        while (impls_.size() < static_cast<std::size_t>(p.templates)) {
            impls_.push_back(make_cuda_tex());
            stale_.push_back(true);
        }
        const Size o = p.out_size();
        const std::size_t templ_bytes = static_cast<std::size_t>(p.templ.width) * p.templ.height;
        NccProblem one = p;
        one.templates = 1;
        one.template_roi_step = 0;
        for (int k = 0; k < p.templates; ++k) {
            if (stale_[k]) {
                const ImageView host{t.host() + k * templ_bytes, p.templ.width, p.templ.height,
                                     static_cast<std::size_t>(p.templ.width), MemorySpace::kHost};
                impls_[k]->set_template(host, s);
                stale_[k] = false;
            }
            one.roi = p.roi_of(k);
            MapView map = out;
            map.data = out.row(k * o.height);
            map.height = o.height;
            impls_[k]->run(frame, one, map, s);
        }
    }

private:
    std::vector<std::unique_ptr<Correlator>> impls_;
    std::vector<bool> stale_;
    Size split_;
};

inline int round_up(int v, int m) { return (v + m - 1) / m * m; }

// A block's frame rectangle: what to stage, already clamped to the roi (bytes past the roi are
// never used by a valid output, and the roi lies inside the frame).
struct TileSource {
    const std::uint8_t* frame;
    std::size_t pitch;
    int frame_width;
    int x0, y0;      // frame coordinates of the tile's first byte
    int cols, rows;  // needed bytes per row and rows
};

// Stages src into `tile` (tile_pitch bytes per row, 16-byte aligned rows) with V-byte loads
// (V = 1, 4 or 16) from the V-aligned address at or below each row's first byte: tile byte
// (r, phase + b) = frame(x0 + b, y0 + r) for b < cols, where phase = address(frame(x0, y0)) % V
// is the same for every row because the launcher picks V only when the pitch is a multiple of
// V. A chunk is loaded whole when it lies inside the frame row, else byte by byte (bytes
// outside the row are written as 0), so nothing outside the frame is read.
// Needs tile_pitch >= round_up(phase + cols, V).
template <int V>
__device__ __forceinline__ void stage_tile_aligned(const TileSource& src, std::uint8_t* tile, int tile_pitch,
                                                   int phase) {
    static_assert(V == 1 || V == 4 || V == 16, "V is a load width in bytes");
    const int chunks = (phase + src.cols + V - 1) / V;
    const int total = chunks * src.rows;
    const int nthreads = blockDim.x * blockDim.y;
    for (int idx = threadIdx.y * blockDim.x + threadIdx.x; idx < total; idx += nthreads) {
        const int r = idx / chunks;
        const int c = idx - r * chunks;
        const std::uint8_t* row = src.frame + static_cast<std::size_t>(src.y0 + r) * src.pitch;
        const int col = src.x0 - phase + c * V;  // V-aligned address; < 0 only if the row start is unaligned
        std::uint8_t* dst = tile + r * tile_pitch + c * V;
        if (col >= 0 && col + V <= src.frame_width) {
            if constexpr (V == 16)
                *reinterpret_cast<uint4*>(dst) = __ldg(reinterpret_cast<const uint4*>(row + col));
            else if constexpr (V == 4)
                *reinterpret_cast<unsigned*>(dst) = __ldg(reinterpret_cast<const unsigned*>(row + col));
            else
                *dst = __ldg(row + col);
        } else {
#pragma unroll
            for (int b = 0; b < V; ++b) {
                const int cb = col + b;
                dst[b] = (cb >= 0 && cb < src.frame_width) ? __ldg(row + cb) : std::uint8_t{0};
            }
        }
    }
}

// Stages src as 32-bit words with no phase: byte k (bits 8k..8k+7) of tile word (r, i) =
// frame(x0 + 4i + k, y0 + r). Each word is assembled with a funnel shift from the two aligned
// words that straddle it (one aligned load when x0 + 4i is aligned); a word that would touch
// bytes outside the frame row is read byte by byte instead, those bytes becoming 0. Words from
// 4i >= cols up to tile_words are zero, so every word a thread may read is initialised.
__device__ __forceinline__ void stage_tile_words(const TileSource& src, std::uint32_t* tile, int tile_words) {
    const int total = tile_words * src.rows;
    const int nthreads = blockDim.x * blockDim.y;
    for (int idx = threadIdx.y * blockDim.x + threadIdx.x; idx < total; idx += nthreads) {
        const int r = idx / tile_words;
        const int i = idx - r * tile_words;
        std::uint32_t v = 0;
        if (4 * i < src.cols) {
            const std::uint8_t* row = src.frame + static_cast<std::size_t>(src.y0 + r) * src.pitch;
            const int col = src.x0 + 4 * i;
            const int sh = static_cast<int>(reinterpret_cast<std::uintptr_t>(row + col) & 3);
            const int lo = col - sh;  // column of the aligned word at or below
            if (sh == 0 && col + 4 <= src.frame_width) {
                v = __ldg(reinterpret_cast<const unsigned*>(row + col));
            } else if (sh != 0 && lo >= 0 && lo + 8 <= src.frame_width) {
                const unsigned* p = reinterpret_cast<const unsigned*>(row + lo);
                v = __funnelshift_r(__ldg(p), __ldg(p + 1), 8u * sh);
            } else {
#pragma unroll
                for (int b = 0; b < 4; ++b)
                    if (col + b < src.frame_width) v |= static_cast<std::uint32_t>(__ldg(row + col + b)) << (8 * b);
            }
        }
        tile[r * tile_words + i] = v;
    }
}

}  // namespace direct
}  // namespace corrtrack
