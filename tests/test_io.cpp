// FrameSource and VideoWriter against clips the tests write themselves (exact truth), the
// sample asset, the real sequences when present, and every kind of bad input.
// Thread rules: single-threaded, except the local HTTP servers that play dead streams.
#include <gtest/gtest.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
}

#include <cuda_runtime.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <thread>

#include "app/io/frame_source.h"
#include "app/io/libav_handles.h"
#include "app/io/video_writer.h"
#include "corrtrack/correlator.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// libav's own log lines about the broken inputs below are expected; keep the output for
// failures (CORRTRACK_TEST_AV_LOG=1 shows them).
const bool kQuietLibav = [] {
    av_log_set_level(std::getenv("CORRTRACK_TEST_AV_LOG") ? AV_LOG_INFO : AV_LOG_QUIET);
    return true;
}();

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct ReadAll {
    std::vector<Frame> frames;  // only when kept
    long count = 0;
    double last_pts = -1;
    ReadStatus status = ReadStatus::kError;
    std::string error;
};

ReadAll read_all(FrameSource& source, bool keep_frames = true) {
    ReadAll r;
    Frame f;
    while ((r.status = source.read(f)) == ReadStatus::kFrame) {
        ++r.count;
        r.last_pts = f.pts;
        if (keep_frames) r.frames.push_back(f);
    }
    r.error = source.error();
    return r;
}

std::unique_ptr<FrameSource> open_source(const std::string& input, std::string* error, bool want_rgb = true) {
    SourceOptions o;
    o.input = input;
    o.want_rgb = want_rgb;
    return FrameSource::open(o, error);
}

SyntheticClipSpec small_spec(int frames = 24) {
    SyntheticClipSpec spec;
    spec.frames = frames;
    return spec;
}

// The raw Y value a limited-range (MPEG) YUV clip stores for grey v: luma is the Y plane as
// decoded, not expanded back to 0..255 (the video writer's rounding).
std::uint8_t limited_y(std::uint8_t v) { return static_cast<std::uint8_t>(16 + (v * 219 + 127) / 255); }

enum class Range { kFull, kLimited };

// Mean |decoded - truth| over the truth's size (a padded decode may be larger); a limited-range
// clip is compared with its raw Y values.
double luma_error(const Frame& f, const SyntheticScene& scene, Range range = Range::kFull) {
    std::vector<std::uint8_t> truth;
    scene.render(static_cast<int>(f.index), truth);
    if (range == Range::kLimited)
        for (std::uint8_t& v : truth) v = limited_y(v);
    const auto& s = scene.spec();
    return mean_abs_diff(f.luma.data(), static_cast<std::size_t>(f.width), truth.data(),
                         static_cast<std::size_t>(s.width), s.width, s.height);
}

// ---------------------------------------------------------------------------------------
// Writer -> reader round trips

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

// ---------------------------------------------------------------------------------------
// Reader options

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

// ---------------------------------------------------------------------------------------
// Image sequences and folders

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

// ---------------------------------------------------------------------------------------
// Bad files

TEST(BadInput, MissingFile) {
    std::string error;
    EXPECT_FALSE(open_source("/nonexistent/dir/x.mp4", &error));
    EXPECT_EQ(error, "cannot open '/nonexistent/dir/x.mp4': No such file or directory");
}

TEST(BadInput, EmptyFile) {
    TempDir dir("io");
    std::ofstream(dir.file("empty.mp4")).flush();
    std::string error;
    EXPECT_FALSE(open_source(dir.file("empty.mp4"), &error));
    EXPECT_EQ(error, "cannot open '" + dir.file("empty.mp4") + "': the file is empty");
}

TEST(BadInput, TextFileNamedMp4) {
    TempDir dir("io");
    std::ofstream(dir.file("notes.mp4")) << "These are my notes, not a video.\nSecond line.\n";
    std::string error;
    EXPECT_FALSE(open_source(dir.file("notes.mp4"), &error));
    EXPECT_EQ(error.rfind("'" + dir.file("notes.mp4") +
                              "' is not a video FFmpeg can read: Invalid data found when "
                              "processing input",
                          0),
              0u)
        << error;
}

// A WAV written through libavformat: a valid media file with no video.
void write_silent_wav(const std::string& path) {
    AVFormatContext* fc = nullptr;
    ASSERT_GE(avformat_alloc_output_context2(&fc, nullptr, nullptr, path.c_str()), 0);
    AVStream* st = avformat_new_stream(fc, nullptr);
    ASSERT_TRUE(st);
    st->codecpar->codec_type = AVMEDIA_TYPE_AUDIO;
    st->codecpar->codec_id = AV_CODEC_ID_PCM_S16LE;
    st->codecpar->sample_rate = 8000;
    av_channel_layout_default(&st->codecpar->ch_layout, 1);
    st->time_base = {1, 8000};
    ASSERT_GE(avio_open(&fc->pb, path.c_str(), AVIO_FLAG_WRITE), 0);
    ASSERT_GE(avformat_write_header(fc, nullptr), 0);
    AVPacket* pkt = av_packet_alloc();
    ASSERT_GE(av_new_packet(pkt, 1600), 0);
    std::memset(pkt->data, 0, 1600);
    pkt->pts = pkt->dts = 0;
    pkt->duration = 800;
    ASSERT_GE(av_write_frame(fc, pkt), 0);
    av_packet_free(&pkt);
    ASSERT_GE(av_write_trailer(fc), 0);
    avio_closep(&fc->pb);
    avformat_free_context(fc);
}

TEST(BadInput, NoVideoStream) {
    TempDir dir("io");
    ASSERT_NO_FATAL_FAILURE(write_silent_wav(dir.file("sound.wav")));
    std::string error;
    EXPECT_FALSE(open_source(dir.file("sound.wav"), &error));
    EXPECT_EQ(error, "'" + dir.file("sound.wav") + "' has no video stream");
}

std::string cut_copy(const std::string& from, const std::string& to, double fraction) {
    std::ifstream in(from, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bytes.resize(static_cast<std::size_t>(bytes.size() * fraction));
    std::ofstream(to, std::ios::binary) << bytes;
    return to;
}

class Truncated : public ::testing::TestWithParam<const char*> {};

// The good frames arrive, then an error that says the file ended early; never a clean end.
TEST_P(Truncated, HalfAFileEndsWithAnError) {
    TempDir dir("io");
    const std::string ext = GetParam();
    const SyntheticClipSpec spec = small_spec(40);
    std::string error;
    ASSERT_FALSE(write_synthetic_clip(dir.file("whole." + ext), spec, &error).empty()) << error;
    const std::string cut = cut_copy(dir.file("whole." + ext), dir.file("half." + ext), 0.5);

    auto source = open_source(cut, &error);
    ASSERT_TRUE(source) << error;
    SyntheticScene scene(spec);
    ReadAll r = read_all(*source);
    EXPECT_EQ(r.status, ReadStatus::kError);
    EXPECT_GT(r.frames.size(), 5u);
    EXPECT_LT(r.frames.size(), 40u);
    const std::string last = std::to_string(static_cast<long>(r.frames.size()) - 1);
    EXPECT_TRUE(r.error.find("ended early") != std::string::npos ||
                r.error.find("corrupt after frame " + last) != std::string::npos)
        << r.error;
    EXPECT_NE(r.error.find("half." + ext), std::string::npos) << r.error;
    // What was delivered is right, except perhaps the last frames before the cut.
    for (std::size_t i = 0; i + 2 < r.frames.size(); ++i)
        EXPECT_LT(luma_error(r.frames[i], scene), 0.01) << "frame " << i;
    Frame f;
    EXPECT_EQ(source->read(f), ReadStatus::kError) << "the error is sticky";
}

INSTANTIATE_TEST_SUITE_P(Containers, Truncated, ::testing::Values("mkv", "mp4"));

TEST(BadInput, TruncatedToItsFirstBytes) {
    TempDir dir("io");
    std::string error;
    ASSERT_FALSE(write_synthetic_clip(dir.file("whole.mkv"), small_spec(10), &error).empty());
    for (double fraction : {0.002, 0.02}) {
        const std::string cut = cut_copy(dir.file("whole.mkv"), dir.file("stub.mkv"), fraction);
        auto source = open_source(cut, &error);
        if (!source) {
            EXPECT_NE(error.find("stub.mkv"), std::string::npos) << error;
            continue;
        }
        ReadAll r = read_all(*source);
        EXPECT_EQ(r.status, ReadStatus::kError) << "fraction " << fraction;
        EXPECT_FALSE(r.error.empty());
    }
}

TEST(BadInput, GarbageInTheMiddleIsReported) {
    TempDir dir("io");
    std::string error;
    const SyntheticClipSpec spec = small_spec(30);
    ASSERT_FALSE(write_synthetic_clip(dir.file("clip.mkv"), spec, &error).empty()) << error;
    std::fstream io(dir.file("clip.mkv"), std::ios::in | std::ios::out | std::ios::binary);
    io.seekg(0, std::ios::end);
    const std::streamoff size = io.tellg();
    std::string junk(static_cast<std::size_t>(size / 20), '\0');
    std::uint32_t x = 12345;
    for (char& c : junk) c = static_cast<char>((x = x * 1664525u + 1013904223u) >> 24);
    io.seekp(size / 2);
    io.write(junk.data(), static_cast<std::streamsize>(junk.size()));
    io.close();

    auto source = open_source(dir.file("clip.mkv"), &error);
    ASSERT_TRUE(source) << error;
    ReadAll r = read_all(*source);
    EXPECT_EQ(r.status, ReadStatus::kError);
    EXPECT_NE(r.error.find("clip.mkv"), std::string::npos) << r.error;
    EXPECT_GT(r.frames.size(), 5u);
}

// ---------------------------------------------------------------------------------------
// Cameras and URLs

TEST(Live, MissingCamera) {
    std::string error;
    const auto t0 = Clock::now();
    EXPECT_FALSE(open_source("/dev/video97", &error));
    EXPECT_LT(seconds_since(t0), 3.0);
    EXPECT_EQ(error.rfind("cannot open camera '/dev/video97': No such file or directory", 0), 0u) << error;
}

TEST(Live, UnreachableRtspFailsFast) {
    std::string error;
    const auto t0 = Clock::now();
    EXPECT_FALSE(open_source("rtsp://127.0.0.1:9/x", &error));
    EXPECT_LT(seconds_since(t0), 5.0);
    EXPECT_NE(error.find("'rtsp://127.0.0.1:9/x'"), std::string::npos) << error;
}

TEST(Live, PasswordsStayOutOfMessages) {
    std::string error;
    EXPECT_FALSE(open_source("rtsp://admin:hunter2@127.0.0.1:9/x", &error));
    EXPECT_EQ(error.find("hunter2"), std::string::npos) << error;
    EXPECT_NE(error.find("rtsp://***@127.0.0.1:9/x"), std::string::npos) << error;
}

// A local HTTP server that answers with `body` and then keeps the connection open without
// sending more: a stream that stalls. With answer=false it never answers at all.
class StallingServer {
public:
    StallingServer(std::string body, bool answer) : body_(std::move(body)), answer_(answer) {
        fd_ = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = 0;
        int one = 1;
        setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd_, 4) != 0) return;
        socklen_t len = sizeof addr;
        getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
        port_ = ntohs(addr.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~StallingServer() {
        stop_ = true;
        shutdown(fd_, SHUT_RDWR);
        close(fd_);
        if (thread_.joinable()) thread_.join();
        for (int c : clients_) close(c);
    }
    int port() const { return port_; }

private:
    void serve() {
        for (;;) {
            int c = accept(fd_, nullptr, nullptr);
            if (c < 0 || stop_) {
                if (c >= 0) close(c);
                return;
            }
            clients_.push_back(c);
            char request[4096];
            (void)recv(c, request, sizeof request, 0);
            if (!answer_) continue;
            const std::string head = "HTTP/1.0 200 OK\r\nContent-Type: video/x-matroska\r\n\r\n";
            (void)send(c, head.data(), head.size(), MSG_NOSIGNAL);
            (void)send(c, body_.data(), body_.size(), MSG_NOSIGNAL);
        }
    }
    std::string body_;
    bool answer_;
    int fd_ = -1;
    int port_ = 0;
    std::atomic<bool> stop_{false};
    std::vector<int> clients_;  // kept open: the stall
    std::thread thread_;
};

TEST(Live, ServerThatNeverAnswersHitsTheOpenTimeout) {
    StallingServer server("", /*answer=*/false);
    ASSERT_GT(server.port(), 0);
    SourceOptions o;
    o.input = "http://127.0.0.1:" + std::to_string(server.port()) + "/stream.mkv";
    o.open_timeout_s = 1.0;
    o.read_timeout_s = 1.0;
    std::string error;
    const auto t0 = Clock::now();
    EXPECT_FALSE(FrameSource::open(o, &error));
    EXPECT_LT(seconds_since(t0), 4.0);
    EXPECT_NE(error.find("timeout"), std::string::npos) << error;
}

TEST(Live, StreamThatStallsHitsTheReadTimeout) {
    TempDir dir("io");
    std::string error;
    ASSERT_FALSE(write_synthetic_clip(dir.file("clip.mkv"), small_spec(40), &error).empty());
    std::ifstream in(dir.file("clip.mkv"), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bytes.resize(bytes.size() / 2);
    StallingServer server(bytes, /*answer=*/true);
    ASSERT_GT(server.port(), 0);

    SourceOptions o;
    o.input = "http://127.0.0.1:" + std::to_string(server.port()) + "/stream.mkv";
    o.open_timeout_s = 5.0;
    o.read_timeout_s = 1.0;
    auto source = FrameSource::open(o, &error);
    ASSERT_TRUE(source) << error;
    EXPECT_TRUE(source->live());
    EXPECT_EQ(source->frame_count(), -1);
    Frame f;
    long frames = 0;
    ReadStatus status;
    auto t_last = Clock::now();
    while ((status = source->read(f)) == ReadStatus::kFrame) {
        ++frames;
        t_last = Clock::now();
    }
    const double stall = seconds_since(t_last);
    EXPECT_EQ(status, ReadStatus::kError);
    EXPECT_GT(frames, 5);
    EXPECT_LT(frames, 40);
    EXPECT_GE(stall, 0.9);
    EXPECT_LT(stall, 4.0);
    EXPECT_NE(source->error().find("read timeout"), std::string::npos) << source->error();
}

// ---------------------------------------------------------------------------------------
// Decode modes and NVDEC

TEST(DecodeMode, NamesRoundTripAndBadNamesAreRefused) {
    EXPECT_STREQ(to_string(DecodeMode::kSoftware), "sw");
    EXPECT_STREQ(to_string(DecodeMode::kNvdec), "nvdec");
    EXPECT_STREQ(to_string(DecodeMode::kAuto), "auto");
    for (DecodeMode m : {DecodeMode::kSoftware, DecodeMode::kNvdec, DecodeMode::kAuto}) {
        DecodeMode back = m == DecodeMode::kAuto ? DecodeMode::kSoftware : DecodeMode::kAuto;
        EXPECT_TRUE(parse_decode_mode(to_string(m), &back)) << to_string(m);
        EXPECT_EQ(back, m);
    }
    for (const char* bad : {"", "NVDEC", "Sw", "gpu", "cuda", "software", "nvdec ", "auto\n"}) {
        DecodeMode kept = DecodeMode::kAuto;
        EXPECT_FALSE(parse_decode_mode(bad, &kept)) << "'" << bad << "'";
        EXPECT_EQ(kept, DecodeMode::kAuto) << "a refused name leaves the value alone";
    }
    const SourceOptions defaults;
    EXPECT_EQ(defaults.decode, DecodeMode::kSoftware);
    EXPECT_EQ(defaults.cuda_stream, nullptr);
    EXPECT_TRUE(defaults.want_host_luma);
    EXPECT_EQ(defaults.held_frames, 6);
}

// Everything a consumer sees of a decode, with the luma plane on the host whichever way it
// was decoded (device planes are downloaded with cudaMemcpy2D).
struct Decoded {
    std::vector<std::vector<std::uint8_t>> luma, rgb;
    std::vector<double> pts;
    std::vector<long> index;
    long device_frames = 0, host_luma_frames = 0;
    ReadStatus status = ReadStatus::kError;
    std::string error, mode, note, description;
};

std::vector<std::uint8_t> download_device_luma(const Frame& f, cudaStream_t stream) {
    std::vector<std::uint8_t> host(static_cast<std::size_t>(f.width) * f.height);
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_EQ(
        cudaMemcpy2D(host.data(), f.width, f.device.data, f.device.pitch, f.width, f.height, cudaMemcpyDeviceToHost),
        cudaSuccess);
    return host;
}

// Frames are dropped as they are read (an NVDEC frame holds a decoder surface), unless
// `hold` asks to keep that many of them alive at once, as the frame ring does.
Decoded decode(const std::string& path, DecodeMode mode, bool want_rgb = true, bool want_host_luma = true,
               cudaStream_t stream = nullptr, int hold = 0) {
    Decoded d;
    SourceOptions o;
    o.input = path;
    o.decode = mode;
    o.want_rgb = want_rgb;
    o.want_host_luma = want_host_luma;
    o.cuda_stream = stream;
    std::string error;
    auto source = FrameSource::open(o, &error);
    if (!source) {
        d.error = error;
        return d;
    }
    d.mode = source->decode_mode();
    d.note = source->decode_note();
    d.description = source->description();
    std::deque<Frame> held;
    Frame f;
    while ((d.status = source->read(f)) == ReadStatus::kFrame) {
        d.pts.push_back(f.pts);
        d.index.push_back(f.index);
        d.rgb.emplace_back(f.rgb.begin(), f.rgb.end());
        if (f.on_device()) {
            ++d.device_frames;
            d.luma.push_back(download_device_luma(f, stream));
            if (f.has_host_luma()) {
                ++d.host_luma_frames;
                EXPECT_TRUE(std::equal(f.luma.begin(), f.luma.end(), d.luma.back().begin()))
                    << "host luma differs from the device plane at frame " << f.index;
            }
        } else {
            if (f.has_host_luma()) ++d.host_luma_frames;
            d.luma.emplace_back(f.luma.begin(), f.luma.end());
        }
        if (hold > 0) {
            held.push_back(f);
            if (static_cast<int>(held.size()) > hold) held.pop_front();
        }
    }
    d.error = source->error();
    return d;
}

void expect_identical(const Decoded& a, const Decoded& b) {
    EXPECT_EQ(a.status, b.status) << a.error << " / " << b.error;
    EXPECT_EQ(a.error, b.error);
    ASSERT_EQ(a.luma.size(), b.luma.size());
    EXPECT_EQ(a.pts, b.pts);
    EXPECT_EQ(a.index, b.index);
    for (std::size_t i = 0; i < a.luma.size(); ++i) {
        EXPECT_EQ(a.luma[i], b.luma[i]) << "luma of frame " << i;
        EXPECT_EQ(a.rgb[i], b.rgb[i]) << "rgb of frame " << i;
    }
}

struct Diff {
    double mean = 0;
    int max = 0;
};
Diff luma_diff(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
    Diff d;
    if (a.size() != b.size() || a.empty()) return {1e9, 255};
    double sum = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const int e = std::abs(int(a[i]) - int(b[i]));
        sum += e;
        d.max = std::max(d.max, e);
    }
    d.mean = sum / static_cast<double>(a.size());
    return d;
}

// An 8-bit 4:2:0 H.264 clip (libx264, B-frames), the kind NVDEC decodes. Lossless x264 (the
// VideoWriter's crf 0) is High 4:4:4, which NVDEC does not take. Full range stores the scene's
// grey levels as they are, so the software GRAY8 and the raw Y plane hold the same values;
// limited range stores 16 + 219/255 of them.
bool write_h264_420(const std::string& path, const SyntheticClipSpec& spec, bool full_range, std::string* error) {
    const AVCodec* codec = avcodec_find_encoder_by_name("libx264");
    if (!codec) {
        *error = "this FFmpeg has no libx264 encoder";
        return false;
    }
    AVFormatContext* raw_fc = nullptr;
    if (avformat_alloc_output_context2(&raw_fc, nullptr, nullptr, path.c_str()) < 0) {
        *error = "no muxer for " + path;
        return false;
    }
    std::unique_ptr<AVFormatContext, void (*)(AVFormatContext*)> fc(raw_fc, [](AVFormatContext* c) {
        if (c->pb) avio_closep(&c->pb);
        avformat_free_context(c);
    });
    std::unique_ptr<AVCodecContext, CodecFreer> cc(avcodec_alloc_context3(codec));
    AVStream* st = avformat_new_stream(fc.get(), nullptr);
    const int fps = static_cast<int>(spec.fps);
    cc->width = spec.width;
    cc->height = spec.height;
    cc->time_base = {1, fps};
    cc->framerate = {fps, 1};
    cc->pix_fmt = AV_PIX_FMT_YUV420P;
    cc->color_range = full_range ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
    cc->gop_size = 12;
    cc->max_b_frames = 2;
    cc->thread_count = 1;
    av_opt_set(cc->priv_data, "preset", "veryfast", 0);
    av_opt_set(cc->priv_data, "crf", "12", 0);
    if (fc->oformat->flags & AVFMT_GLOBALHEADER) cc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    if (avcodec_open2(cc.get(), codec, nullptr) < 0 || avcodec_parameters_from_context(st->codecpar, cc.get()) < 0) {
        *error = "cannot start libx264";
        return false;
    }
    st->time_base = cc->time_base;
    if (avio_open(&fc->pb, path.c_str(), AVIO_FLAG_WRITE) < 0 || avformat_write_header(fc.get(), nullptr) < 0) {
        *error = "cannot write " + path;
        return false;
    }
    std::unique_ptr<AVFrame, FrameFreer> frame(av_frame_alloc());
    std::unique_ptr<AVPacket, PacketFreer> pkt(av_packet_alloc());
    frame->format = cc->pix_fmt;
    frame->width = spec.width;
    frame->height = spec.height;
    frame->color_range = cc->color_range;
    if (av_frame_get_buffer(frame.get(), 0) < 0) return false;
    SyntheticScene scene(spec);
    std::vector<std::uint8_t> luma;
    auto drain = [&]() {
        while (avcodec_receive_packet(cc.get(), pkt.get()) == 0) {
            pkt->duration = 1;  // else mp4's edit list ends before the last frame
            av_packet_rescale_ts(pkt.get(), cc->time_base, st->time_base);
            pkt->stream_index = st->index;
            if (av_interleaved_write_frame(fc.get(), pkt.get()) < 0) return false;
        }
        return true;
    };
    for (int i = 0; i < spec.frames; ++i) {
        if (av_frame_make_writable(frame.get()) < 0) return false;
        scene.render(i, luma);
        for (int y = 0; y < spec.height; ++y)
            for (int x = 0; x < spec.width; ++x) {
                const int v = luma[static_cast<std::size_t>(y) * spec.width + x];
                frame->data[0][y * frame->linesize[0] + x] = full_range ? v : limited_y(v);
            }
        for (int p = 1; p < 3; ++p)
            for (int y = 0; y < spec.height / 2; ++y)
                std::memset(frame->data[p] + y * frame->linesize[p], 128, spec.width / 2);
        frame->pts = i;
        if (avcodec_send_frame(cc.get(), frame.get()) < 0 || !drain()) {
            *error = "encoding failed at frame " + std::to_string(i);
            return false;
        }
    }
    if (avcodec_send_frame(cc.get(), nullptr) < 0 || !drain() || av_write_trailer(fc.get()) < 0) {
        *error = "cannot finish " + path;
        return false;
    }
    return true;
}

// The Y planes of every frame as libavcodec decodes them, with no conversion: what the
// tracker's luma must be for YUV input.
std::vector<std::vector<std::uint8_t>> raw_y_planes(const std::string& path) {
    std::vector<std::vector<std::uint8_t>> planes;
    AVFormatContext* raw = nullptr;
    if (avformat_open_input(&raw, path.c_str(), nullptr, nullptr) < 0) return planes;
    std::unique_ptr<AVFormatContext, void (*)(AVFormatContext*)> fc(
        raw, [](AVFormatContext* c) { avformat_close_input(&c); });
    if (avformat_find_stream_info(fc.get(), nullptr) < 0) return planes;
    const int si = av_find_best_stream(fc.get(), AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
    if (si < 0) return planes;
    const AVCodec* codec = avcodec_find_decoder(fc->streams[si]->codecpar->codec_id);
    std::unique_ptr<AVCodecContext, CodecFreer> cc(avcodec_alloc_context3(codec));
    if (!codec || !cc || avcodec_parameters_to_context(cc.get(), fc->streams[si]->codecpar) < 0 ||
        avcodec_open2(cc.get(), codec, nullptr) < 0)
        return planes;
    std::unique_ptr<AVPacket, PacketFreer> pkt(av_packet_alloc());
    std::unique_ptr<AVFrame, FrameFreer> frame(av_frame_alloc());
    auto drain = [&] {
        while (avcodec_receive_frame(cc.get(), frame.get()) >= 0) {
            std::vector<std::uint8_t> y(static_cast<std::size_t>(frame->width) * frame->height);
            for (int r = 0; r < frame->height; ++r)
                std::memcpy(&y[static_cast<std::size_t>(r) * frame->width],
                            frame->data[0] + static_cast<std::ptrdiff_t>(r) * frame->linesize[0], frame->width);
            planes.push_back(std::move(y));
        }
    };
    while (av_read_frame(fc.get(), pkt.get()) >= 0) {
        if (pkt->stream_index == si && avcodec_send_packet(cc.get(), pkt.get()) >= 0) drain();
        av_packet_unref(pkt.get());
    }
    avcodec_send_packet(cc.get(), nullptr);
    drain();
    return planes;
}

// Software decode hands the tracker YUV's Y plane as decoded, limited range or full: no
// range expansion, the same bytes NVDEC leaves on the device.
TEST(Nvdec, SoftwareLumaIsTheRawYPlane) {
    TempDir dir("io");
    std::string error;
    for (bool full : {false, true}) {
        SCOPED_TRACE(full ? "full range" : "limited range");
        const std::string path = dir.file(full ? "full.mp4" : "limited.mp4");
        ASSERT_TRUE(write_h264_420(path, small_spec(12), full, &error)) << error;
        const auto raw = raw_y_planes(path);
        const Decoded sw = decode(path, DecodeMode::kSoftware, /*want_rgb=*/true);
        ASSERT_EQ(raw.size(), 12u);
        ASSERT_EQ(sw.luma.size(), raw.size()) << sw.error;
        for (std::size_t i = 0; i < raw.size(); ++i) EXPECT_EQ(luma_diff(sw.luma[i], raw[i]).max, 0) << "frame " << i;
        // Limited range stays in 16..235 (the scene's 0..255 stored as video levels).
        const auto [lo, hi] = std::minmax_element(sw.luma[5].begin(), sw.luma[5].end());
        if (!full) {
            EXPECT_GE(*lo, 14);
            EXPECT_LE(*hi, 237);
        }
    }
}

// Without a GPU, --decode nvdec opens, says why it decodes on the CPU, and decodes exactly
// as software does.
TEST(Nvdec, WithoutGpuDecodesOnTheCpuAndSaysWhy) {
    if (cuda_available()) GTEST_SKIP() << "a CUDA GPU is present: the NvdecGpu tests run instead";
    TempDir dir("io");
    std::string error;
    const std::string lossless = dir.file("lossless.mkv");
    ASSERT_FALSE(write_synthetic_clip(lossless, small_spec(20), &error).empty()) << error;
    const std::string lossy = dir.file("lossy.mp4");
    ASSERT_TRUE(write_h264_420(lossy, small_spec(20), /*full_range=*/false, &error)) << error;
    const std::string full = dir.file("full.mp4");
    ASSERT_TRUE(write_h264_420(full, small_spec(20), /*full_range=*/true, &error)) << error;
    for (const std::string& path : {lossless, lossy, full}) {
        SCOPED_TRACE(path);
        const Decoded sw = decode(path, DecodeMode::kSoftware);
        ASSERT_EQ(sw.luma.size(), 20u) << sw.error;
        EXPECT_EQ(sw.status, ReadStatus::kEnd) << sw.error;
        EXPECT_EQ(sw.mode, "sw");
        EXPECT_EQ(sw.note, "");
        // The software decode gives the Y values as stored: the scene, limited to 16..235 in
        // the limited-range clip.
        SyntheticScene scene(small_spec(20));
        std::vector<std::uint8_t> truth;
        scene.render(7, truth);
        if (path == lossy)
            for (std::uint8_t& v : truth) v = limited_y(v);
        EXPECT_LT(mean_abs_diff(sw.luma[7].data(), 320, truth.data(), 320, 320, 240), 3.0);

        const Decoded nv = decode(path, DecodeMode::kNvdec, true, /*want_host_luma=*/false);
        std::printf("--decode nvdec note: %s\n", nv.note.c_str());
        EXPECT_EQ(nv.mode, "sw");
        EXPECT_NE(nv.note.find("NVDEC"), std::string::npos) << nv.note;
        EXPECT_NE(nv.note.find("CPU"), std::string::npos) << nv.note;
        EXPECT_EQ(nv.note.find('\n'), std::string::npos) << "one line: " << nv.note;
        EXPECT_EQ(nv.description, sw.description);
        EXPECT_EQ(nv.device_frames, 0);
        EXPECT_EQ(nv.host_luma_frames, 20) << "software frames always carry host luma";
        expect_identical(nv, sw);

        const Decoded au = decode(path, DecodeMode::kAuto);
        EXPECT_EQ(au.mode, "sw");
        EXPECT_EQ(au.note, "") << "auto without a GPU is no news";
        expect_identical(au, sw);
    }
}

TEST(Nvdec, ImageSequencesDecodeOnTheCpu) {
    TempDir dir("io");
    std::string error;
    const std::string pattern = dir.file("frames/%05d.png");
    ASSERT_EQ(write_synthetic_sequence(pattern, small_spec(5), &error).size(), 5u) << error;
    const Decoded sw = decode(pattern, DecodeMode::kSoftware);
    const Decoded nv = decode(pattern, DecodeMode::kNvdec);
    EXPECT_EQ(nv.mode, "sw");
    EXPECT_NE(nv.note.find("NVDEC"), std::string::npos) << nv.note;
    expect_identical(nv, sw);
    const Decoded au = decode(pattern, DecodeMode::kAuto);
    EXPECT_EQ(au.mode, "sw");
    EXPECT_EQ(au.note, "");
}

// NVDEC and libavcodec decode H.264 8-bit 4:2:0 bit-exactly, and a full-range clip makes the
// software GRAY8 equal to the raw Y plane, so the device plane must equal the software luma.
TEST(NvdecGpu, DeviceFramesMatchTheSoftwareDecode) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine: NVDEC test skipped";
    TempDir dir("io");
    std::string error;
    const std::string path = dir.file("full.mp4");
    ASSERT_TRUE(write_h264_420(path, small_spec(30), /*full_range=*/true, &error)) << error;
    const Decoded sw = decode(path, DecodeMode::kSoftware, /*want_rgb=*/false);
    ASSERT_EQ(sw.luma.size(), 30u) << sw.error;

    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    const Decoded nv = decode(path, DecodeMode::kNvdec, /*want_rgb=*/false,
                              /*want_host_luma=*/false, stream);
    EXPECT_EQ(nv.mode, "nvdec") << nv.note;
    EXPECT_EQ(nv.note, "");
    EXPECT_EQ(nv.description, sw.description + ", nvdec");
    EXPECT_EQ(nv.status, ReadStatus::kEnd) << nv.error;
    ASSERT_EQ(nv.luma.size(), 30u) << nv.error;
    EXPECT_EQ(nv.device_frames, 30);
    EXPECT_EQ(nv.host_luma_frames, 0) << "want_host_luma=false leaves Frame::luma empty";
    EXPECT_EQ(nv.pts, sw.pts);
    EXPECT_EQ(nv.index, sw.index);
    for (std::size_t i = 0; i < nv.luma.size(); ++i) {
        EXPECT_TRUE(nv.rgb[i].empty());
        const Diff d = luma_diff(nv.luma[i], sw.luma[i]);
        EXPECT_EQ(d.max, 0) << "frame " << i << ", mean " << d.mean;
        if (i == 0 || d.max > 0) std::printf("frame %zu: mean %.4f max %d\n", i, d.mean, d.max);
    }
    EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST(NvdecGpu, HostLumaAndRgbComeWithTheDevicePlane) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine: NVDEC test skipped";
    TempDir dir("io");
    std::string error;
    const std::string path = dir.file("full.mkv");
    ASSERT_TRUE(write_h264_420(path, small_spec(20), /*full_range=*/true, &error)) << error;
    const Decoded sw = decode(path, DecodeMode::kSoftware);
    ASSERT_EQ(sw.luma.size(), 20u) << sw.error;
    // The legacy default stream (cuda_stream null); decode() checks host == device bytes.
    const Decoded nv = decode(path, DecodeMode::kNvdec, /*want_rgb=*/true, /*want_host_luma=*/true);
    EXPECT_EQ(nv.mode, "nvdec") << nv.note;
    EXPECT_EQ(nv.status, ReadStatus::kEnd) << nv.error;
    ASSERT_EQ(nv.luma.size(), 20u);
    EXPECT_EQ(nv.device_frames, 20);
    EXPECT_EQ(nv.host_luma_frames, 20);
    for (std::size_t i = 0; i < nv.luma.size(); ++i) {
        const Diff d = luma_diff(nv.luma[i], sw.luma[i]);
        EXPECT_EQ(d.max, 0) << "frame " << i << ", mean " << d.mean;
        const Diff c = luma_diff(nv.rgb[i], sw.rgb[i]);  // NV12 vs planar 4:2:0 through swscale
        EXPECT_LT(c.mean, 1.0) << "rgb of frame " << i << ", max " << c.max;
    }
}

// The consumer may hold held_frames frames (the ring's slots) without starving the decoder.
TEST(NvdecGpu, HoldingHeldFramesKeepsDecoding) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine: NVDEC test skipped";
    TempDir dir("io");
    std::string error;
    const std::string path = dir.file("full.mp4");
    ASSERT_TRUE(write_h264_420(path, small_spec(40), /*full_range=*/true, &error)) << error;
    const Decoded nv = decode(path, DecodeMode::kNvdec, false, false, nullptr,
                              /*hold=*/SourceOptions{}.held_frames);
    EXPECT_EQ(nv.mode, "nvdec") << nv.note;
    EXPECT_EQ(nv.status, ReadStatus::kEnd) << nv.error;
    EXPECT_EQ(nv.device_frames, 40);
}

// Limited range: NVDEC's device plane and the software decode both give the raw Y values
// (no range expansion), so the two are the same bytes and track the same boxes.
TEST(NvdecGpu, LimitedRangeDevicePlaneEqualsTheSoftwareLuma) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine: NVDEC test skipped";
    TempDir dir("io");
    std::string error;
    const std::string path = dir.file("limited.mp4");
    ASSERT_TRUE(write_h264_420(path, small_spec(10), /*full_range=*/false, &error)) << error;
    const Decoded sw = decode(path, DecodeMode::kSoftware, false);
    const Decoded nv = decode(path, DecodeMode::kAuto, false, false);
    EXPECT_EQ(nv.mode, "nvdec") << nv.note;
    ASSERT_EQ(nv.luma.size(), sw.luma.size());
    for (std::size_t i = 0; i < nv.luma.size(); ++i) {
        const Diff d = luma_diff(nv.luma[i], sw.luma[i]);
        EXPECT_EQ(d.max, 0) << "frame " << i << ", mean " << d.mean;
    }
}

// Lossless x264 is High 4:4:4 Predictive: NVDEC refuses it at the first frame and the packets
// go to a software decoder, so every frame still arrives, equal to a software decode. (If a
// GPU ever decodes it, the frames must still match.)
TEST(NvdecGpu, StreamNvdecRefusesFallsBackWithoutLosingFrames) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU on this machine: NVDEC test skipped";
    TempDir dir("io");
    std::string error;
    const std::string path = dir.file("lossless.mkv");
    ASSERT_FALSE(write_synthetic_clip(path, small_spec(20), &error).empty()) << error;
    const Decoded sw = decode(path, DecodeMode::kSoftware, false);
    const Decoded nv = decode(path, DecodeMode::kNvdec, false, true);
    std::printf("lossless 4:4:4 with --decode nvdec: mode %s, note '%s'\n", nv.mode.c_str(), nv.note.c_str());
    if (nv.mode == "sw") {
        EXPECT_NE(nv.note.find("NVDEC"), std::string::npos);
        EXPECT_EQ(nv.device_frames, 0);
        expect_identical(nv, sw);
    } else {
        EXPECT_EQ(nv.status, ReadStatus::kEnd) << nv.error;
        ASSERT_EQ(nv.luma.size(), sw.luma.size());
        for (std::size_t i = 0; i < nv.luma.size(); ++i)
            EXPECT_LT(luma_diff(nv.luma[i], sw.luma[i]).mean, 0.5) << "frame " << i;
    }
}

// ---------------------------------------------------------------------------------------
// Real media

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
