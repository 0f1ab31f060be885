#include "tests/support/egl_context.h"

#include <GL/gl.h>

#include <cstdio>
#include <cstring>

namespace corrtrack::test {
namespace {

const char* gl_string(GLenum e) {
    const auto* s = reinterpret_cast<const char*>(glGetString(e));
    return s ? s : "?";
}

std::string hex(EGLint v) {
    char b[16];
    std::snprintf(b, sizeof b, "%x", static_cast<unsigned>(v));
    return b;
}

}  // namespace

EglContext::EglContext(bool want_cuda_device) {
    auto query_devices = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    auto query_string = reinterpret_cast<PFNEGLQUERYDEVICESTRINGEXTPROC>(eglGetProcAddress("eglQueryDeviceStringEXT"));
    auto query_attrib = reinterpret_cast<PFNEGLQUERYDEVICEATTRIBEXTPROC>(eglGetProcAddress("eglQueryDeviceAttribEXT"));
    auto platform_display =
        reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
    if (!query_devices || !platform_display) {
        error = "no EGL_EXT_device_enumeration / EGL_EXT_platform_device in libEGL";
        return;
    }
    EGLDeviceEXT devices[16];
    EGLint n = 0;
    if (!query_devices(16, devices, &n) || n <= 0) {
        error = "eglQueryDevicesEXT found no EGL device";
        return;
    }
    int cuda_device = 0;
    cudaGetDevice(&cuda_device);
    // Order: the device EGL_NV_device_cuda names as our CUDA device first, then the rest.
    std::vector<EGLDeviceEXT> order;
    for (EGLint i = 0; i < n; ++i) {
        const char* ext = query_string ? query_string(devices[i], EGL_EXTENSIONS) : nullptr;
        EGLAttrib cuda = -1;
        if (ext && std::strstr(ext, "EGL_NV_device_cuda") && query_attrib &&
            query_attrib(devices[i], EGL_CUDA_DEVICE_NV, &cuda) && cuda == cuda_device)
            order.insert(order.begin(), devices[i]);
        else if (!want_cuda_device || (ext && std::strstr(ext, "EGL_NV_device_cuda")))
            order.push_back(devices[i]);
    }
    if (order.empty()) {
        error = std::to_string(n) + " EGL device(s), none an NVIDIA (EGL_NV_device_cuda) one";
        return;
    }
    for (EGLDeviceEXT dev : order) {
        if (try_device(platform_display, dev)) return;
    }
}

EglContext::~EglContext() {
    if (display_ == EGL_NO_DISPLAY) return;
    eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (surface_ != EGL_NO_SURFACE) eglDestroySurface(display_, surface_);
    if (context_ != EGL_NO_CONTEXT) eglDestroyContext(display_, context_);
    eglTerminate(display_);
}

bool EglContext::try_device(PFNEGLGETPLATFORMDISPLAYEXTPROC platform_display, EGLDeviceEXT dev) {
    EGLDisplay d = platform_display(EGL_PLATFORM_DEVICE_EXT, dev, nullptr);
    EGLint major = 0, minor = 0;
    if (d == EGL_NO_DISPLAY || !eglInitialize(d, &major, &minor)) {
        error = "eglInitialize failed on the EGL device (error 0x" + hex(eglGetError()) + ")";
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
                                     EGL_NONE};
    EGLConfig config;
    EGLint configs = 0;
    if (!eglBindAPI(EGL_OPENGL_API) || !eglChooseConfig(d, config_attribs, &config, 1, &configs) || configs < 1) {
        error = "no desktop-GL pbuffer config on the EGL device (error 0x" + hex(eglGetError()) + ")";
        eglTerminate(d);
        return false;
    }
    const EGLint pbuffer_attribs[] = {EGL_WIDTH, 16, EGL_HEIGHT, 16, EGL_NONE};
    EGLSurface s = eglCreatePbufferSurface(d, config, pbuffer_attribs);
    EGLContext c = eglCreateContext(d, config, EGL_NO_CONTEXT, nullptr);
    if (s == EGL_NO_SURFACE || c == EGL_NO_CONTEXT || !eglMakeCurrent(d, s, s, c)) {
        error = "no GL context on the EGL device (error 0x" + hex(eglGetError()) + ")";
        if (c != EGL_NO_CONTEXT) eglDestroyContext(d, c);
        if (s != EGL_NO_SURFACE) eglDestroySurface(d, s);
        eglTerminate(d);
        return false;
    }
    display_ = d, surface_ = s, context_ = c, current_ = true;
    std::printf("EGL %d.%d: GL %s, %s, %s\n", major, minor, gl_string(GL_VERSION), gl_string(GL_VENDOR),
                gl_string(GL_RENDERER));
    return true;
}

std::vector<std::uint8_t> read_texture(unsigned texture, Size size) {
    std::vector<std::uint8_t> rgba(static_cast<std::size_t>(size.width) * size.height * 4, 0xCD);
    glBindTexture(GL_TEXTURE_2D, texture);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
    return rgba;
}

}  // namespace corrtrack::test
