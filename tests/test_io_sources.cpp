// Image sequences, OTB folders and folders holding a video, read by FrameSource against the
// clips the tests write themselves; the sample asset and the real sequences when present.
// Part of test_io (test_io_*.cpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/io/frame_source.h"
#include "tests/support/read_source.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

namespace fs = std::filesystem;

TEST(Sequence, PngPatternReadsBackExactly) {
    TempDir dir("io");
    const SyntheticClipSpec spec = small_spec(12);
    const std::string pattern = dir.file("frames/%05d.png");
    std::string error;
    ASSERT_EQ(write_synthetic_sequence(pattern, spec, &error).size(), 12u) << error;
    ASSERT_TRUE(fs::exists(dir.file("frames/00001.png")));
    ASSERT_TRUE(fs::exists(dir.file("frames/00012.png")));

    SourceOptions o;
    o.input = pattern;
    o.sequence_fps = 12.5;
    auto source = FrameSource::open(o, &error);
    ASSERT_TRUE(source) << error;
    EXPECT_EQ(source->frame_count(), 12);
    EXPECT_DOUBLE_EQ(source->fps(), 12.5);
    EXPECT_EQ(source->description(), "frames/%05d.png: png 320x240 @ 12.5 fps, 12 frames");
    SyntheticScene scene(spec);
    ReadAll r = read_all(*source);
    EXPECT_EQ(r.status, ReadStatus::kEnd) << r.error;
    ASSERT_EQ(r.frames.size(), 12u);
    for (std::size_t i = 0; i < r.frames.size(); ++i) {
        EXPECT_EQ(r.frames[i].index, static_cast<long>(i));
        EXPECT_NEAR(r.frames[i].pts, i / 12.5, 1e-6);
        EXPECT_EQ(luma_error(r.frames[i], scene), 0.0) << "png is lossless";
    }
}

TEST(Sequence, StartNumberIsFoundAndGapsAreReported) {
    TempDir dir("io");
    const SyntheticClipSpec spec = small_spec(10);
    std::string error;
    ASSERT_EQ(write_synthetic_sequence(dir.file("s/img%03d.png"), spec, &error).size(), 10u) << error;
    for (int n = 1; n <= 3; ++n) fs::remove(dir.file("s/img00" + std::to_string(n) + ".png"));

    auto source = open_source(dir.file("s/img%03d.png"), &error);
    ASSERT_TRUE(source) << error;
    EXPECT_EQ(source->frame_count(), 7);
    SyntheticScene scene(spec);
    ReadAll r = read_all(*source);
    EXPECT_EQ(r.status, ReadStatus::kEnd) << r.error;
    ASSERT_EQ(r.frames.size(), 7u);
    EXPECT_EQ(r.frames[0].index, 0);
    EXPECT_DOUBLE_EQ(r.frames[0].pts, 0.0);
    // File 4 holds clip frame 3.
    std::vector<std::uint8_t> truth;
    scene.render(3, truth);
    EXPECT_EQ(mean_abs_diff(r.frames[0].luma.data(), 320, truth.data(), 320, 320, 240), 0.0);

    // A hole in the middle: the frames before it arrive, then a clear error.
    fs::remove(dir.file("s/img007.png"));
    source = open_source(dir.file("s/img%03d.png"), &error);
    ASSERT_TRUE(source) << error;
    r = read_all(*source);
    EXPECT_EQ(r.frames.size(), 3u);
    EXPECT_EQ(r.status, ReadStatus::kError);
    EXPECT_NE(r.error.find("img007.png is missing"), std::string::npos) << r.error;
}

TEST(Sequence, OtbFolderAndItsImgFolderOpenAsSequences) {
    TempDir dir("io");
    const SyntheticClipSpec spec = small_spec(15);
    const std::string folder = dir.file("otb_synth");
    std::string error;
    const std::vector<TruthBox> truth = write_otb_folder(folder, spec, &error);
    ASSERT_EQ(truth.size(), 15u) << error;
    std::ifstream gt(folder + "/groundtruth_rect.txt");
    std::string first_line;
    std::getline(gt, first_line);
    char expected[128];
    std::snprintf(expected, sizeof expected, "%.4f,%.4f,%.4f,%.4f", truth[0].x + 1, truth[0].y + 1, truth[0].w,
                  truth[0].h);
    EXPECT_EQ(first_line, expected);

    SyntheticScene scene(spec);
    for (const std::string& input : {folder, folder + "/", folder + "/img"}) {
        SCOPED_TRACE(input);
        auto source = open_source(input, &error);
        ASSERT_TRUE(source) << error;
        EXPECT_EQ(source->frame_count(), 15);
        EXPECT_NE(source->description().find("mjpeg 320x240 @ 30 fps, 15 frames"), std::string::npos)
            << source->description();
        ReadAll r = read_all(*source);
        EXPECT_EQ(r.status, ReadStatus::kEnd) << r.error;
        ASSERT_EQ(r.frames.size(), 15u);
        for (const Frame& f : r.frames) EXPECT_LT(luma_error(f, scene), 2.5);  // JPEG q2
    }
    EXPECT_EQ(open_source(folder, &error)->description().rfind("otb_synth: ", 0), 0u);
}

TEST(Sequence, FolderWithVideoMkv) {
    TempDir dir("io");
    std::string error;
    ASSERT_FALSE(write_synthetic_clip(dir.file("seq/video.mkv"), small_spec(9), &error).empty()) << error;
    auto source = open_source(dir.file("seq"), &error);
    ASSERT_TRUE(source) << error;
    ReadAll r = read_all(*source);
    EXPECT_EQ(r.status, ReadStatus::kEnd) << r.error;
    EXPECT_EQ(r.frames.size(), 9u);
}

TEST(Sequence, FolderWithoutImagesOrVideo) {
    TempDir dir("io");
    fs::create_directories(dir.file("nothing/img"));
    std::ofstream(dir.file("nothing/readme.txt")) << "no frames here\n";
    std::string error;
    EXPECT_FALSE(open_source(dir.file("nothing"), &error));
    EXPECT_NE(error.find("no numbered images"), std::string::npos) << error;
    EXPECT_FALSE(open_source(dir.file("nothing/%05d.jpg"), &error));
    EXPECT_NE(error.find("no file matches"), std::string::npos) << error;
}

// ---- Real media ----

TEST(RealMedia, SampleAsset) {
    std::string error;
    auto source = open_source(std::string(CORRTRACK_SOURCE_DIR) + "/assets/sample.mp4", &error);
    ASSERT_TRUE(source) << error;
    EXPECT_EQ(source->description(), "sample.mp4: h264 768x576 @ 10 fps, 120 frames");
    ReadAll r = read_all(*source, /*keep_frames=*/false);
    EXPECT_EQ(r.status, ReadStatus::kEnd) << r.error;
    EXPECT_EQ(r.count, 120);
    EXPECT_NEAR(r.last_pts, 11.9, 1e-3);
}

TEST(RealMedia, OtbAndVotSequences) {
    const std::string data = CORRTRACK_DATA_DIR;
    if (!fs::exists(data + "/otb_dudek_first20")) GTEST_SKIP() << "no sequences in " << data;
    std::string error;
    auto source = open_source(data + "/otb_dudek_first20", &error);
    ASSERT_TRUE(source) << error;
    EXPECT_EQ(source->size(), (Size{720, 480}));
    ReadAll r = read_all(*source, false);
    EXPECT_EQ(r.status, ReadStatus::kEnd) << r.error;
    EXPECT_EQ(r.count, 20);

    if (!fs::exists(data + "/vot_traffic/video.mkv")) return;
    source = open_source(data + "/vot_traffic", &error);
    ASSERT_TRUE(source) << error;
    EXPECT_EQ(source->frame_count(), 191);
    r = read_all(*source, false);
    EXPECT_EQ(r.status, ReadStatus::kEnd) << r.error;
    EXPECT_EQ(r.count, 191);
}

}  // namespace
}  // namespace corrtrack
