#include "render/egl_offscreen.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace corrtrack {
namespace {

std::string egl_error() {
    char b[32];
    std::snprintf(b, sizeof b, " (EGL error 0x%x)", static_cast<unsigned>(eglGetError()));
    return b;
}

}  // namespace

EglOffscreen::~EglOffscreen() {
    if (!display_) return;
    eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (surface_) eglDestroySurface(display_, surface_);
    if (context_) eglDestroyContext(display_, context_);
    eglTerminate(display_);
}

bool EglOffscreen::open(int width, int height, std::string* error) {
    auto query_devices = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    auto query_string = reinterpret_cast<PFNEGLQUERYDEVICESTRINGEXTPROC>(eglGetProcAddress("eglQueryDeviceStringEXT"));
    auto platform_display =
        reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
    EGLDeviceEXT devices[16];
    EGLint n = 0;
    if (!query_devices || !platform_display || !query_devices(16, devices, &n) || n <= 0) {
        *error = "no EGL device (EGL_EXT_device_enumeration, EGL_EXT_platform_device)";
        return false;
    }
    // NVIDIA's devices (those CUDA can name) first: interop needs the GL on the CUDA GPU.
    std::vector<EGLDeviceEXT> order;
    for (EGLint i = 0; i < n; ++i) {
        const char* ext = query_string ? query_string(devices[i], EGL_EXTENSIONS) : nullptr;
        if (ext && std::strstr(ext, "EGL_NV_device_cuda"))
            order.insert(order.begin(), devices[i]);
        else
            order.push_back(devices[i]);
    }
    const EGLint config_attribs[] = {EGL_SURFACE_TYPE,
                                     EGL_PBUFFER_BIT,
                                     EGL_RENDERABLE_TYPE,
                                     EGL_OPENGL_BIT,
                                     EGL_RED_SIZE,
                                     8,
                                     EGL_GREEN_SIZE,
                                     8,
                                     EGL_BLUE_SIZE,
                                     8,
                                     EGL_ALPHA_SIZE,
                                     8,
                                     EGL_NONE};
    const EGLint pbuffer_attribs[] = {EGL_WIDTH, width, EGL_HEIGHT, height, EGL_NONE};
    const EGLint context_attribs[] = {
        EGL_CONTEXT_MAJOR_VERSION,           3,       EGL_CONTEXT_MINOR_VERSION, 3, EGL_CONTEXT_OPENGL_PROFILE_MASK,
        EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    for (EGLDeviceEXT dev : order) {
        EGLDisplay d = platform_display(EGL_PLATFORM_DEVICE_EXT, dev, nullptr);
        EGLConfig config;
        EGLint configs = 0;
        if (d == EGL_NO_DISPLAY || !eglInitialize(d, nullptr, nullptr)) {
            *error = "eglInitialize failed on an EGL device" + egl_error();
            continue;
        }
        if (!eglBindAPI(EGL_OPENGL_API) || !eglChooseConfig(d, config_attribs, &config, 1, &configs) || configs < 1) {
            *error = "no desktop-GL pbuffer config on an EGL device" + egl_error();
            eglTerminate(d);
            continue;
        }
        EGLSurface s = eglCreatePbufferSurface(d, config, pbuffer_attribs);
        EGLContext c = eglCreateContext(d, config, EGL_NO_CONTEXT, context_attribs);
        if (s == EGL_NO_SURFACE || c == EGL_NO_CONTEXT || !eglMakeCurrent(d, s, s, c)) {
            *error = "no GL 3.3 core context with a pbuffer on an EGL device" + egl_error();
            if (c != EGL_NO_CONTEXT) eglDestroyContext(d, c);
            if (s != EGL_NO_SURFACE) eglDestroySurface(d, s);
            eglTerminate(d);
            continue;
        }
        display_ = d, surface_ = s, context_ = c;
        return true;
    }
    return false;
}

void EglOffscreen::swap() {
    if (display_) eglSwapBuffers(display_, surface_);
}

}  // namespace corrtrack
