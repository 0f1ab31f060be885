// A headless desktop-GL context for the interop tests: render/egl_offscreen.h's EGL device
// pbuffer (the EGL device that is the current CUDA device first), and reading a GL texture back.
// Thread rules: the context is current on the thread that made it.
#pragma once

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "corrtrack/image.h"
#include "render/egl_offscreen.h"

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call << ": " << cudaGetErrorString(cudaGetLastError())

namespace corrtrack::test {

// `error` says why not when ok() is false. want_cuda_device: only an NVIDIA EGL device.
class EglContext {
public:
    explicit EglContext(bool want_cuda_device);
    bool ok() const { return ok_; }
    std::string error;

private:
    EglOffscreen egl_;
    bool ok_ = false;
};

// The texture's level 0 as RGBA8, rows packed.
std::vector<std::uint8_t> read_texture(unsigned texture, Size size);

}  // namespace corrtrack::test
