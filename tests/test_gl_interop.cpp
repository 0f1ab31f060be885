// CUDA-GL interop for heatmaps and video frames: CudaHeatmapSink writes a registered GL texture
// from a device (or host) NCC map, and every texel read back with glGetTexImage must equal the
// CPU colormap of the same value (same tables, same rounding); CudaFrameSink converts NV12 in
// device memory (synthetic, and NVDEC's own surfaces) to RGBA, texel for texel equal to a CPU
// reference conversion; both map, write and unmap on the caller's stream without host waits. Runs headless through EGL's device platform
// (EGL_EXT_platform_device, the EGL device that is CUDA device 0 where EGL_NV_device_cuda says
// so, a pbuffer surface, desktop OpenGL). Skips without a CUDA GPU or without an EGL device
// that gives a GL context. CpuSinkMatchesLut needs only EGL (Mesa's software device will do),
// so the harness is exercised on machines without a GPU too.
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GL/gl.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "app/io/frame_source.h"
#include "corrtrack/correlator.h"
#include "render/colormap.h"
#include "render/frame_sink.h"
#include "render/frame_sink_cuda.h"
#include "render/heatmap_sink.h"
#include "render/heatmap_sink_cuda.h"
#include "render/nv12_frame.h"
#include "render/yuv_rgb.h"

namespace corrtrack {
namespace {

#define CUDA_OK(call) ASSERT_EQ((call), cudaSuccess) << #call << ": " << cudaGetErrorString(cudaGetLastError())

// A headless desktop-GL context on an EGL device; `error` says why not when ok() is false.
class EglContext {
public:
    explicit EglContext(bool want_cuda_device) {
        auto query_devices = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
        auto query_string =
            reinterpret_cast<PFNEGLQUERYDEVICESTRINGEXTPROC>(eglGetProcAddress("eglQueryDeviceStringEXT"));
        auto query_attrib =
            reinterpret_cast<PFNEGLQUERYDEVICEATTRIBEXTPROC>(eglGetProcAddress("eglQueryDeviceAttribEXT"));
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
                std::printf("%s: texel (%d,%d) value %.9g: got %u %u %u %u, want %u %u %u %u\n", what, x, y, map[i],
                            rgba[i * 4], rgba[i * 4 + 1], rgba[i * 4 + 2], rgba[i * 4 + 3], e[0], e[1], e[2], e[3]);
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
    const float exact[] = {-1.0f,
                           1.0f,
                           0.0f,
                           0.5f,
                           -0.5f,
                           1.0f / 255.0f,
                           0.5f / 127.5f - 1.0f,
                           1.5f / 127.5f - 1.0f,
                           254.5f / 127.5f - 1.0f,
                           std::nextafter(0.0f, 1.0f)};
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
                    EXPECT_EQ(
                        mismatches(read_texture(texture, size), map, size, stretch, c, ("device " + what).c_str()), 0)
                        << "device map, " << what;
                    CUDA_OK(cudaStreamSynchronize(stream));
                    EXPECT_EQ(
                        mismatches(read_texture(texture, size), map, size, stretch, c, ("synced " + what).c_str()), 0)
                        << "device map after a stream sync, " << what;

                    // Host map: staged by one async copy, then the same kernel.
                    std::vector<float> host(map);
                    const MapView hview{host.data(), size.width, size.height, static_cast<std::size_t>(size.width)};
                    sink->upload(hview, {c, stretch}, stream);
                    EXPECT_EQ(mismatches(read_texture(texture, size), map, size, stretch, c, ("host " + what).c_str()),
                              0)
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

// ---- video frames: NV12 -> RGBA ----

// The reference conversion, written out from the matrix definitions: Kr, Kb; limited range
// scales Y by 255/219 after taking off 16 and chroma by 255/224; 16.16 fixed point with the
// coefficients rounded to nearest, each channel rounded and clamped.
struct RefMatrix {
    double kr, kb;
    bool full;
};

std::array<std::uint8_t, 4> reference_rgba(int y, int u, int v, const RefMatrix& m) {
    const double kg = 1.0 - m.kr - m.kb, sy = m.full ? 1.0 : 255.0 / 219.0, sc = m.full ? 1.0 : 255.0 / 224.0;
    auto q = [](double c) { return static_cast<long>(std::lround(c * 65536.0)); };
    const long yy = q(sy) * (y - (m.full ? 0 : 16));
    const long r = yy + q(2 * (1 - m.kr) * sc) * (v - 128);
    const long g = yy - q(2 * (1 - m.kb) * m.kb / kg * sc) * (u - 128) - q(2 * (1 - m.kr) * m.kr / kg * sc) * (v - 128);
    const long b = yy + q(2 * (1 - m.kb) * sc) * (u - 128);
    auto px = [](long c) { return static_cast<std::uint8_t>(std::clamp((c + 32768) >> 16, 0L, 255L)); };
    return {px(r), px(g), px(b), 255};
}

RefMatrix ref_matrix(YuvMatrix m, bool full) {
    switch (m) {
    case YuvMatrix::kBt709: return {0.2126, 0.0722, full};
    case YuvMatrix::kBt2020: return {0.2627, 0.0593, full};
    default: return {0.299, 0.114, full};
    }
}

// The integer arithmetic the GPU kernel and the host fallback share (yuv_rgb.h) against the
// reference for every Y, U, V, and the reference within one level of the exact real formula.
// Needs no GPU.
TEST(YuvToRgb, SharedArithmeticMatchesTheReferenceEverywhere) {
    for (YuvMatrix m : {YuvMatrix::kBt601, YuvMatrix::kBt709, YuvMatrix::kBt2020})
        for (bool full : {false, true}) {
            const YuvToRgb k = yuv_to_rgb_coefficients(m, full);
            const RefMatrix r = ref_matrix(m, full);
            long bad = 0;
            int worst = 0;
            for (int y = 0; y < 256; ++y)
                for (int u = 0; u < 256; ++u)
                    for (int v = 0; v < 256; ++v) {
                        std::uint8_t got[4];
                        yuv_to_rgba(y, u, v, k, got);
                        const auto want = reference_rgba(y, u, v, r);
                        if (std::memcmp(got, want.data(), 4) != 0) ++bad;
                        const double kg = 1 - r.kr - r.kb, sy = full ? 1.0 : 255.0 / 219, sc = full ? 1.0 : 255.0 / 224;
                        const double yf = sy * (y - (full ? 0 : 16)), uf = sc * (u - 128), vf = sc * (v - 128);
                        const double exact[3] = {yf + 2 * (1 - r.kr) * vf,
                                                 yf - 2 * (1 - r.kb) * r.kb / kg * uf - 2 * (1 - r.kr) * r.kr / kg * vf,
                                                 yf + 2 * (1 - r.kb) * uf};
                        for (int c = 0; c < 3; ++c)
                            worst = std::max(
                                worst,
                                static_cast<int>(std::fabs(std::clamp(std::round(exact[c]), 0.0, 255.0) - want[c])));
                    }
            EXPECT_EQ(bad, 0) << to_string(m) << (full ? " full" : " limited");
            EXPECT_LE(worst, 1) << to_string(m) << (full ? " full" : " limited");
        }
    std::uint8_t px[4];
    const YuvToRgb bt601 = yuv_to_rgb_coefficients(YuvMatrix::kBt601, false);
    yuv_to_rgba(235, 128, 128, bt601, px);
    EXPECT_EQ(px[0] + px[1] + px[2], 3 * 255) << "limited-range white";
    yuv_to_rgba(16, 128, 128, bt601, px);
    EXPECT_EQ(px[0] + px[1] + px[2], 0) << "limited-range black";
}

// Random NV12 planes with the extremes in them, each plane pitched wider than its rows.
struct Nv12Host {
    int width = 0, height = 0;
    std::vector<std::uint8_t> y, uv;  // packed: width, and 2 * ((width + 1) / 2) bytes a row
    int cw() const { return (width + 1) / 2; }
    int ch() const { return (height + 1) / 2; }
};

Nv12Host random_nv12(int width, int height, unsigned seed) {
    Nv12Host h;
    h.width = width;
    h.height = height;
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> byte(0, 255);
    h.y.resize(static_cast<std::size_t>(width) * height);
    h.uv.resize(static_cast<std::size_t>(h.cw()) * 2 * h.ch());
    for (auto& v : h.y) v = static_cast<std::uint8_t>(byte(rng));
    for (auto& v : h.uv) v = static_cast<std::uint8_t>(byte(rng));
    const std::uint8_t ends[] = {0, 255, 16, 235, 240, 128};
    for (std::size_t i = 0; i < sizeof ends; ++i)
        h.y[i * 5 % h.y.size()] = ends[i], h.uv[i * 3 % h.uv.size()] = ends[i];
    return h;
}

std::vector<std::uint8_t> reference_frame(const Nv12Host& h, const RefMatrix& m, bool grey) {
    std::vector<std::uint8_t> out(static_cast<std::size_t>(h.width) * h.height * 4);
    for (int y = 0; y < h.height; ++y)
        for (int x = 0; x < h.width; ++x) {
            const std::size_t c = static_cast<std::size_t>(y / 2) * h.cw() * 2 + (x / 2) * 2;
            const auto px = reference_rgba(h.y[static_cast<std::size_t>(y) * h.width + x], grey ? 128 : h.uv[c],
                                           grey ? 128 : h.uv[c + 1], m);
            std::copy(px.begin(), px.end(), &out[(static_cast<std::size_t>(y) * h.width + x) * 4]);
        }
    return out;
}

// Device copies of the planes (pitched), freed by the destructor.
struct Nv12Device {
    std::uint8_t* y = nullptr;
    std::uint8_t* uv = nullptr;
    std::size_t y_pitch = 0, uv_pitch = 0;
    std::uint8_t* pinned_y = nullptr;
    std::uint8_t* pinned_uv = nullptr;
    ~Nv12Device() {
        cudaDeviceSynchronize();  // a queued copy may still read the pinned staging
        cudaFree(y);
        cudaFree(uv);
        cudaFreeHost(pinned_y);
        cudaFreeHost(pinned_uv);
    }
    bool alloc(const Nv12Host& h) {
        return cudaMallocPitch(reinterpret_cast<void**>(&y), &y_pitch, h.width + 77, h.height) == cudaSuccess &&
               cudaMallocPitch(reinterpret_cast<void**>(&uv), &uv_pitch, h.cw() * 2 + 33, h.ch()) == cudaSuccess;
    }
    // From pinned staging, so the copies truly queue on the stream instead of the host
    // waiting for the stream first, as copies from pageable memory may.
    bool copy(const Nv12Host& h, cudaStream_t stream) {
        if (!pinned_y || !pinned_uv) {
            if (cudaMallocHost(reinterpret_cast<void**>(&pinned_y), h.y.size()) != cudaSuccess ||
                cudaMallocHost(reinterpret_cast<void**>(&pinned_uv), h.uv.size()) != cudaSuccess)
                return false;
        }
        std::copy(h.y.begin(), h.y.end(), pinned_y);
        std::copy(h.uv.begin(), h.uv.end(), pinned_uv);
        return cudaMemcpy2DAsync(y, y_pitch, pinned_y, h.width, h.width, h.height, cudaMemcpyHostToDevice, stream) ==
                   cudaSuccess &&
               cudaMemcpy2DAsync(uv, uv_pitch, pinned_uv, h.cw() * 2, h.cw() * 2, h.ch(), cudaMemcpyHostToDevice,
                                 stream) == cudaSuccess;
    }
    Nv12Planes planes(const Nv12Host& h, YuvMatrix m, bool full, bool grey) const {
        Nv12Planes p;
        p.width = h.width;
        p.height = h.height;
        p.y = y;
        p.y_pitch = y_pitch;
        p.uv = grey ? nullptr : uv;
        p.uv_pitch = uv_pitch;
        p.matrix = m;
        p.full_range = full;
        return p;
    }
};

int rgba_mismatches(const std::vector<std::uint8_t>& got, const std::vector<std::uint8_t>& want, Size size,
                    const std::string& what) {
    int bad = 0;
    for (int y = 0; y < size.height; ++y)
        for (int x = 0; x < size.width; ++x) {
            const std::size_t i = (static_cast<std::size_t>(y) * size.width + x) * 4;
            if (std::memcmp(&got[i], &want[i], 4) != 0 && ++bad <= 5)
                std::printf("%s: texel (%d,%d): got %u %u %u %u, want %u %u %u %u\n", what.c_str(), x, y, got[i],
                            got[i + 1], got[i + 2], got[i + 3], want[i], want[i + 1], want[i + 2], want[i + 3]);
        }
    return bad;
}

TEST(GlInterop, Nv12FrameMatchesCpuConversion) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine: CUDA-GL interop test skipped";
    EglContext gl(true);
    if (!gl.ok()) GTEST_SKIP() << "no headless GL context on an NVIDIA EGL device: " << gl.error;
    cudaStream_t stream = nullptr;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    {
        auto sink = make_cuda_frame_sink();
        ASSERT_TRUE(sink->takes_device_frames()) << "interop refused the EGL device's GL context";
        // Odd sizes (a half chroma column and row), a re-registration, and back.
        for (Size size : {Size{37, 23}, Size{64, 48}, Size{37, 23}}) {
            const Nv12Host h =
                random_nv12(size.width, size.height, static_cast<unsigned>(size.width * 1000 + size.height));
            Nv12Device d;
            ASSERT_TRUE(d.alloc(h));
            ASSERT_TRUE(d.copy(h, stream));
            for (YuvMatrix m : {YuvMatrix::kBt601, YuvMatrix::kBt709, YuvMatrix::kBt2020})
                for (bool full : {false, true})
                    for (bool grey : {false, true}) {
                        const std::string what = std::string(to_string(m)) + (full ? " full " : " limited ") +
                                                 (grey ? "grey " : "") + std::to_string(size.width) + "x" +
                                                 std::to_string(size.height);
                        ASSERT_TRUE(sink->upload_nv12(d.planes(h, m, full, grey), stream)) << what;
                        ASSERT_EQ(sink->size(), size);
                        ASSERT_NE(sink->texture(), 0u);
                        EXPECT_NE(std::string(sink->path()).find("interop"), std::string::npos) << sink->path();
                        // No CUDA sync: unmapping on the stream orders the kernel before GL's read.
                        std::vector<std::uint8_t> got(static_cast<std::size_t>(size.width) * size.height * 4, 0xCD);
                        glBindTexture(GL_TEXTURE_2D, sink->texture());
                        glPixelStorei(GL_PACK_ALIGNMENT, 1);
                        glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, got.data());
                        EXPECT_EQ(rgba_mismatches(got, reference_frame(h, ref_matrix(m, full), grey), size, what), 0)
                            << what;
                    }
            CUDA_OK(cudaStreamSynchronize(stream));
        }
        // Host RGB takes the upload path, and read_frame_rgb reads back what either path wrote.
        std::vector<std::uint8_t> rgb(13 * 7 * 3);
        for (std::size_t i = 0; i < rgb.size(); ++i) rgb[i] = static_cast<std::uint8_t>(i * 37);
        sink->upload_rgb(rgb.data(), {13, 7});
        std::vector<std::uint8_t> back;
        ASSERT_TRUE(read_frame_rgb(*sink, &back));
        EXPECT_EQ(back, rgb);
        EXPECT_EQ(glGetError(), static_cast<GLenum>(GL_NO_ERROR));
    }
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(cudaStreamDestroy(stream));
}

// Both sinks map, write and unmap on the stream they are given: new pixels copied in on a
// non-blocking stream behind a slow host function are what GL reads back (a sink on any other
// stream would read the old ones), and upload returns without waiting for that stream.
TEST(GlInterop, SinksMapOnTheGivenStream) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine: CUDA-GL interop test skipped";
    EglContext gl(true);
    if (!gl.ok()) GTEST_SKIP() << "no headless GL context on an NVIDIA EGL device: " << gl.error;
    cudaStream_t stream = nullptr;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    constexpr int kSleepMs = 400;
    auto stall = [](void*) { usleep(kSleepMs * 1000); };
    using Ms = std::chrono::duration<double, std::milli>;
    {
        const Size size{96, 54};
        const Nv12Host a = random_nv12(size.width, size.height, 1), b = random_nv12(size.width, size.height, 2);
        Nv12Device d;
        ASSERT_TRUE(d.alloc(a));
        auto sink = make_cuda_frame_sink();
        ASSERT_TRUE(sink->takes_device_frames());
        ASSERT_TRUE(d.copy(a, stream));
        ASSERT_TRUE(sink->upload_nv12(d.planes(a, YuvMatrix::kBt601, false, false), stream));
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaLaunchHostFunc(stream, stall, nullptr));
        ASSERT_TRUE(d.copy(b, stream));  // reuses the staging: `a`'s copy is done
        const auto t0 = std::chrono::steady_clock::now();
        ASSERT_TRUE(sink->upload_nv12(d.planes(b, YuvMatrix::kBt601, false, false), stream));
        const double upload_ms = Ms(std::chrono::steady_clock::now() - t0).count();
        std::vector<std::uint8_t> got(static_cast<std::size_t>(size.width) * size.height * 4);
        glBindTexture(GL_TEXTURE_2D, sink->texture());
        glPixelStorei(GL_PACK_ALIGNMENT, 1);
        glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, got.data());
        std::printf("frame sink: upload returned after %.2f ms with a %d ms stall queued on its stream\n", upload_ms,
                    kSleepMs);
        EXPECT_EQ(rgba_mismatches(got, reference_frame(b, ref_matrix(YuvMatrix::kBt601, false), false), size,
                                  "after the stall"),
                  0)
            << "GL read pixels the stream had not written yet: the sink did not work on the given stream";
        EXPECT_LT(upload_ms, kSleepMs / 2.0) << "upload_nv12 waited for the stream on the host";
        CUDA_OK(cudaStreamSynchronize(stream));
    }
    {
        const Size size{41, 29};
        const std::vector<float> a = test_map(size, true);
        const std::vector<float> b(a.rbegin(), a.rend());
        float* dev = nullptr;
        float* pinned = nullptr;
        CUDA_OK(cudaMalloc(&dev, a.size() * sizeof(float)));
        CUDA_OK(cudaMallocHost(&pinned, b.size() * sizeof(float)));
        std::copy(b.begin(), b.end(), pinned);
        auto sink = make_cuda_heatmap_sink();
        const MapView view{dev, size.width, size.height, static_cast<std::size_t>(size.width), MemorySpace::kDevice};
        CUDA_OK(cudaMemcpy(dev, a.data(), a.size() * sizeof(float), cudaMemcpyHostToDevice));
        sink->upload(view, {Colormap::kTurbo, false}, stream);
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaLaunchHostFunc(stream, stall, nullptr));
        CUDA_OK(cudaMemcpyAsync(dev, pinned, b.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
        const auto t0 = std::chrono::steady_clock::now();
        sink->upload(view, {Colormap::kTurbo, false}, stream);
        const double upload_ms = Ms(std::chrono::steady_clock::now() - t0).count();
        std::printf("heatmap sink: upload returned after %.2f ms with a %d ms stall queued on its stream\n", upload_ms,
                    kSleepMs);
        EXPECT_EQ(mismatches(read_texture(sink->texture(), size), b, size, false, Colormap::kTurbo, "after the stall"),
                  0)
            << "GL read texels the stream had not written yet: the sink did not work on the given stream";
        EXPECT_LT(upload_ms, kSleepMs / 2.0) << "the heatmap upload waited for the stream on the host";
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaFree(dev));
        CUDA_OK(cudaFreeHost(pinned));
    }
    CUDA_OK(cudaStreamDestroy(stream));
}

// NVDEC's own surfaces: the bundled sample (H.264 High 4:2:0, colour matrix unspecified, so
// BT.601 limited range) decoded on the GPU with no host copies, shown through show_frame();
// the texture equals the reference conversion of the very planes NVDEC wrote, and stays
// close to the software decoder's RGB (swscale: bilinear chroma, its own rounding).
TEST(GlInterop, NvdecFrameReachesGlWithoutHostCopy) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine: CUDA-GL interop test skipped";
    EglContext gl(true);
    if (!gl.ok()) GTEST_SKIP() << "no headless GL context on an NVIDIA EGL device: " << gl.error;
    const std::string sample = std::string(CORRTRACK_SOURCE_DIR) + "/assets/sample.mp4";
    constexpr long kFrame = 9;
    cudaStream_t stream = nullptr;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    auto read_frame = [&](DecodeMode mode, bool want_rgb, Frame* out, std::string* mode_used) {
        SourceOptions so;
        so.input = sample;
        so.decode = mode;
        so.cuda_stream = stream;
        so.want_rgb = want_rgb;
        so.want_host_luma = false;
        std::string error;
        auto source = FrameSource::open(so, &error);
        if (!source) return false;
        *mode_used = source->decode_mode();
        while (source->read(*out) == ReadStatus::kFrame)
            if (out->index == kFrame) return true;
        return false;
    };
    {
        Frame nv, sw;
        std::string nv_mode, sw_mode;
        ASSERT_TRUE(read_frame(DecodeMode::kNvdec, false, &nv, &nv_mode));
        ASSERT_EQ(nv_mode, "nvdec") << "NVDEC did not decode the sample";
        ASSERT_TRUE(nv.on_device());
        EXPECT_TRUE(nv.rgb.empty());
        EXPECT_FALSE(nv.has_host_luma());
        Nv12Planes p;
        ASSERT_TRUE(device_nv12_planes(nv, &p));
        EXPECT_EQ(p.y, nv.device.data);
        EXPECT_EQ(p.y_pitch, nv.device.pitch);
        ASSERT_NE(p.uv, nullptr);
        EXPECT_EQ(p.matrix, YuvMatrix::kBt601);
        EXPECT_FALSE(p.full_range);

        auto sink = make_frame_sink();
        ASSERT_TRUE(sink->takes_device_frames());
        std::vector<std::uint8_t> scratch;
        ASSERT_TRUE(show_frame(*sink, nv, stream, &scratch));
        EXPECT_TRUE(scratch.empty()) << "no host pixels on the interop path";
        ASSERT_EQ(sink->size(), nv.size());
        std::vector<std::uint8_t> got(static_cast<std::size_t>(nv.width) * nv.height * 4);
        glBindTexture(GL_TEXTURE_2D, sink->texture());
        glPixelStorei(GL_PACK_ALIGNMENT, 1);
        glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, got.data());

        Nv12Host h;
        h.width = nv.width;
        h.height = nv.height;
        h.y.resize(static_cast<std::size_t>(h.width) * h.height);
        h.uv.resize(static_cast<std::size_t>(h.cw()) * 2 * h.ch());
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaMemcpy2D(h.y.data(), h.width, p.y, p.y_pitch, h.width, h.height, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy2D(h.uv.data(), h.cw() * 2, p.uv, p.uv_pitch, h.cw() * 2, h.ch(), cudaMemcpyDeviceToHost));
        EXPECT_EQ(rgba_mismatches(got, reference_frame(h, ref_matrix(YuvMatrix::kBt601, false), false), nv.size(),
                                  "nvdec frame"),
                  0);

        ASSERT_TRUE(read_frame(DecodeMode::kSoftware, true, &sw, &sw_mode));
        ASSERT_EQ(sw.rgb.size(), static_cast<std::size_t>(nv.width) * nv.height * 3);
        double sum = 0;
        for (std::size_t i = 0; i < sw.rgb.size(); ++i) sum += std::abs(int(sw.rgb[i]) - int(got[i / 3 * 4 + i % 3]));
        const double mean = sum / static_cast<double>(sw.rgb.size());
        std::printf("NVDEC frame %ld through interop vs software RGB: mean |diff| %.3f levels\n", kFrame, mean);
        EXPECT_LT(mean, 3.0);
    }
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(cudaStreamDestroy(stream));
}

// The CPU frame sink (any GL, Mesa's software EGL device will do): host RGB as given, host luma
// as grey, and nothing for a frame with neither.
TEST(GlInterop, CpuFrameSinkShowsHostFrames) {
    EglContext gl(false);
    if (!gl.ok()) GTEST_SKIP() << "no headless GL context through EGL's device platform: " << gl.error;
    auto sink = make_cpu_frame_sink();
    EXPECT_FALSE(sink->takes_device_frames());
    Frame f;
    f.width = 11;
    f.height = 5;
    f.rgb.resize(11 * 5 * 3);
    for (std::size_t i = 0; i < f.rgb.size(); ++i) f.rgb[i] = static_cast<std::uint8_t>(i * 7);
    std::vector<std::uint8_t> scratch, back;
    ASSERT_TRUE(show_frame(*sink, f, nullptr, &scratch));
    ASSERT_TRUE(read_frame_rgb(*sink, &back));
    EXPECT_TRUE(std::equal(back.begin(), back.end(), f.rgb.begin(), f.rgb.end()));
    f.rgb.clear();
    f.luma.resize(11 * 5);
    for (std::size_t i = 0; i < f.luma.size(); ++i) f.luma[i] = static_cast<std::uint8_t>(i * 5);
    ASSERT_TRUE(show_frame(*sink, f, nullptr, &scratch));
    ASSERT_TRUE(read_frame_rgb(*sink, &back));
    for (std::size_t i = 0; i < back.size(); ++i) ASSERT_EQ(back[i], f.luma[i / 3]) << i;
    f.luma.clear();
    EXPECT_FALSE(show_frame(*sink, f, nullptr, &scratch));
}

}  // namespace
}  // namespace corrtrack
