// The NV12 -> RGBA reference for the frame-sink tests, written out from the matrix definitions
// (not from render/yuv_rgb.h, which it checks), random NV12 planes with the extremes in them,
// and their device copies.
// Thread rules: plain values; an Nv12Device's copies run on the stream given.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "corrtrack/image.h"
#include "render/nv12_frame.h"
#include "render/yuv_rgb.h"

namespace corrtrack {

// The reference conversion, written out from the matrix definitions: Kr, Kb; limited range
// scales Y by 255/219 after taking off 16 and chroma by 255/224; 16.16 fixed point with the
// coefficients rounded to nearest, each channel rounded and clamped.
struct RefMatrix {
    double kr, kb;
    bool full;
};

std::array<std::uint8_t, 4> reference_rgba(int y, int u, int v, const RefMatrix& m);
RefMatrix ref_matrix(YuvMatrix m, bool full);

// NV12 planes on the host, packed.
struct Nv12Host {
    int width = 0, height = 0;
    std::vector<std::uint8_t> y, uv;  // packed: width, and 2 * ((width + 1) / 2) bytes a row
    int cw() const { return (width + 1) / 2; }
    int ch() const { return (height + 1) / 2; }
};

// Random planes with the extremes in them.
Nv12Host random_nv12(int width, int height, unsigned seed);
// The reference conversion of every pixel (grey: the chroma plane ignored, as U = V = 128).
std::vector<std::uint8_t> reference_frame(const Nv12Host& h, const RefMatrix& m, bool grey);

// Device copies of the planes, each pitched wider than its rows, freed by the destructor.
struct Nv12Device {
    std::uint8_t* y = nullptr;
    std::uint8_t* uv = nullptr;
    std::size_t y_pitch = 0, uv_pitch = 0;
    std::uint8_t* pinned_y = nullptr;
    std::uint8_t* pinned_uv = nullptr;
    ~Nv12Device() {
        cudaDeviceSynchronize();  // a queued copy may still read the pinned staging
        cudaFree(y);
        cudaFree(uv);
        cudaFreeHost(pinned_y);
        cudaFreeHost(pinned_uv);
    }
    bool alloc(const Nv12Host& h) {
        return cudaMallocPitch(reinterpret_cast<void**>(&y), &y_pitch, h.width + 77, h.height) == cudaSuccess &&
               cudaMallocPitch(reinterpret_cast<void**>(&uv), &uv_pitch, h.cw() * 2 + 33, h.ch()) == cudaSuccess;
    }
    // From pinned staging, so the copies truly queue on the stream instead of the host
    // waiting for the stream first, as copies from pageable memory may.
    bool copy(const Nv12Host& h, cudaStream_t stream) {
        if (!pinned_y || !pinned_uv) {
            if (cudaMallocHost(reinterpret_cast<void**>(&pinned_y), h.y.size()) != cudaSuccess ||
                cudaMallocHost(reinterpret_cast<void**>(&pinned_uv), h.uv.size()) != cudaSuccess)
                return false;
        }
        std::copy(h.y.begin(), h.y.end(), pinned_y);
        std::copy(h.uv.begin(), h.uv.end(), pinned_uv);
        return cudaMemcpy2DAsync(y, y_pitch, pinned_y, h.width, h.width, h.height, cudaMemcpyHostToDevice, stream) ==
                   cudaSuccess &&
               cudaMemcpy2DAsync(uv, uv_pitch, pinned_uv, h.cw() * 2, h.cw() * 2, h.ch(), cudaMemcpyHostToDevice,
                                 stream) == cudaSuccess;
    }
    Nv12Planes planes(const Nv12Host& h, YuvMatrix m, bool full, bool grey) const {
        Nv12Planes p;
        p.width = h.width;
        p.height = h.height;
        p.y = y;
        p.y_pitch = y_pitch;
        p.uv = grey ? nullptr : uv;
        p.uv_pitch = uv_pitch;
        p.matrix = m;
        p.full_range = full;
        return p;
    }
};

// Counts RGBA texels that differ; prints the first few.
int rgba_mismatches(const std::vector<std::uint8_t>& got, const std::vector<std::uint8_t>& want, Size size,
                    const std::string& what);

}  // namespace corrtrack
