// CUDA-GL interop for video frames: CudaFrameSink converts NV12 in device memory (synthetic, and
// NVDEC's own surfaces) to RGBA, texel for texel equal to a CPU reference conversion
// (tests/support/nv12_reference.h), whose integer arithmetic is checked here against the exact
// formula; the CPU frame sink shows host frames. Part of test_gl_interop: headless EGL, the GPU
// cases skip without one.
#include <gtest/gtest.h>

#include <GL/gl.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "app/io/frame_source.h"
#include "corrtrack/correlator.h"
#include "render/frame_sink.h"
#include "render/frame_sink_cuda.h"
#include "render/nv12_frame.h"
#include "render/yuv_rgb.h"
#include "tests/support/egl_context.h"
#include "tests/support/nv12_reference.h"
#include "tests/support/read_source.h"

namespace corrtrack {
namespace {

using test::EglContext;
using test::read_texture;

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
                        const std::vector<std::uint8_t> got = read_texture(sink->texture(), size);
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
        std::string error;
        auto source =
            FrameSource::open(decode_options(sample, mode, want_rgb, /*want_host_luma=*/false, stream), &error);
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
        const std::vector<std::uint8_t> got = read_texture(sink->texture(), nv.size());

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
