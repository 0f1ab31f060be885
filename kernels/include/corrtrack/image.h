// Non-owning views of 8-bit images and float score maps, shared by every kernel.
// Thread rules: views are plain values; whoever made the memory owns it and keeps it alive.
#pragma once

#include <cstddef>
#include <cstdint>

namespace corrtrack {

struct Size {
    int width = 0;
    int height = 0;
    bool operator==(const Size& o) const { return width == o.width && height == o.height; }
    bool operator!=(const Size& o) const { return !(*this == o); }
    long long area() const { return static_cast<long long>(width) * height; }
};

struct Rect {
    int x = 0;
    int y = 0;
    int width = 0;
    int height = 0;
    bool operator==(const Rect& o) const { return x == o.x && y == o.y && width == o.width && height == o.height; }
    bool inside(Size s) const {
        return x >= 0 && y >= 0 && width > 0 && height > 0 && x + width <= s.width && y + height <= s.height;
    }
};

// Where a view's memory lives. CUDA kernels accept either for templates (they copy with
// cudaMemcpyDefault) but need device memory for frames and outputs.
enum class MemorySpace { kHost, kDevice };

struct ImageView {
    const std::uint8_t* data = nullptr;
    int width = 0;
    int height = 0;
    std::size_t pitch = 0;  // bytes between rows
    MemorySpace space = MemorySpace::kHost;

    Size size() const { return {width, height}; }
    const std::uint8_t* row(int y) const { return data + static_cast<std::size_t>(y) * pitch; }
    ImageView sub(Rect r) const { return {row(r.y) + r.x, r.width, r.height, pitch, space}; }
};

// A frame as the tracker sees it: luma for the correlation, and where the source has colour
// its two chroma planes at their own (4:2:0) resolution, (w+1)/2 x (h+1)/2, uncopied. A
// luma-only view converts to it, so that grey and device-only callers need no change.
struct FrameView {
    ImageView luma;
    ImageView u, v;  // empty for grey sources, device frames, or when no consumer asked
    FrameView() = default;
    FrameView(ImageView l) : luma(l) {}  // NOLINT(google-explicit-constructor): by design
    FrameView(ImageView l, ImageView cu, ImageView cv) : luma(l), u(cu), v(cv) {}
    // With a device luma, the same frame's host luma where it came from host memory (software
    // decode, eval): the host-side colour model learns from it. Empty otherwise.
    ImageView host_luma;
    bool has_chroma() const { return u.data && v.data && u.space == MemorySpace::kHost; }
    Size size() const { return luma.size(); }
    // This frame with `device` as its luma, keeping a host luma and the chroma planes.
    FrameView with_device_luma(ImageView device) const {
        FrameView f = *this;
        if (luma.space == MemorySpace::kHost && luma.data) f.host_luma = luma;
        f.luma = device;
        return f;
    }
    // The frame's host planes (luma and chroma); an empty luma where it has none.
    FrameView on_host() const {
        if (luma.space == MemorySpace::kHost) return *this;
        if (!host_luma.data) return {};
        return {host_luma, u, v};
    }
};

struct MapView {
    float* data = nullptr;
    int width = 0;
    int height = 0;
    std::size_t pitch = 0;  // floats between rows
    MemorySpace space = MemorySpace::kHost;

    Size size() const { return {width, height}; }
    float* row(int y) const { return data + static_cast<std::size_t>(y) * pitch; }
};

// A CUDA stream as an opaque handle (cudaStream_t), so that CPU-only code needs no CUDA
// headers. CPU kernels ignore it.
using Stream = void*;

}  // namespace corrtrack
