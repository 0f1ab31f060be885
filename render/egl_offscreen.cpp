#include "render/egl_offscreen.h"

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <string>
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

bool EglOffscreen::open(int width, int height, std::string* error, Devices which) {
    auto query_devices = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    auto query_string = reinterpret_cast<PFNEGLQUERYDEVICESTRINGEXTPROC>(eglGetProcAddress("eglQueryDeviceStringEXT"));
    auto query_attrib = reinterpret_cast<PFNEGLQUERYDEVICEATTRIBEXTPROC>(eglGetProcAddress("eglQueryDeviceAttribEXT"));
    auto platform_display =
        reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
    EGLDeviceEXT devices[16];
    EGLint n = 0;
    if (!query_devices || !platform_display || !query_devices(16, devices, &n) || n <= 0) {
        *error = "no EGL device (EGL_EXT_device_enumeration, EGL_EXT_platform_device)";
        return false;
    }
    // The current CUDA device's EGL device first, NVIDIA's others next: interop needs the GL on
    // the CUDA GPU. (No CUDA device: cudaGetDevice fails and cuda_device stays -1.)
    int cuda_device = -1;
    if (cudaGetDevice(&cuda_device) != cudaSuccess) {
        cuda_device = -1;
        cudaGetLastError();
    }
    std::vector<EGLDeviceEXT> ours, nvidia, other;
    for (EGLint i = 0; i < n; ++i) {
        const char* ext = query_string ? query_string(devices[i], EGL_EXTENSIONS) : nullptr;
        EGLAttrib cuda = -1;
        if (!(ext && std::strstr(ext, "EGL_NV_device_cuda")))
            other.push_back(devices[i]);
        else if (query_attrib && query_attrib(devices[i], EGL_CUDA_DEVICE_NV, &cuda) && cuda == cuda_device)
            ours.push_back(devices[i]);
        else
            nvidia.push_back(devices[i]);
    }
    std::vector<EGLDeviceEXT> order = ours;
    order.insert(order.end(), nvidia.begin(), nvidia.end());
    if (which == Devices::kAny) order.insert(order.end(), other.begin(), other.end());
    if (order.empty()) {
        *error = std::to_string(n) + " EGL device(s), none an NVIDIA (EGL_NV_device_cuda) one";
        return false;
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
        EGLint major = 0, minor = 0;
        if (d == EGL_NO_DISPLAY || !eglInitialize(d, &major, &minor)) {
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
        egl_major_ = major, egl_minor_ = minor;
        return true;
    }
    return false;
}

std::string EglOffscreen::describe() const {
    if (!display_) return "no EGL context";
    auto gl = [](GLenum e) {
        const auto* s = reinterpret_cast<const char*>(glGetString(e));
        return std::string(s ? s : "?");
    };
    return "EGL " + std::to_string(egl_major_) + "." + std::to_string(egl_minor_) + ": GL " + gl(GL_VERSION) + ", " +
           gl(GL_VENDOR) + ", " + gl(GL_RENDERER);
}

void EglOffscreen::swap() {
    if (display_) eglSwapBuffers(display_, surface_);
}

}  // namespace corrtrack
