// Cameras without hardware: the --camera-* values, the mode list and refusal texts from a
// fake enumeration, and a camera path pointed at non-cameras. The output video's writer
// thread: every frame encoded in order, back-pressure from a slow writer, no frame dropped;
// drawing on YUV 4:2:0 frames as on RGB ones.
// Thread rules: single-threaded, except the AsyncVideoWriter under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>

#include "app/io/annotate.h"
#include "app/io/async_video.h"
#include "app/io/camera_modes.h"
#include "app/io/frame_source.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

CameraDevice fake_webcam() {
    CameraDevice d;
    d.path = "/dev/video0";
    d.name = "HD Pro Webcam C920";
    d.modes = {{"yuyv", "YUYV 4:2:2", 640, 480, {30, 15}},
               {"yuyv", "YUYV 4:2:2", 1920, 1080, {5}},
               {"mjpeg", "Motion-JPEG", 1920, 1080, {30, 24, 15}}};
    return d;
}

TEST(CameraOptions, SizeAndFormatChecks) {
    int w = 0, h = 0;
    std::string why, name;
    EXPECT_TRUE(parse_camera_size("1920x1080", &w, &h, &why));
    EXPECT_EQ(w, 1920);
    EXPECT_EQ(h, 1080);
    EXPECT_TRUE(parse_camera_size("640X480", &w, &h, &why));
    for (const char* bad : {"", "1920", "1920x", "x1080", "1920x1080x3", "-640x480", "8x8", "20000x10", "abcxdef"}) {
        EXPECT_FALSE(parse_camera_size(bad, &w, &h, &why)) << bad;
        EXPECT_TRUE(why.find("WIDTHxHEIGHT") != std::string::npos || why.find("between") != std::string::npos) << why;
    }
    EXPECT_TRUE(parse_camera_format("MJPEG", &name, &why));
    EXPECT_EQ(name, "mjpeg");
    EXPECT_TRUE(parse_camera_format("yuyv422", &name, &why));
    EXPECT_EQ(name, "yuyv");
    EXPECT_EQ(v4l2_input_format("yuyv"), "yuyv422");
    EXPECT_EQ(v4l2_input_format("mjpeg"), "mjpeg");
    EXPECT_EQ(v4l2_input_format("h264"), "h264");
    EXPECT_FALSE(parse_camera_format("bayer", &name, &why));
    EXPECT_NE(why.find("mjpeg, h264, hevc, yuyv"), std::string::npos) << why;
    EXPECT_EQ(camera_format_from_libav("rawvideo", "yuyv422"), "yuyv");
    EXPECT_EQ(camera_format_from_libav("mjpeg", ""), "mjpeg");
}

TEST(CameraModes, ListFromAFakeEnumeration) {
    CameraDevice meta;
    meta.path = "/dev/video1";
    meta.name = "HD Pro Webcam C920";
    CameraDevice broken;
    broken.path = "/dev/video2";
    broken.error = "cannot open: Permission denied";
    EXPECT_EQ(format_camera_list({fake_webcam(), meta, broken}),
              "/dev/video0 (HD Pro Webcam C920)\n"
              "  yuyv (YUYV 4:2:2)\n"
              "    640x480 @ 30, 15 fps\n"
              "    1920x1080 @ 5 fps\n"
              "  mjpeg (Motion-JPEG)\n"
              "    1920x1080 @ 30, 24, 15 fps\n"
              "/dev/video1 (HD Pro Webcam C920)\n"
              "  no capture modes (a metadata or output node)\n"
              "/dev/video2\n"
              "  cannot open: Permission denied\n");
    EXPECT_EQ(format_camera_list({}), "no cameras found (no /dev/video* device)\n");
    EXPECT_EQ(describe_mode(fake_webcam().modes[2]), "mjpeg 1920x1080 @ 30, 24, 15 fps");
    EXPECT_EQ(summarize_modes(fake_webcam(), 2),
              "it offers yuyv 640x480 @ 30, 15 fps; yuyv 1920x1080 @ 5 fps; ... (1 more)");
    const CameraRequest r = request_for(fake_webcam().modes[2]);
    EXPECT_EQ(r.size, "1920x1080");
    EXPECT_EQ(r.fps, 30);
    EXPECT_EQ(r.format, "mjpeg");
    // No camera here: the scan of an empty folder finds none.
    TempDir dir("cameras");
    EXPECT_TRUE(camera_paths(dir.path()).empty());
}

TEST(CameraModes, MismatchAndRefusalMessages) {
    CameraRequest r{"1920x1080", 30, "mjpeg"};
    EXPECT_EQ(camera_mode_mismatch(r, {1920, 1080}, "mjpeg", 30), "");
    EXPECT_EQ(camera_mode_mismatch(r, {1920, 1080}, "mjpeg", 29.97), "");  // a driver's rounding
    // The driver's nearest size and libav's fallback to another raw format are refusals.
    EXPECT_EQ(camera_mode_mismatch(r, {640, 480}, "yuyv", 30), "it delivers 640x480 @ 30 fps yuyv");
    EXPECT_EQ(camera_mode_mismatch(r, {1920, 1080}, "mjpeg", 15), "it delivers 1920x1080 @ 15 fps mjpeg");
    EXPECT_EQ(camera_mode_mismatch(CameraRequest{"", 0, "yuyv"}, {640, 480}, "yuyv", 30), "");
    const std::string msg =
        camera_refusal_message("/dev/video0", r, "it delivers 640x480 @ 30 fps yuyv", fake_webcam());
    EXPECT_EQ(msg,
              "camera '/dev/video0' refused 1920x1080 @ 30 fps mjpeg: it delivers 640x480 @ 30 fps yuyv; it offers "
              "yuyv 640x480 @ 30, 15 fps; yuyv 1920x1080 @ 5 fps; mjpeg 1920x1080 @ 30, 24, 15 fps (see `corrtrack "
              "cameras`)");
}

// The v4l2 path with a mode asked for, pointed at things that are no camera: the message
// names the request and why the modes are unknown.
TEST(CameraModes, NonCameraGivesTheRefusalMessage) {
    const CameraDevice null_dev = enumerate_camera("/dev/null");
    EXPECT_NE(null_dev.error.find("not a V4L2 device"), std::string::npos) << null_dev.error;
    EXPECT_NE(enumerate_camera("/dev/video97").error.find("No such file"), std::string::npos);
    for (const char* path : {"/dev/null", "/dev/video97"}) {
        SourceOptions o;
        o.input = path;
        o.kind = SourceKind::kCamera;
        o.camera_size = "1920x1080";
        o.camera_fps = 30;
        o.camera_format = "mjpeg";
        o.open_timeout_s = 2;
        std::string error;
        EXPECT_FALSE(FrameSource::open(o, &error));
        EXPECT_NE(error.find(std::string("camera '") + path + "' refused 1920x1080 @ 30 fps mjpeg: "),
                  std::string::npos)
            << error;
        EXPECT_NE(error.find("its modes could not be listed"), std::string::npos) << error;
    }
}

// Records what it is given, slowly: a stand-in for an encoder that cannot keep up. `ahead`
// (when set) tells how many frames the producer had submitted when each write began.
class SlowWriter final : public VideoWriter {
public:
    SlowWriter(std::vector<int>* seen, int delay_ms) : seen_(seen), delay_ms_(delay_ms) {}
    bool write_rgb(const std::uint8_t* rgb, std::size_t, std::string*) override {
        if (submitted) lead = std::max(lead, submitted() - 1 - static_cast<long>(seen_->size()));
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
        seen_->push_back(rgb[0]);  // the frame number the producer wrote into its first byte
        return true;
    }
    bool write_yuv420(const std::uint8_t* yuv, YuvFormat, std::string*) override {
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
        seen_->push_back(yuv[0]);
        return true;
    }
    bool write_gray(const std::uint8_t*, std::size_t, std::string*) override { return false; }
    bool close(std::string*) override {
        closed = true;
        return true;
    }
    std::string encoder() const override { return "slow"; }
    bool closed = false;
    std::function<long()> submitted;  // the queue's submitted count
    long lead = 0;                    // most frames submitted beyond the one being written

private:
    std::vector<int>* seen_;
    int delay_ms_;
};

TEST(AsyncVideo, SlowWriterGetsEveryFrameInOrderWithBackPressure) {
    std::vector<int> seen;
    auto w = std::make_unique<SlowWriter>(&seen, 15);
    SlowWriter& writer = *w;
    AsyncVideoWriter q(std::move(w), 2);
    writer.submitted = [&q] { return q.stats().submitted; };
    std::vector<const std::uint8_t*> buffers;
    for (int i = 0; i < 20; ++i) {
        VideoSlot* s = q.acquire();
        ASSERT_NE(s, nullptr);
        s->rgb.assign(16 * 16 * 3, 0);
        s->rgb[0] = static_cast<std::uint8_t>(i);
        s->width = s->height = 16;
        s->overlay.clear();
        buffers.push_back(s->rgb.data());
        q.submit(s);
    }
    std::string error;
    ASSERT_TRUE(q.close(&error)) << error;
    const VideoQueueStats st = q.stats();
    ASSERT_EQ(seen.size(), 20u);  // nothing dropped
    for (int i = 0; i < 20; ++i) EXPECT_EQ(seen[static_cast<std::size_t>(i)], i);
    EXPECT_EQ(st.frames, 20);
    EXPECT_EQ(st.submitted, 20);
    // Back-pressure, whatever the machine's load: while the writer wrote frame i, the producer
    // had submitted at most the one other slot's frame beyond it (how often it had to wait for
    // that, and how long, depends on the scheduler: printed, not asserted).
    EXPECT_LE(writer.lead, 1);
    std::printf("producer waited %ld times, %.1f ms\n", st.waits, st.wait_ms);
    // The slots' buffers are reused: two distinct pixel buffers for twenty frames.
    std::sort(buffers.begin(), buffers.end());
    EXPECT_EQ(std::unique(buffers.begin(), buffers.end()) - buffers.begin(), 2);
}

class FailingWriter final : public VideoWriter {
public:
    bool write_rgb(const std::uint8_t*, std::size_t, std::string* error) override {
        if (++n < 3) return true;
        *error = "disk full";
        return false;
    }
    bool write_yuv420(const std::uint8_t*, YuvFormat, std::string* error) override {
        return write_rgb(nullptr, 0, error);
    }
    bool write_gray(const std::uint8_t*, std::size_t, std::string*) override { return false; }
    bool close(std::string*) override { return true; }
    std::string encoder() const override { return "failing"; }
    int n = 0;
};

TEST(AsyncVideo, WriteErrorReachesTheProducer) {
    AsyncVideoWriter q(std::make_unique<FailingWriter>(), 2);
    int accepted = 0;
    for (int i = 0; i < 50; ++i) {
        VideoSlot* s = q.acquire();
        if (!s) break;
        s->rgb.assign(8 * 8 * 3, 0);
        s->width = s->height = 8;
        q.submit(s);
        ++accepted;
    }
    // No sleep needed: with both slots queued, acquire() waits for the writer, which fails on
    // its third frame and ends the waiting with nullptr.
    EXPECT_LE(accepted, 5);
    EXPECT_EQ(q.error(), "disk full");
    std::string error;
    EXPECT_FALSE(q.close(&error));
    EXPECT_EQ(error, "disk full");
    EXPECT_EQ(q.stats().frames, 2);
}

TEST(Colour, RgbToYuvOfKnownColours) {
    const YuvFormat limited601{YuvMatrix::kBt601, false}, full601{YuvMatrix::kBt601, true};
    auto eq = [](Yuv a, int y, int u, int v) { return a.y == y && a.u == u && a.v == v; };
    EXPECT_TRUE(eq(to_yuv({255, 255, 255}, limited601), 235, 128, 128));
    EXPECT_TRUE(eq(to_yuv({0, 0, 0}, limited601), 16, 128, 128));
    EXPECT_TRUE(eq(to_yuv({255, 255, 255}, full601), 255, 128, 128));
    EXPECT_TRUE(eq(to_yuv({255, 0, 0}, limited601), 81, 90, 240));
    EXPECT_TRUE(eq(to_yuv({255, 0, 0}, full601), 76, 85, 255));
    EXPECT_TRUE(eq(to_yuv({255, 0, 0}, {YuvMatrix::kBt709, false}), 63, 102, 240));
}

// The overlay drawn on a YUV 4:2:0 frame puts, at every pixel the RGB drawing changes, the luma
// of that pixel's RGB colour, and leaves every other pixel as it was; a chroma block the
// drawing covers whole has that colour's chroma.
TEST(Annotate, YuvDrawingMatchesTheRgbDrawing) {
    const int w = 64, h = 48, cw = w / 2, ch = h / 2;
    const YuvFormat format{YuvMatrix::kBt709, false};
    const Rgb grey{128, 128, 128};
    const Yuv grey_yuv = to_yuv(grey, format);
    std::vector<std::uint8_t> rgb(static_cast<std::size_t>(w) * h * 3);
    for (std::size_t i = 0; i < rgb.size(); i += 3) rgb[i] = rgb[i + 1] = rgb[i + 2] = 128;
    std::vector<std::uint8_t> yuv(yuv420_bytes(w, h));
    std::fill(yuv.begin(), yuv.begin() + w * h, grey_yuv.y);
    std::fill(yuv.begin() + w * h, yuv.begin() + w * h + cw * ch, grey_yuv.u);
    std::fill(yuv.begin() + w * h + cw * ch, yuv.end(), grey_yuv.v);
    std::vector<float> map(20 * 10);
    for (std::size_t i = 0; i < map.size(); ++i) map[i] = -1.0f + 2.0f * static_cast<float>(i) / (map.size() - 1);
    std::vector<AnnotatedTarget> targets(2);
    targets[0] = {{30, 20, 20, 16}, {60, 255, 90}, true, {24, 14, 32, 28}, MapView{}};
    targets[0].map.data = map.data();
    targets[0].map.width = 20;
    targets[0].map.height = 10;
    targets[0].map.pitch = 20;
    targets[1].box = {3, 33, 9, 9};
    targets[1].color = {255, 60, 60};
    Overlay overlay;
    annotate_frame(&overlay, w, targets);
    ASSERT_EQ(overlay.heat_side, 16);
    draw_overlay(RgbImage{rgb.data(), w, h, static_cast<std::size_t>(w) * 3}, overlay);
    std::uint8_t* y = yuv.data();
    draw_overlay(YuvImage{y, y + w * h, y + w * h + cw * ch, w, h, static_cast<std::size_t>(w),
                          static_cast<std::size_t>(cw), format},
                 overlay);
    int changed = 0;
    for (int py = 0; py < h; ++py)
        for (int px = 0; px < w; ++px) {
            const std::uint8_t* p = &rgb[(static_cast<std::size_t>(py) * w + px) * 3];
            const Rgb c{p[0], p[1], p[2]};
            const bool drawn = c.r != 128 || c.g != 128 || c.b != 128;
            changed += drawn;
            EXPECT_EQ(y[py * w + px], drawn ? to_yuv(c, format).y : grey_yuv.y) << px << "," << py;
        }
    EXPECT_GT(changed, 300) << "boxes, window and inset";
    // The red box's 2-px left edge covers chroma block columns 1 (x 2..3) over rows 33..41.
    const std::uint8_t* u = y + w * h;
    const Yuv red = to_yuv({255, 60, 60}, format);
    for (int by = 17; by <= 20; ++by) EXPECT_EQ(u[by * cw + 1], red.u) << by;
    EXPECT_EQ(u[23 * cw + 20], grey_yuv.u) << "untouched chroma";
}

}  // namespace
}  // namespace corrtrack
