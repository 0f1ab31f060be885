// A headless desktop-GL context through EGL's device platform (EGL_EXT_platform_device: the EGL
// device that is CUDA device 0 where EGL_NV_device_cuda says so, a pbuffer surface, desktop
// OpenGL), for the interop tests, and reading a GL texture back.
// Thread rules: the context is current on the thread that made it.
#pragma once

#include <gtest/gtest.h>

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "corrtrack/image.h"

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call << ": " << cudaGetErrorString(cudaGetLastError())

namespace corrtrack::test {

// `error` says why not when ok() is false. want_cuda_device: only an NVIDIA EGL device.
class EglContext {
public:
    explicit EglContext(bool want_cuda_device);
    ~EglContext();
    bool ok() const { return current_; }
    std::string error;
    // One owner of the EGL display, surface and context.
    EglContext(const EglContext&) = delete;
    EglContext& operator=(const EglContext&) = delete;

private:
    bool try_device(PFNEGLGETPLATFORMDISPLAYEXTPROC platform_display, EGLDeviceEXT dev);
    EGLDisplay display_ = EGL_NO_DISPLAY;
    EGLSurface surface_ = EGL_NO_SURFACE;
    EGLContext context_ = EGL_NO_CONTEXT;
    bool current_ = false;
};

// The texture's level 0 as RGBA8, rows packed.
std::vector<std::uint8_t> read_texture(unsigned texture, Size size);

}  // namespace corrtrack::test
