// A GL RGBA8 texture registered with CUDA once per size, written by CUDA kernels through a
// surface object between map() and unmap() on the caller's stream: what the heatmap and
// frame sinks share.
// Thread rules: main (GL) thread only; map/unmap are queued on the given stream, no host wait.
#pragma once

#include <cuda_runtime.h>

#include "corrtrack/image.h"

struct cudaGraphicsResource;

namespace corrtrack {

class InteropTexture {
public:
    InteropTexture() = default;
    ~InteropTexture();
    InteropTexture(const InteropTexture&) = delete;
    InteropTexture& operator=(const InteropTexture&) = delete;

    // (Re)allocates the texture at `size` (GL_LINEAR or GL_NEAREST sampling) and registers it.
    // False, with the texture gone and one line on stderr ending in `fallback`, when CUDA
    // refuses the GL context (GL in software or on another GPU).
    bool resize(Size size, int gl_filter, const char* fallback);
    // Maps the texture on `stream`; the surface is valid until unmap(stream).
    cudaSurfaceObject_t map(Stream stream);
    void unmap(Stream stream);

    unsigned texture() const { return texture_; }
    Size size() const { return size_; }

private:
    unsigned texture_ = 0;
    Size size_;
    cudaGraphicsResource* resource_ = nullptr;
    cudaArray_t surface_array_ = nullptr;
    cudaSurfaceObject_t surface_ = 0;
};

}  // namespace corrtrack
