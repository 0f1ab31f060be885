// FrameSource and VideoWriter round trips against clips the tests write themselves (exact
// truth): containers, lossy and odd-size writes, the writer's fallbacks and errors, and the
// reader's RGB and buffer options. Part of test_io (test_io_*.cpp).
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "app/io/frame_source.h"
#include "app/io/video_writer.h"
#include "tests/support/read_source.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

class RoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(RoundTrip, LosslessClipReadsBackExactly) {
    TempDir dir("io");
    const SyntheticClipSpec spec = small_spec(30);
    const std::string path = dir.file(std::string("clip.") + GetParam());
    std::string error;
    const std::vector<TruthBox> truth = write_synthetic_clip(path, spec, &error);
    ASSERT_EQ(truth.size(), 30u) << error;

    auto source = open_source(path, &error);
    ASSERT_TRUE(source) << error;
    EXPECT_FALSE(source->live());
    EXPECT_EQ(source->size(), (Size{320, 240}));
    EXPECT_DOUBLE_EQ(source->fps(), 25.0);
    EXPECT_EQ(source->frame_count(), 30);
    EXPECT_EQ(source->description(), std::string("clip.") + GetParam() + ": h264 320x240 @ 25 fps, 30 frames");

    SyntheticScene scene(spec);
    ReadAll r = read_all(*source);
    EXPECT_EQ(r.status, ReadStatus::kEnd) << r.error;
    EXPECT_EQ(r.error, "");
    ASSERT_EQ(r.frames.size(), 30u);
    for (std::size_t i = 0; i < r.frames.size(); ++i) {
        const Frame& f = r.frames[i];
        SCOPED_TRACE("frame " + std::to_string(i));
        EXPECT_EQ(f.index, static_cast<long>(i));
        EXPECT_NEAR(f.pts, i / 25.0, 1e-3);
        EXPECT_EQ(f.width, 320);
        EXPECT_EQ(f.height, 240);
        ASSERT_EQ(f.luma.size(), 320u * 240u);
        ASSERT_EQ(f.rgb.size(), 320u * 240u * 3u);
        EXPECT_LT(luma_error(f, scene), 0.01);  // crf 0, full range: bit-exact in practice
        EXPECT_GE(f.decode_ms, 0.0);
        if (i > 0) {
            EXPECT_GT(f.pts, r.frames[i - 1].pts);
        }
        // Grey in, grey out: every RGB triple equals the luma.
        long off = 0;
        for (std::size_t p = 0; p < f.luma.size(); ++p)
            for (int c = 0; c < 3; ++c) off += std::abs(f.rgb[p * 3 + c] - f.luma[p]) > 1;
        EXPECT_EQ(off, 0);
    }
    // The end is sticky.
    Frame f;
    EXPECT_EQ(source->read(f), ReadStatus::kEnd);
}

INSTANTIATE_TEST_SUITE_P(Containers, RoundTrip, ::testing::Values("mkv", "mp4", "avi"));

TEST(Writer, LossyCrfStaysCloseToTruth) {
    TempDir dir("io");
    SyntheticClipSpec spec = small_spec(20);
    spec.crf = 20;
    const std::string path = dir.file("lossy.mp4");
    std::string error;
    ASSERT_EQ(write_synthetic_clip(path, spec, &error).size(), 20u) << error;
    auto source = open_source(path, &error);
    ASSERT_TRUE(source) << error;
    SyntheticScene scene(spec);
    ReadAll r = read_all(*source);
    EXPECT_EQ(r.status, ReadStatus::kEnd) << r.error;
    ASSERT_EQ(r.frames.size(), 20u);
    for (std::size_t i = 0; i < r.frames.size(); ++i) {
        const Frame& f = r.frames[i];
        EXPECT_EQ(f.index, static_cast<long>(i));
        EXPECT_NEAR(f.pts, i / 25.0, 1e-3) << "B-frames reorder; pts must not";
        EXPECT_LT(luma_error(f, scene, Range::kLimited), 3.0) << "frame " << i;
    }
}

TEST(Writer, OddSizeIsPaddedForYuv420AndKeptForLossless) {
    TempDir dir("io");
    SyntheticClipSpec spec = small_spec(6);
    spec.width = 321;
    spec.height = 241;
    SyntheticScene scene(spec);
    std::vector<std::uint8_t> truth;
    scene.render(0, truth);
    std::string error;
    for (int crf : {20, 0}) {
        SCOPED_TRACE("crf " + std::to_string(crf));
        spec.crf = crf;
        const std::string path = dir.file("odd" + std::to_string(crf) + ".mp4");
        ASSERT_EQ(write_synthetic_clip(path, spec, &error).size(), 6u) << error;
        auto source = open_source(path, &error);
        ASSERT_TRUE(source) << error;
        const Size expected = crf == 0 ? Size{321, 241} : Size{322, 242};
        EXPECT_EQ(source->size(), expected);
        ReadAll r = read_all(*source);
        EXPECT_EQ(r.status, ReadStatus::kEnd) << r.error;
        ASSERT_EQ(r.frames.size(), 6u);
        const Frame& f = r.frames[0];
        ASSERT_EQ(f.size(), expected);
        EXPECT_LT(luma_error(f, scene, crf == 0 ? Range::kFull : Range::kLimited), crf == 0 ? 0.01 : 3.0);
        if (crf != 0) {
            // The pad repeats the last column and row.
            const std::uint8_t* l = f.luma.data();
            EXPECT_LT(mean_abs_diff(l + 321, 322, l + 320, 322, 1, 241), 4.0);
            EXPECT_LT(mean_abs_diff(l + 241 * 322, 322, l + 240 * 322, 322, 321, 1), 4.0);
        }
    }
}

TEST(Writer, Mpeg4FallbackAndRgbInput) {
    TempDir dir("io");
    const std::string path = dir.file("rgb.avi");
    VideoWriterOptions options;
    options.codec = "mpeg4";
    options.crf = 0;
    options.fps = 10;
    std::string error;
    auto writer = VideoWriter::open(path, {64, 48}, options, &error);
    ASSERT_TRUE(writer) << error;
    // Left half red, right half blue, with a pitch wider than the row.
    const std::size_t pitch = 64 * 3 + 8;
    std::vector<std::uint8_t> rgb(pitch * 48, 0);
    for (int y = 0; y < 48; ++y)
        for (int x = 0; x < 64; ++x) rgb[y * pitch + x * 3 + (x < 32 ? 0 : 2)] = 200;
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(writer->write_rgb(rgb.data(), pitch, &error)) << error;
    ASSERT_TRUE(writer->close(&error)) << error;
    ASSERT_TRUE(writer->close(&error)) << "a second close is a no-op";
    EXPECT_FALSE(writer->write_rgb(rgb.data(), pitch, &error));
    EXPECT_NE(error.find("closed"), std::string::npos) << error;

    auto source = open_source(path, &error);
    ASSERT_TRUE(source) << error;
    EXPECT_NE(source->description().find("mpeg4 64x48 @ 10 fps"), std::string::npos) << source->description();
    ReadAll r = read_all(*source);
    EXPECT_EQ(r.status, ReadStatus::kEnd) << r.error;
    ASSERT_EQ(r.frames.size(), 5u);
    const Frame& f = r.frames[2];
    EXPECT_NEAR(f.pts, 0.2, 1e-3);
    const std::uint8_t* left = &f.rgb[(24 * 64 + 8) * 3];
    const std::uint8_t* right = &f.rgb[(24 * 64 + 56) * 3];
    EXPECT_NEAR(left[0], 200, 12);
    EXPECT_LT(left[2], 30);
    EXPECT_NEAR(right[2], 200, 12);
    EXPECT_LT(right[0], 30);
}

TEST(Writer, ReportsBadArguments) {
    TempDir dir("io");
    std::string error;
    EXPECT_FALSE(VideoWriter::open(dir.file("x.unknownext"), {32, 32}, {}, &error));
    EXPECT_NE(error.find("no container"), std::string::npos) << error;
    EXPECT_FALSE(VideoWriter::open(dir.file("missing/dir/x.mp4"), {32, 32}, {}, &error));
    EXPECT_NE(error.find("No such file or directory"), std::string::npos) << error;
    EXPECT_FALSE(VideoWriter::open(dir.file("x.mp4"), {0, 32}, {}, &error));
    EXPECT_NE(error.find("invalid frame size"), std::string::npos) << error;
    VideoWriterOptions options;
    options.codec = "no_such_codec";
    EXPECT_FALSE(VideoWriter::open(dir.file("x.mp4"), {32, 32}, options, &error));
    EXPECT_NE(error.find("no encoder 'no_such_codec'"), std::string::npos) << error;
}

TEST(Writer, DestructorFinishesTheFile) {
    TempDir dir("io");
    const std::string path = dir.file("unclosed.mkv");
    std::string error;
    {
        auto writer = VideoWriter::open(path, {64, 48}, {}, &error);
        ASSERT_TRUE(writer) << error;
        std::vector<std::uint8_t> gray(64 * 48, 90);
        for (int i = 0; i < 7; ++i) ASSERT_TRUE(writer->write_gray(gray.data(), 64, &error));
    }
    auto source = open_source(path, &error);
    ASSERT_TRUE(source) << error;
    ReadAll r = read_all(*source);
    EXPECT_EQ(r.status, ReadStatus::kEnd) << r.error;
    EXPECT_EQ(r.frames.size(), 7u);
}

// ---- Reader options ----

TEST(Source, RgbOnlyWhenAskedAndBuffersAreReused) {
    TempDir dir("io");
    const std::string path = dir.file("clip.mkv");
    std::string error;
    ASSERT_FALSE(write_synthetic_clip(path, small_spec(8), &error).empty()) << error;
    auto source = open_source(path, &error, /*want_rgb=*/false);
    ASSERT_TRUE(source) << error;
    Frame f;
    ASSERT_EQ(source->read(f), ReadStatus::kFrame);
    EXPECT_TRUE(f.rgb.empty());
    const std::uint8_t* first = f.luma.data();
    int frames = 1;
    while (source->read(f) == ReadStatus::kFrame) {
        EXPECT_EQ(f.luma.data(), first) << "luma buffer reallocated at frame " << f.index;
        ++frames;
    }
    EXPECT_EQ(frames, 8);
}

}  // namespace
}  // namespace corrtrack
