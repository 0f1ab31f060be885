// The GPU's operations for the blocks that compute their window sums from their own tile
// (cuda_mma_fused, cuda_wgmma): the shared mma ones (mma_block.cuh) plus the sum table's
// shared-memory accesses and the NCC store. CUDA only (the host tests bring their own Ops).
#pragma once

#include <cstddef>
#include <cstdint>

#include "corrtrack/ncc_math.h"
#include "cuda/mma_block.cuh"
#include "cuda/mma_box_sums.cuh"

namespace corrtrack {
namespace mma {

// The block's operations on the GPU: the shared mma ones plus the sum table's shared-memory
// accesses and the NCC store (the one formula, ncc_from_sums, as every kernel).
struct FusedOps : MmaDeviceOps {
    float* out;             // row 0 of map 0 (the maps stacked)
    std::size_t out_pitch;  // floats

#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    __device__ __forceinline__ std::uint32_t tile_byte(const std::uint8_t* p) const { return *p; }
    __device__ __forceinline__ uint2 sums_load(const uint2* p) const { return *p; }
    __device__ __forceinline__ uint4 sums_load_pair(const uint2* p) const { return *reinterpret_cast<const uint4*>(p); }
    __device__ __forceinline__ void sums_store(uint2* p, uint2 v) const { *p = v; }
    __device__ __forceinline__ TemplatePrefix prefix_entry(const TemplatePrefix* p) const {
        return {__ldg(&p->sum), __ldg(&p->sum_sq)};
    }
    __device__ __forceinline__ void store_ncc(const FusedMap& m, int x, int y, std::uint32_t si, std::uint32_t sii,
                                              std::uint32_t sit) const {
        out[(m.row0 + static_cast<std::size_t>(y)) * out_pitch + x] =
            ncc_from_sums(m.stats.n, static_cast<std::int64_t>(si), static_cast<std::int64_t>(sii),
                          static_cast<std::int64_t>(sit), m.stats.sum, m.stats.sum_sq);
    }
#endif
};

}  // namespace mma
}  // namespace corrtrack
