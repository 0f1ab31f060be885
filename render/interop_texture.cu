#include "render/interop_texture.h"

// GLEW before cuda_gl_interop.h (which includes GL/gl.h).
#include <GL/glew.h>
#include <cuda_gl_interop.h>

#include <cstdio>

#include "corrtrack/cuda_util.h"
#include "render/gl_texture.h"

namespace corrtrack {

InteropTexture::~InteropTexture() {
    // Destructors must not throw: errors here are ignored.
    if (surface_) cudaDestroySurfaceObject(surface_);
    if (resource_) cudaGraphicsUnregisterResource(resource_);
    if (texture_) glDeleteTextures(1, &texture_);
}

bool InteropTexture::resize(Size size, int gl_filter, const char* fallback) {
    if (surface_) CORRTRACK_CUDA(cudaDestroySurfaceObject(surface_));
    surface_ = 0;
    surface_array_ = nullptr;
    if (resource_) CORRTRACK_CUDA(cudaGraphicsUnregisterResource(resource_));
    resource_ = nullptr;
    if (!texture_) texture_ = create_texture_2d(gl_filter);
    glBindTexture(GL_TEXTURE_2D, texture_);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, size.width, size.height, 0, GL_RGBA, GL_UNSIGNED_BYTE, nullptr);
    // WriteDiscard: the kernels rewrite every texel; SurfaceLoadStore: through a surface object.
    const cudaError_t err =
        cudaGraphicsGLRegisterImage(&resource_, texture_, GL_TEXTURE_2D,
                                    cudaGraphicsRegisterFlagsWriteDiscard | cudaGraphicsRegisterFlagsSurfaceLoadStore);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        resource_ = nullptr;
        std::fprintf(stderr, "corrtrack: CUDA-GL interop unavailable (%s), %s\n", cudaGetErrorString(err), fallback);
        glDeleteTextures(1, &texture_);
        texture_ = 0;
        size_ = {};
        return false;
    }
    size_ = size;
    return true;
}

cudaSurfaceObject_t InteropTexture::map(Stream stream) {
    CORRTRACK_CUDA(cudaGraphicsMapResources(1, &resource_, as_cuda(stream)));
    cudaArray_t array = nullptr;
    CORRTRACK_CUDA(cudaGraphicsSubResourceGetMappedArray(&array, resource_, 0, 0));
    // Made once per registration; CUDA documents that the array may change between maps, so a
    // different one gets a fresh surface object (no memory is allocated for it).
    if (array != surface_array_) {
        if (surface_) CORRTRACK_CUDA(cudaDestroySurfaceObject(surface_));
        cudaResourceDesc desc{};
        desc.resType = cudaResourceTypeArray;
        desc.res.array.array = array;
        CORRTRACK_CUDA(cudaCreateSurfaceObject(&surface_, &desc));
        surface_array_ = array;
    }
    return surface_;
}

void InteropTexture::unmap(Stream stream) {
    CORRTRACK_CUDA(cudaGraphicsUnmapResources(1, &resource_, as_cuda(stream)));
}

}  // namespace corrtrack
