// The GL context on a GPU's EGL device with a pbuffer the window's size, for X servers whose
// GLX and EGL the GL vendor cannot use (the GPU host's carried Xvfb: CORRTRACK_GL_API=
// egl-device). The GLFW window stays for events and ImGui's platform side; the UI is drawn into
// the pbuffer, which screenshots read, and nothing reaches the X window. The interop tests open
// their headless contexts through it too (tests/support/egl_context.h).
// Thread rules: main thread only; the context is current on the thread that opened it.
#pragma once

#include <string>

namespace corrtrack {

class EglOffscreen {
public:
    EglOffscreen() = default;
    ~EglOffscreen();
    EglOffscreen(const EglOffscreen&) = delete;
    EglOffscreen& operator=(const EglOffscreen&) = delete;

    // Which EGL devices may serve: NVIDIA's only (CUDA-GL interop needs the GL on the CUDA
    // GPU), or any (Mesa's software device will do for host-only drawing).
    enum class Devices { kAny, kCudaOnly };

    // A desktop-GL context (3.3 core) with a width x height pbuffer, current. The EGL device
    // that EGL_NV_device_cuda names as the current CUDA device comes first, then NVIDIA's
    // others, then (kAny) the rest. False + *error.
    bool open(int width, int height, std::string* error, Devices which = Devices::kAny);
    void swap();  // eglSwapBuffers: a flush for a pbuffer
    // "EGL 1.5: GL <version>, <vendor>, <renderer>" of the open context.
    std::string describe() const;

private:
    void* display_ = nullptr;
    void* surface_ = nullptr;
    void* context_ = nullptr;
    int egl_major_ = 0, egl_minor_ = 0;  // the display's EGL version (describe)
};

}  // namespace corrtrack
