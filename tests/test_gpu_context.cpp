// The GPU context (app/gpu/gpu_context.h): a context without a GPU is usable (null streams, the
// tracker and the frame session run the CPU path in it and give the boxes of a tracker with a
// context of its own), "auto" and CUDA kernels follow the context, not the machine, and the
// host buffers pin where a GPU is present. With a GPU: trackers on one context share its
// compute stream (across kernel swaps too) and track as trackers on contexts of their own do,
// frame uploads go on the copy stream, the mapped PinnedBuffer is written by the device, and
// teardown with copies and searches still queued does not crash. The GPU cases skip without
// a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/gpu/gpu_context.h"
#include "app/io/frame.h"
#include "app/io/host_buffer.h"
#include "app/pipeline/frame_session.h"
#include "app/pipeline/frame_upload.h"
#include "app/pipeline/track_loop.h"
#include "app/track/tracker.h"
#include "corrtrack/correlator.h"
#include "corrtrack/cuda_util.h"
#include "tests/support/random_image.h"
#include "tests/support/session_setup.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

// A scene rendered into memory: frame k's luma, rows packed.
struct Frames {
    SyntheticScene scene;
    std::vector<std::vector<std::uint8_t>> luma;
    explicit Frames(int count, int width = 320, int height = 240) : scene(spec(count, width, height)) {
        luma.resize(static_cast<std::size_t>(count));
        for (int k = 0; k < count; ++k) scene.render(k, luma[static_cast<std::size_t>(k)]);
    }
    static SyntheticClipSpec spec(int count, int width, int height) {
        SyntheticClipSpec s = small_spec(count);
        s.width = width;
        s.height = height;
        return s;
    }
    ImageView view(int k) const {
        const SyntheticClipSpec& s = scene.spec();
        return {luma[static_cast<std::size_t>(k)].data(), s.width, s.height, static_cast<std::size_t>(s.width),
                MemorySpace::kHost};
    }
    int count() const { return static_cast<int>(luma.size()); }
};

TrackerOptions options_on(const std::string& kernel) {
    TrackerOptions o;
    o.kernel = kernel;
    return o;
}

// Every frame's box of target 0, from a tracker started on frame 0 at the truth.
std::vector<BoxF> track(MultiTracker& tracker, const Frames& frames) {
    std::vector<BoxF> boxes;
    std::string error;
    const TargetId id = tracker.add_target(frames.view(0), to_box(frames.scene.box(0)), &error);
    EXPECT_GE(id, 0) << error;
    if (id < 0) return boxes;
    for (int k = 1; k < frames.count(); ++k) boxes.push_back(tracker.update(frames.view(k)).at(0).box);
    return boxes;
}

void expect_same_boxes(const std::vector<BoxF>& a, const std::vector<BoxF>& b, double tol, const std::string& what) {
    ASSERT_EQ(a.size(), b.size()) << what;
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_NEAR(a[i].x, b[i].x, tol) << what << ", frame " << i + 1;
        EXPECT_NEAR(a[i].y, b[i].y, tol) << what << ", frame " << i + 1;
        EXPECT_NEAR(a[i].width, b[i].width, tol) << what << ", frame " << i + 1;
        EXPECT_NEAR(a[i].height, b[i].height, tol) << what << ", frame " << i + 1;
    }
}

// The first CUDA kernel of the registry other than `not_this` that runs here ("" if none).
std::string other_cuda_kernel(const std::string& not_this) {
    for (const KernelEntry& k : kernel_registry())
        if (k.device == Device::kCuda && k.available() && not_this != k.name) return k.name;
    return "";
}

// ---- without a GPU (on any machine) ----

TEST(GpuContext, WithoutAGpuItHasNullStreamsAndNoDevice) {
    const GpuContext gpu(GpuUse::kNone);
    EXPECT_FALSE(gpu.available());
    EXPECT_EQ(gpu.compute(), nullptr);
    EXPECT_EQ(gpu.copy(), nullptr);
    EXPECT_EQ(gpu.device_ordinal(), -1);
    EXPECT_EQ(gpu.device_name(), "");
    EXPECT_NO_THROW(gpu.synchronize());
}

TEST(GpuContext, TheDefaultContextHasAGpuExactlyWhenTheMachineHasOne) {
    const GpuContext gpu;
    EXPECT_EQ(gpu.available(), cuda_available());
    if (!gpu.available()) {
        EXPECT_EQ(gpu.compute(), nullptr);
        EXPECT_EQ(gpu.copy(), nullptr);
        EXPECT_EQ(gpu.device_ordinal(), -1);
        return;
    }
    EXPECT_NE(gpu.compute(), nullptr);
    EXPECT_NE(gpu.copy(), nullptr);
    EXPECT_NE(gpu.compute(), gpu.copy()) << "uploads overlap the kernels only on a stream of their own";
    EXPECT_GE(gpu.device_ordinal(), 0);
    EXPECT_FALSE(gpu.device_name().empty());
    unsigned flags = 0;
    ASSERT_EQ(cudaStreamGetFlags(as_cuda(gpu.compute()), &flags), cudaSuccess);
    EXPECT_EQ(flags, static_cast<unsigned>(cudaStreamNonBlocking));
    ASSERT_EQ(cudaStreamGetFlags(as_cuda(gpu.copy()), &flags), cudaSuccess);
    EXPECT_EQ(flags, static_cast<unsigned>(cudaStreamNonBlocking));
}

TEST(GpuContext, TheTrackerRunsTheCpuPathInAContextWithoutAGpu) {
    const Frames frames(20);
    const GpuContext gpu(GpuUse::kNone);
    // "auto" follows the context: the CPU's kernel even where the machine has a GPU.
    MultiTracker in_context(options_on("auto"), gpu);
    EXPECT_FALSE(in_context.on_gpu());
    EXPECT_EQ(&in_context.gpu(), &gpu);
    const std::vector<BoxF> got = track(in_context, frames);
    EXPECT_FALSE(in_context.on_gpu());
    EXPECT_EQ(in_context.stream(), nullptr);
    EXPECT_NE(in_context.kernel_summary(), "");

    MultiTracker own(options_on("cpu_fast"));  // a context of its own
    EXPECT_NE(&own.gpu(), &gpu);
    const std::vector<BoxF> want = track(own, frames);
    expect_same_boxes(got, want, 0.0, "auto in a context without a GPU is cpu_fast");
    // And the boxes follow the scene.
    ASSERT_EQ(got.size(), 19u);
    const TruthBox last = frames.scene.box(19);
    EXPECT_NEAR(got.back().x, last.x, 1.0);
    EXPECT_NEAR(got.back().y, last.y, 1.0);
}

TEST(GpuContext, ACudaKernelNeedsAContextWithAGpu) {
    const GpuContext gpu(GpuUse::kNone);
    MultiTracker tracker(options_on("cpu_fast"), gpu);
    std::string error;
    EXPECT_FALSE(tracker.set_kernel("cuda_dp4a_ilp", &error));
    EXPECT_NE(error, "");
    if (cuda_available()) EXPECT_NE(error.find("GPU context has none"), std::string::npos) << error;
    // The tracker still works on its CPU kernel.
    const Frames frames(5);
    EXPECT_EQ(track(tracker, frames).size(), 4u);
}

TEST(GpuContext, TheFrameSessionRunsInItsTrackersContext) {
    const WrittenClip clip("gpu_context_session", small_spec(16));
    ASSERT_EQ(clip.truth.size(), 16u) << clip.error;
    const GpuContext gpu(GpuUse::kNone);
    MultiTracker tracker(options_on("auto"), gpu);
    // NVDEC is not taken for a tracker without a GPU, even when asked for.
    auto session = test::open_session(tracker, clip.path, DecodeMode::kAuto, false, 4);
    ASSERT_TRUE(session);
    EXPECT_EQ(session->decode_mode(), "sw");
    EXPECT_EQ(session->stream(), nullptr);
    std::vector<BoxF> boxes;
    auto on_frame = [&](const LoopFrame&, std::vector<TrackResult>& results, std::string*) {
        boxes.push_back(results.at(0).box);
        return true;
    };
    TrackLoopStats st;
    std::string error;
    ASSERT_EQ(run_track_loop(*session, {to_box(clip.truth[0])}, TrackLoopOptions{}, on_frame, &st, &error), 0) << error;
    EXPECT_EQ(st.frames, 16);
    ASSERT_EQ(boxes.size(), 16u);
    EXPECT_NEAR(boxes.back().x, clip.truth.back().x, 1.5);
    EXPECT_NEAR(boxes.back().y, clip.truth.back().y, 1.5);
}

TEST(GpuContext, HostBuffersArePinnedWhereAGpuIsPresentAndKeepTheirBytesWhenMoved) {
    HostBuffer a;
    a.assign(1000, 7);
    EXPECT_EQ(a.pinned(), cuda_available());
    a[999] = 9;
    HostBuffer b(std::move(a));
    EXPECT_TRUE(a.empty());
    EXPECT_FALSE(a.pinned());
    ASSERT_EQ(b.size(), 1000u);
    EXPECT_EQ(b[0], 7);
    EXPECT_EQ(b[999], 9);
    EXPECT_EQ(b.pinned(), cuda_available());
    HostBuffer c;
    c = b;  // a copy has its own memory
    c[0] = 1;
    EXPECT_EQ(b[0], 7);
    EXPECT_EQ(c[999], 9);
    b.resize(10);  // shrinking keeps the memory
    EXPECT_EQ(b[0], 7);
}

// ---- with a GPU ----

TEST(GpuContextGpu, TrackersOnOneContextShareItsComputeStreamAndTrackAsAlone) {
    if (!cuda_available()) GTEST_SKIP() << "no GPU";
    const Frames frames(20);
    std::vector<BoxF> alone;
    {
        MultiTracker own(options_on("cuda_dp4a_ilp"));
        ASSERT_TRUE(own.on_gpu());
        alone = track(own, frames);
    }
    const GpuContext gpu;
    MultiTracker a(options_on("cuda_dp4a_ilp"), gpu), b(options_on("cuda_dp4a_ilp"), gpu);
    std::string error;
    ASSERT_TRUE(a.set_kernel("cuda_dp4a_ilp", &error)) << error;
    ASSERT_TRUE(b.set_kernel("cuda_dp4a_ilp", &error)) << error;
    EXPECT_EQ(a.stream(), gpu.compute());
    EXPECT_EQ(b.stream(), gpu.compute());
    // Interleaved updates on the one stream: each tracker waits on its own events only.
    const TargetId ia = a.add_target(frames.view(0), to_box(frames.scene.box(0)), &error);
    const TargetId ib = b.add_target(frames.view(0), to_box(frames.scene.box(0)), &error);
    ASSERT_GE(ia, 0) << error;
    ASSERT_GE(ib, 0) << error;
    std::vector<BoxF> got_a, got_b;
    for (int k = 1; k < frames.count(); ++k) {
        got_a.push_back(a.update(frames.view(k)).at(0).box);
        got_b.push_back(b.update(frames.view(k)).at(0).box);
    }
    // Cross-talk on the shared stream (a buffer read before it was written) would move boxes
    // by pixels; the kernels are deterministic, so the tolerance is for nothing but rounding.
    expect_same_boxes(got_a, alone, 1e-3, "tracker a");
    expect_same_boxes(got_b, alone, 1e-3, "tracker b");
}

TEST(GpuContextGpu, AKernelSwapKeepsTheContextsStream) {
    if (!cuda_available()) GTEST_SKIP() << "no GPU";
    const GpuContext gpu;
    MultiTracker tracker(options_on("cuda_dp4a_ilp"), gpu);
    std::string error;
    ASSERT_TRUE(tracker.set_kernel("cuda_dp4a_ilp", &error)) << error;
    EXPECT_EQ(tracker.stream(), gpu.compute());
    const std::string other = other_cuda_kernel("cuda_dp4a_ilp");
    ASSERT_NE(other, "");
    ASSERT_TRUE(tracker.set_kernel(other, &error)) << error;
    EXPECT_EQ(tracker.stream(), gpu.compute()) << "a decoder on the old stream keeps working";
    ASSERT_TRUE(tracker.set_kernel("cpu_fast", &error)) << error;
    EXPECT_EQ(tracker.stream(), nullptr);
    ASSERT_TRUE(tracker.set_kernel("auto", &error)) << error;
    EXPECT_EQ(tracker.stream(), gpu.compute());
}

// A frame with host luma in pinned memory (as the decoder's slots hold it).
Frame host_frame(const test::OwnedImage& img) {
    Frame f;
    f.width = img.width;
    f.height = img.height;
    f.luma.resize(img.pixels.size());
    std::copy(img.pixels.begin(), img.pixels.end(), f.luma.begin());
    return f;
}

TEST(GpuContextGpu, UploadsGoOnTheCopyStreamAndArriveWhole) {
    if (!cuda_available()) GTEST_SKIP() << "no GPU";
    const GpuContext gpu;
    FrameUploader uploader(gpu, 3);
    std::vector<test::OwnedImage> images;
    std::vector<Frame> held;
    for (std::uint32_t k = 0; k < 4; ++k) {
        images.push_back(test::random_image(1920, 1080, 10 + k));
        held.push_back(host_frame(images.back()));
        ASSERT_TRUE(held.back().luma.pinned());
    }
    std::vector<std::uint8_t> back(images[0].pixels.size());
    for (std::size_t k = 0; k < held.size(); ++k) {  // one more frame than slots: the ring comes round
        const int slot = uploader.upload(held[k]);
        const ImageView dev = uploader.device_view(slot, gpu.compute());  // the compute stream waits
        ASSERT_EQ(dev.space, MemorySpace::kDevice);
        ASSERT_EQ(cudaMemcpy2DAsync(back.data(), 1920, dev.data, dev.pitch, 1920, 1080, cudaMemcpyDeviceToHost,
                                    as_cuda(gpu.compute())),
                  cudaSuccess);
        uploader.done(slot, gpu.compute());
        ASSERT_EQ(cudaStreamSynchronize(as_cuda(gpu.compute())), cudaSuccess);
        EXPECT_TRUE(uploader.copied(slot));
        EXPECT_TRUE(back == images[k].pixels) << "frame " << k;
        EXPECT_GT(uploader.copy_ms(slot), 0.0);
    }
}

TEST(GpuContextGpu, TeardownWithWorkStillQueuedDoesNotCrash) {
    if (!cuda_available()) GTEST_SKIP() << "no GPU";
    const test::OwnedImage img = test::random_image(3840, 2160, 5);
    const BoxF box{1000, 700, 64, 48};
    for (int round = 0; round < 3; ++round) {
        // Users first, the context last, nothing waited for by hand: 4K copies in flight on the
        // copy stream and the searches and template samples queued behind them on the compute
        // stream, reading the uploader's device frames.
        auto gpu = std::make_unique<GpuContext>();
        auto tracker = std::make_unique<MultiTracker>(options_on("cuda_dp4a_ilp"), *gpu);
        auto uploader = std::make_unique<FrameUploader>(*gpu, 2);
        Frame f = host_frame(img);
        std::string error;
        ASSERT_GE(tracker->add_target(f.luma_view(), box, &error), 0) << error;
        ASSERT_TRUE(tracker->on_gpu());
        for (int k = 0; k < 3; ++k) {
            const int slot = uploader->upload(f);
            EXPECT_EQ(tracker->update(uploader->device_view(slot, gpu->compute())).size(), 1u);
            uploader->done(slot, gpu->compute());
        }
        uploader->upload(f);  // queued, never waited for
        if (round == 0) {
            uploader.reset();
            tracker.reset();
        } else if (round == 1) {
            tracker.reset();
            uploader.reset();
        } else {
            gpu->synchronize();
            uploader.reset();
            tracker.reset();
        }
        gpu.reset();
        EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "round " << round;
    }
    // The device is still usable.
    const GpuContext after;
    EXPECT_NO_THROW(after.synchronize());
}

TEST(GpuContextGpu, AMappedPinnedBufferIsWrittenByTheDevice) {
    if (!cuda_available()) GTEST_SKIP() << "no GPU";
    const GpuContext gpu;
    PinnedBuffer<std::uint8_t> mapped(cudaHostAllocMapped);
    ASSERT_NE(mapped.ensure(4096), nullptr);
    ASSERT_NE(mapped.device(), nullptr);
    std::fill(mapped.get(), mapped.get() + 4096, std::uint8_t{0});
    ASSERT_EQ(cudaMemsetAsync(mapped.device(), 0x5a, 4096, as_cuda(gpu.compute())), cudaSuccess);
    gpu.synchronize();
    EXPECT_EQ(mapped.get()[0], 0x5a);
    EXPECT_EQ(mapped.get()[4095], 0x5a);
    // Growing keeps the mapping; moving hands it over.
    ASSERT_TRUE(mapped.try_ensure(1 << 20));
    EXPECT_NE(mapped.device(), nullptr);
    PinnedBuffer<std::uint8_t> moved(std::move(mapped));
    EXPECT_EQ(mapped.get(), nullptr);
    EXPECT_EQ(mapped.device(), nullptr);
    EXPECT_EQ(moved.capacity(), std::size_t{1} << 20);
    EXPECT_NE(moved.device(), nullptr);
    PinnedBuffer<std::uint8_t> plain;
    ASSERT_NE(plain.ensure(16), nullptr);
    EXPECT_EQ(plain.device(), nullptr) << "only a mapped buffer has a device alias";
}

}  // namespace
}  // namespace corrtrack
