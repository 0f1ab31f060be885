// CUDA-GL interop for heatmaps: CudaHeatmapSink writes a registered GL texture from a device
// (or host) NCC map, and every texel read back with glGetTexImage must equal the CPU colormap of
// the same value (same tables, same rounding); both sinks (heatmap and frame) map, write and
// unmap on the caller's stream without host waits. The test_gl_interop binary also holds the
// video frames' interop (test_gl_frames.cpp). Runs headless through EGL's device platform
// (tests/support/egl_context.h). Skips without a CUDA GPU or without an EGL device that gives a
// GL context. CpuSinkMatchesLut needs only EGL (Mesa's software device will do), so the harness
// is exercised on machines without a GPU too.
#include <gtest/gtest.h>

#include <GL/gl.h>
#include <cuda_runtime.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "corrtrack/correlator.h"
#include "render/colormap.h"
#include "render/frame_sink_cuda.h"
#include "render/heatmap_sink.h"
#include "render/heatmap_sink_cuda.h"
#include "tests/support/egl_context.h"
#include "tests/support/nv12_reference.h"

namespace corrtrack {
namespace {

using test::EglContext;
using test::read_texture;

// The CPU sink's arithmetic, written out again: the colour of one map value.
std::array<std::uint8_t, 4> expected_texel(float m, float lo, float hi, Colormap c) {
    const float k = hi > lo ? 255.0f / (hi - lo) : 0.0f;
    const float v = std::isfinite(m) ? (m - lo) * k : 0.0f;
    return colormap_lut(c)[static_cast<int>(std::clamp(v + 0.5f, 0.0f, 255.0f))];
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

// Holds a stream in a host function until the test opens it: work queued behind it cannot run
// before then, whatever the machine's load. Only if nobody opens it within 30 s (an upload that
// waits for the stream on the host would never return otherwise) does it let go by itself.
struct StreamGate {
    std::atomic<bool> open{false};
    std::atomic<bool> gave_up{false};
    static void hold(void* p) {
        auto* g = static_cast<StreamGate*>(p);
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (!g->open.load()) {
            if (std::chrono::steady_clock::now() > until) {
                g->gave_up = true;
                return;
            }
            usleep(1000);
        }
    }
};

// Both sinks map, write and unmap on the stream they are given: new pixels copied in on a
// non-blocking stream behind a held host function are what GL reads back (a sink on any other
// stream would read the old ones), and upload returns while the stream is still held (no
// bound on its time: it must return before the gate opens).
TEST(GlInterop, SinksMapOnTheGivenStream) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine: CUDA-GL interop test skipped";
    EglContext gl(true);
    if (!gl.ok()) GTEST_SKIP() << "no headless GL context on an NVIDIA EGL device: " << gl.error;
    cudaStream_t stream = nullptr;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
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
        StreamGate gate;
        CUDA_OK(cudaLaunchHostFunc(stream, StreamGate::hold, &gate));
        ASSERT_TRUE(d.copy(b, stream));  // reuses the staging: `a`'s copy is done
        ASSERT_TRUE(sink->upload_nv12(d.planes(b, YuvMatrix::kBt601, false, false), stream));
        const bool returned_while_held = !gate.gave_up.load();
        gate.open = true;
        const std::vector<std::uint8_t> got = read_texture(sink->texture(), size);
        EXPECT_EQ(rgba_mismatches(got, reference_frame(b, ref_matrix(YuvMatrix::kBt601, false), false), size,
                                  "after the stall"),
                  0)
            << "GL read pixels the stream had not written yet: the sink did not work on the given stream";
        EXPECT_TRUE(returned_while_held) << "upload_nv12 waited for the stream on the host";
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
        StreamGate gate;
        CUDA_OK(cudaLaunchHostFunc(stream, StreamGate::hold, &gate));
        CUDA_OK(cudaMemcpyAsync(dev, pinned, b.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
        sink->upload(view, {Colormap::kTurbo, false}, stream);
        const bool returned_while_held = !gate.gave_up.load();
        gate.open = true;
        EXPECT_EQ(mismatches(read_texture(sink->texture(), size), b, size, false, Colormap::kTurbo, "after the stall"),
                  0)
            << "GL read texels the stream had not written yet: the sink did not work on the given stream";
        EXPECT_TRUE(returned_while_held) << "the heatmap upload waited for the stream on the host";
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaFree(dev));
        CUDA_OK(cudaFreeHost(pinned));
    }
    CUDA_OK(cudaStreamDestroy(stream));
}

}  // namespace
}  // namespace corrtrack
