// The GL context on a GPU's EGL device with a pbuffer the window's size, for X servers whose
// GLX and EGL the GL vendor cannot use (the GPU host's carried Xvfb: CORRTRACK_GL_API=
// egl-device). The GLFW window stays for events and ImGui's platform side; the UI is drawn into
// the pbuffer, which screenshots read, and nothing reaches the X window.
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

    // A desktop-GL context (3.3 core) with a width x height pbuffer, current; the CUDA device's
    // EGL device first (EGL_NV_device_cuda), else any. False + *error.
    bool open(int width, int height, std::string* error);
    void swap();  // eglSwapBuffers: a flush for a pbuffer

private:
    void* display_ = nullptr;
    void* surface_ = nullptr;
    void* context_ = nullptr;
};

}  // namespace corrtrack
