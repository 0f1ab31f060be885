// CUDA-GL interop for heatmaps: CudaHeatmapSink writes a registered GL texture from a device
// (or host) NCC map; every texel read back with glGetTexImage must equal the CPU colormap of the
// same value (same tables, same rounding). Runs headless through EGL's device platform
// (EGL_EXT_platform_device, the EGL device that is CUDA device 0 where EGL_NV_device_cuda says
// so, a pbuffer surface, desktop OpenGL). Skips without a CUDA GPU or without an EGL device
// that gives a GL context. CpuSinkMatchesLut needs only EGL (Mesa's software device will do),
// so the harness is exercised on machines without a GPU too.
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "corrtrack/correlator.h"
#include "render/colormap.h"
#include "render/heatmap_sink.h"
#include "render/heatmap_sink_cuda.h"

namespace corrtrack {
namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call << ": " << cudaGetErrorString(cudaGetLastError())

// A headless desktop-GL context on an EGL device; `error` says why not when ok() is false.
class EglContext {
public:
    explicit EglContext(bool want_cuda_device) {
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
    ~EglContext() {
        if (display_ == EGL_NO_DISPLAY) return;
        eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        if (surface_ != EGL_NO_SURFACE) eglDestroySurface(display_, surface_);
        if (context_ != EGL_NO_CONTEXT) eglDestroyContext(display_, context_);
        eglTerminate(display_);
    }
    bool ok() const { return current_; }
    std::string error;

private:
    bool try_device(PFNEGLGETPLATFORMDISPLAYEXTPROC platform_display, EGLDeviceEXT dev) {
        EGLDisplay d = platform_display(EGL_PLATFORM_DEVICE_EXT, dev, nullptr);
        EGLint major = 0, minor = 0;
        if (d == EGL_NO_DISPLAY || !eglInitialize(d, &major, &minor)) {
            error = "eglInitialize failed on the EGL device (error 0x" + hex(eglGetError()) + ")";
            return false;
        }
        const EGLint config_attribs[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT,
                                         EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_NONE};
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
    static const char* gl_string(GLenum e) {
        const auto* s = reinterpret_cast<const char*>(glGetString(e));
        return s ? s : "?";
    }
    static std::string hex(EGLint v) {
        char b[16];
        std::snprintf(b, sizeof b, "%x", static_cast<unsigned>(v));
        return b;
    }
    EGLDisplay display_ = EGL_NO_DISPLAY;
    EGLSurface surface_ = EGL_NO_SURFACE;
    EGLContext context_ = EGL_NO_CONTEXT;
    bool current_ = false;
};

// The CPU sink's arithmetic, written out again: the colour of one map value.
std::array<std::uint8_t, 4> expected_texel(float m, float lo, float hi, Colormap c) {
    const float k = hi > lo ? 255.0f / (hi - lo) : 0.0f;
    const float v = std::isfinite(m) ? (m - lo) * k : 0.0f;
    return colormap_lut(c)[static_cast<int>(std::clamp(v + 0.5f, 0.0f, 255.0f))];
}

std::vector<std::uint8_t> read_texture(unsigned texture, Size size) {
    std::vector<std::uint8_t> rgba(static_cast<std::size_t>(size.width) * size.height * 4, 0xCD);
    glBindTexture(GL_TEXTURE_2D, texture);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
    return rgba;
}

// Counts texels that differ from expected_texel; prints the first few.
int mismatches(const std::vector<std::uint8_t>& rgba, const std::vector<float>& map, Size size, bool stretch,
               Colormap c, const char* what) {
    float lo = -1, hi = 1;
    if (stretch) {
        lo = hi = map[0];
        for (float v : map) lo = std::min(lo, v), hi = std::max(hi, v);
    }
    int bad = 0;
    for (int y = 0; y < size.height; ++y)
        for (int x = 0; x < size.width; ++x) {
            const std::size_t i = static_cast<std::size_t>(y) * size.width + x;
            const auto e = expected_texel(map[i], lo, hi, c);
            if (std::memcmp(e.data(), &rgba[i * 4], 4) != 0 && ++bad <= 5)
                std::printf("%s: texel (%d,%d) value %.9g: got %u %u %u %u, want %u %u %u %u\n", what, x, y,
                            map[i], rgba[i * 4], rgba[i * 4 + 1], rgba[i * 4 + 2], rgba[i * 4 + 3], e[0], e[1],
                            e[2], e[3]);
        }
    return bad;
}

// A gradient over -1.2..1.2 (both clamps), the exact ends and middle, values on the rounding
// edges between table entries, and (unless `finite`) NaN and infinities.
std::vector<float> test_map(Size s, bool finite) {
    std::vector<float> m(static_cast<std::size_t>(s.width) * s.height);
    for (int y = 0; y < s.height; ++y)
        for (int x = 0; x < s.width; ++x)
            m[static_cast<std::size_t>(y) * s.width + x] =
                -1.2f + 2.4f * static_cast<float>(x + y * s.width) / static_cast<float>(m.size() - 1);
    const float exact[] = {-1.0f, 1.0f, 0.0f, 0.5f, -0.5f, 1.0f / 255.0f, 0.5f / 127.5f - 1.0f,
                           1.5f / 127.5f - 1.0f, 254.5f / 127.5f - 1.0f, std::nextafter(0.0f, 1.0f)};
    std::size_t at = 1;
    for (float v : exact) m[at++ * 7 % m.size()] = v;
    if (!finite) {
        m[3] = std::numeric_limits<float>::quiet_NaN();
        m[5] = std::numeric_limits<float>::infinity();
        m[m.size() - 2] = -std::numeric_limits<float>::infinity();
    } else {
        m[4] = std::numeric_limits<float>::quiet_NaN();  // not first: both sinks skip it in min/max
    }
    return m;
}

TEST(GlInterop, CpuSinkMatchesLut) {
    EglContext gl(false);
    if (!gl.ok()) GTEST_SKIP() << "no headless GL context through EGL's device platform: " << gl.error;
    const Size size{37, 23};
    for (bool stretch : {false, true}) {
        std::vector<float> map = test_map(size, stretch);
        auto sink = make_cpu_heatmap_sink();
        for (Colormap c : kColormaps) {
            sink->upload({map.data(), size.width, size.height, static_cast<std::size_t>(size.width)}, {c, stretch},
                         nullptr);
            ASSERT_NE(sink->texture(), 0u);
            EXPECT_EQ(mismatches(read_texture(sink->texture(), size), map, size, stretch, c, "cpu"), 0)
                << to_string(c) << (stretch ? " stretch" : "");
        }
    }
}

TEST(GlInterop, CudaSinkMatchesCpuColormap) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine: CUDA-GL interop test skipped";
    EglContext gl(true);
    if (!gl.ok()) GTEST_SKIP() << "no headless GL context on an NVIDIA EGL device: " << gl.error;

    cudaStream_t stream = nullptr;
    CUDA_OK(cudaStreamCreate(&stream));
    {
        auto sink = make_cuda_heatmap_sink();
        unsigned texture = 0;
        // Two sizes (the second re-registers the texture), both spaces, every colormap, both modes.
        for (Size size : {Size{37, 23}, Size{64, 48}, Size{37, 23}}) {
            for (bool stretch : {false, true}) {
                const std::vector<float> map = test_map(size, stretch);
                float* dev = nullptr;
                std::size_t pitch = 0;  // bytes; wider than the row, so the kernel must honour it
                CUDA_OK(cudaMallocPitch(reinterpret_cast<void**>(&dev), &pitch, size.width * sizeof(float) + 100,
                                        size.height));
                CUDA_OK(cudaMemcpy2D(dev, pitch, map.data(), size.width * sizeof(float), size.width * sizeof(float),
                                     size.height, cudaMemcpyHostToDevice));
                for (Colormap c : kColormaps) {
                    const std::string what = std::string(to_string(c)) + (stretch ? " stretch " : " fixed ") +
                                             std::to_string(size.width) + "x" + std::to_string(size.height);
                    // Device map, read back with no CUDA sync: unmapping on the stream orders
                    // the kernel before later GL work.
                    const MapView dview{dev, size.width, size.height, pitch / sizeof(float), MemorySpace::kDevice};
                    sink->upload(dview, {c, stretch}, stream);
                    ASSERT_NE(sink->texture(), 0u);
                    ASSERT_EQ(sink->size(), size);
                    if (texture) EXPECT_EQ(sink->texture(), texture) << "the texture name stays across sizes";
                    texture = sink->texture();
                    EXPECT_EQ(mismatches(read_texture(texture, size), map, size, stretch, c, ("device " + what).c_str()),
                              0)
                        << "device map, " << what;
                    CUDA_OK(cudaStreamSynchronize(stream));
                    EXPECT_EQ(mismatches(read_texture(texture, size), map, size, stretch, c, ("synced " + what).c_str()),
                              0)
                        << "device map after a stream sync, " << what;

                    // Host map: staged by one async copy, then the same kernel.
                    std::vector<float> host(map);
                    const MapView hview{host.data(), size.width, size.height, static_cast<std::size_t>(size.width)};
                    sink->upload(hview, {c, stretch}, stream);
                    EXPECT_EQ(mismatches(read_texture(texture, size), map, size, stretch, c, ("host " + what).c_str()), 0)
                        << "host map, " << what;
                }
                CUDA_OK(cudaStreamSynchronize(stream));
                CUDA_OK(cudaFree(dev));
            }
        }
        // An empty map leaves the texture as it was.
        sink->upload(MapView{}, {}, stream);
        EXPECT_EQ(sink->texture(), texture);
        EXPECT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
    }
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(cudaStreamDestroy(stream));
    std::printf("CUDA-GL interop: every texel equals the CPU colormap\n");
}

}  // namespace
}  // namespace corrtrack
