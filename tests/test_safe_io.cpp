// The pieces behind "nothing lost, nothing destroyed": outputs written beside their
// destination and renamed into place, the output-path checks, frame accounting by source index,
// the byte readers (memory, pipes), resolution changes at the source, and the bounded caches
// of the kernel library.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include <cuda_runtime.h>

#include "app/cli/output_paths.h"
#include "app/io/byte_reader.h"
#include "app/io/frame_accounting.h"
#include "app/io/frame_source.h"
#include "app/io/output_file.h"
#include "app/io/sequence_pattern.h"
#include "cpu/cpu_kernels.h"
#include "cuda/cuda_kernels.h"
#include "tests/support/damage.h"
#include "tests/support/random_image.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

namespace fs = std::filesystem;
using test::read_bytes;

TEST(OutputFile, DestinationChangesOnlyOnCommit) {
    TempDir dir("safeio");
    const std::string path = dir.file("out.txt");
    test::write_bytes(path, "old\n");
    ::chmod(path.c_str(), 0640);
    std::string error;
    OutputFile out;
    ASSERT_TRUE(out.open(path, OutputFile::Mode::kStream, &error)) << error;
    EXPECT_NE(out.write_path(), path);
    EXPECT_EQ(fs::path(out.write_path()).parent_path(), fs::path(path).parent_path());
    ASSERT_TRUE(out.write("new\n", &error)) << error;
    ASSERT_TRUE(out.flush(&error)) << error;
    EXPECT_EQ(read_bytes(path), "old\n") << "replaced before the output was complete";
    ASSERT_TRUE(out.commit(&error)) << error;
    EXPECT_EQ(read_bytes(path), "new\n");
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0640u) << "the permissions of the file replaced are kept";
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(OutputFile, DiscardAndDestructorLeaveTheDestinationAndNoTemporary) {
    TempDir dir("safeio");
    const std::string path = dir.file("out.txt");
    test::write_bytes(path, "old\n");
    std::string error;
    {
        OutputFile out;
        ASSERT_TRUE(out.open(path, OutputFile::Mode::kStream, &error)) << error;
        ASSERT_TRUE(out.write("half a fil", &error));
    }
    OutputFile out;
    ASSERT_TRUE(out.open(path, OutputFile::Mode::kPath, &error)) << error;
    EXPECT_EQ(fs::path(out.write_path()).extension(), ".txt") << "kPath keeps the extension (libav picks by it)";
    out.discard();
    EXPECT_EQ(read_bytes(path), "old\n");
    EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(OutputFile, SymlinkIsFollowedAndKept) {
    TempDir dir("safeio");
    test::write_bytes(dir.file("real.txt"), "old\n");
    fs::create_symlink(dir.file("real.txt"), dir.file("link.txt"));
    std::string error;
    ASSERT_TRUE(write_file_atomically(dir.file("link.txt"), "new\n", &error)) << error;
    EXPECT_TRUE(fs::is_symlink(dir.file("link.txt")));
    EXPECT_EQ(read_bytes(dir.file("real.txt")), "new\n");
}

TEST(OutputFile, ErrorsAreReportedAsTheyHappen) {
    std::string error;
    if (fs::exists("/dev/full")) {
        OutputFile full;
        ASSERT_TRUE(full.open("/dev/full", OutputFile::Mode::kStream, &error)) << error;
        EXPECT_TRUE(full.write("x", &error));  // buffered
        EXPECT_FALSE(full.flush(&error));
        EXPECT_NE(error.find("No space left on device"), std::string::npos) << error;
    }
    OutputFile missing;
    EXPECT_FALSE(missing.open("/nonexistent/dir/out.csv", OutputFile::Mode::kStream, &error));
    EXPECT_NE(error.find("No such file or directory"), std::string::npos) << error;
    // A FIFO nobody reads is refused at once, not waited for.
    TempDir dir("safeio");
    ASSERT_EQ(mkfifo(dir.file("f").c_str(), 0600), 0);
    OutputFile fifo;
    EXPECT_FALSE(fifo.open(dir.file("f"), OutputFile::Mode::kStream, &error));
    EXPECT_NE(error.find("no process is reading"), std::string::npos) << error;
}

TEST(OutputPaths, ConflictsAreFoundThroughLinksAndPatterns) {
    TempDir dir("safeio");
    const std::string d = dir.path();
    test::write_bytes(d + "/in.mp4", "x");
    fs::create_directories(d + "/seq");
    for (int i = 1; i <= 3; ++i)
        test::write_bytes(d + "/seq/" + SequencePattern{d + "/seq", "f", ".png", 3}.name(i), "x");
    fs::create_symlink(d + "/in.mp4", d + "/alias.mp4");
    std::string error;
    auto ok = [&](std::vector<NamedPath> in, std::vector<NamedPath> out) {
        return check_output_paths(in, out, &error);
    };
    EXPECT_FALSE(ok({{d + "/in.mp4", "the input"}}, {{d + "/alias.mp4", "--csv"}}));
    EXPECT_NE(error.find("--csv '" + d + "/alias.mp4' would overwrite the input"), std::string::npos) << error;
    EXPECT_FALSE(ok({{d + "/in.mp4", "the input"}}, {{d + "/seq/../in.mp4", "--csv"}}));
    EXPECT_FALSE(ok({{d + "/seq/f%03d.png", "the input"}}, {{d + "/seq/f002.png", "--json"}}));
    EXPECT_FALSE(ok({{d + "/seq/f%03d.png", "the input"}}, {{d + "/seq/f%d.png", "--video", true}}));
    EXPECT_FALSE(ok({{d + "/seq", "the input"}}, {{d + "/seq/f001.png", "--csv"}}));
    EXPECT_FALSE(ok({}, {{d + "/a.txt", "--csv"}, {d + "/./a.txt", "--json"}}));
    EXPECT_FALSE(ok({}, {{d + "/o%03d.png", "--video", true}, {d + "/o005.png", "--csv"}}));
    // Fine: new files beside the inputs, different patterns, devices shared by outputs.
    EXPECT_TRUE(ok({{d + "/seq/f%03d.png", "the input"}}, {{d + "/seq/out.csv", "--csv"}})) << error;
    EXPECT_TRUE(ok({{d + "/seq/f%03d.png", "the input"}}, {{d + "/seq/g%03d.png", "--video", true}})) << error;
    EXPECT_TRUE(ok({{d + "/seq", "the input"}}, {{d + "/seq/new.csv", "--csv"}})) << error;
    EXPECT_TRUE(ok({}, {{"/dev/null", "--csv"}, {"/dev/null", "--json"}})) << error;
}

TEST(FrameAccounting, LostFramesKeepTheirPlace) {
    FrameAccounting a;
    for (int k = 0; k < 6; ++k) a.packet_sent(k * 10, k * 10, 10);
    EXPECT_EQ(a.frame_out(0), 0);
    EXPECT_EQ(a.frame_out(10), 1);
    EXPECT_EQ(a.frame_out(30), 3);  // the packet at 20 never became a frame
    EXPECT_EQ(a.frame_out(40), 4);
    a.end_of_stream();  // nor did the one at 50
    EXPECT_EQ(a.lost(), 2);
    EXPECT_EQ(a.lost_at(), (std::vector<long>{2, 5}));
    // A packet the demuxer skipped leaves a hole in the timestamps.
    FrameAccounting hole;
    for (int k : {0, 1, 2, 4, 5}) hole.packet_sent(k * 40, k * 40, 40);
    for (int k : {0, 1, 2}) EXPECT_EQ(hole.frame_out(k * 40), k);
    EXPECT_EQ(hole.frame_out(160), 4);
    EXPECT_EQ(hole.lost_at(), (std::vector<long>{3}));
    // B-frames: decode order differs from presentation order, nothing is lost.
    FrameAccounting reorder;
    const int pts[] = {0, 30, 10, 20, 60, 40, 50};
    for (int i = 0; i < 7; ++i) reorder.packet_sent(pts[i], i * 10 - 10, 10);
    for (int k = 0; k < 7; ++k) EXPECT_EQ(reorder.frame_out(k * 10), k);
    reorder.end_of_stream();
    EXPECT_EQ(reorder.lost(), 0);
    // Timestamps that start again (two clips concatenated) are a new epoch, not a loss.
    FrameAccounting concat;
    for (int k = 0; k < 4; ++k) concat.packet_sent(k * 10, k * 10, 10);
    for (int k = 0; k < 4; ++k) concat.packet_sent(k * 10, k * 10, 10);
    for (int k = 0; k < 8; ++k) EXPECT_EQ(concat.frame_out((k % 4) * 10), k);
    EXPECT_EQ(concat.lost(), 0);
    // Frames whose timestamps match no packet are numbered in order, with no verdict.
    FrameAccounting odd;
    for (int k = 0; k < 3; ++k) odd.packet_sent(k, k, 1);
    EXPECT_EQ(odd.frame_out(100), 0);
    EXPECT_EQ(odd.frame_out(FrameAccounting::kNoTimestamp), 1);
    odd.end_of_stream();
    EXPECT_EQ(odd.lost(), 0);
}

// The input layer through an in-memory reader (what the fuzz targets use) and through a pipe.
TEST(ByteReaders, MemoryAndPipeSourcesReadEveryFrame) {
    TempDir dir("safeio");
    std::string error;
    SyntheticClipSpec spec;
    spec.frames = 12;
    ASSERT_FALSE(write_synthetic_clip(dir.file("c.mkv"), spec, &error).empty()) << error;
    const std::string bytes = read_bytes(dir.file("c.mkv"));
    SourceOptions so;
    so.input = "memory.mkv";
    so.want_rgb = false;
    so.reader = memory_reader(bytes);
    auto mem = FrameSource::open(so, &error);
    ASSERT_TRUE(mem) << error;
    Frame f;
    long n = 0;
    while (mem->read(f) == ReadStatus::kFrame) EXPECT_EQ(f.index, n++);
    EXPECT_EQ(n, 12);
    EXPECT_EQ(mem->report().end, EndReason::kClean);

    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    std::thread writer([&] {
        ::write(fds[1], bytes.data(), bytes.size());
        ::close(fds[1]);
    });
    SourceOptions po;
    po.input = "pipe:" + std::to_string(fds[0]);
    po.want_rgb = false;
    po.read_timeout_s = 5;
    auto pipe = FrameSource::open(po, &error);
    ASSERT_TRUE(pipe) << error;
    n = 0;
    while (pipe->read(f) == ReadStatus::kFrame) ++n;
    writer.join();
    ::close(fds[0]);
    EXPECT_EQ(n, 12);
}

TEST(SourceReport, DamageAndResolutionChangesAreCounted) {
    TempDir dir("safeio");
    std::string error;
    SyntheticClipSpec spec;
    spec.frames = 20;
    spec.codec = "mjpeg";
    ASSERT_FALSE(write_synthetic_clip(dir.file("m.mkv"), spec, &error).empty()) << error;
    ASSERT_TRUE(test::zero_packet(dir.file("m.mkv"), 5, test::Damage::kPayload, &error)) << error;
    SourceOptions so;
    so.input = dir.file("m.mkv");
    auto src = FrameSource::open(so, &error);
    ASSERT_TRUE(src) << error;
    Frame f;
    std::vector<long> indices;
    ReadStatus st;
    while ((st = src->read(f)) == ReadStatus::kFrame) indices.push_back(f.index);
    EXPECT_EQ(st, ReadStatus::kError);
    EXPECT_EQ(indices.size(), 19u);
    EXPECT_EQ(std::find(indices.begin(), indices.end(), 5), indices.end());
    const SourceReport r = src->report();
    EXPECT_EQ(r.end, EndReason::kDamaged);
    EXPECT_EQ(r.lost, 1);
    EXPECT_EQ(r.lost_at, (std::vector<long>{5}));

    ASSERT_TRUE(test::write_resolution_change_ts(dir.file("g.ts"), 320, 240, 8, 160, 120, 8, &error)) << error;
    so.input = dir.file("g.ts");
    auto g = FrameSource::open(so, &error);
    ASSERT_TRUE(g) << error;
    long n = 0, scaled = 0;
    while (g->read(f) == ReadStatus::kFrame) {
        ++n;
        EXPECT_EQ(f.size(), (Size{320, 240}));
        EXPECT_EQ(f.rgb.size(), 320u * 240 * 3);
        scaled += f.decoded_size == Size{160, 120};
    }
    EXPECT_EQ(n, 16);
    EXPECT_EQ(scaled, 8);
    EXPECT_EQ(g->report().resized, 8);
    EXPECT_EQ(g->report().end, EndReason::kClean) << g->error();
}

// Windows of ever new sizes (a re-detection at a drifting scale) reuse a bounded set of FFT
// plans, and every result stays exact.
TEST(BoundedCaches, FftPlansStayBoundedAndExact) {
    const test::OwnedImage templ = test::random_image(24, 20, 5);
    FftNumerator fft;
    fft.set_template(templ.view());
    const std::size_t created_before = FftNumerator::plans_created();
    for (int k = 0; k < 60; ++k) {
        const Size size{120 + 7 * k, 90 + 5 * k};
        const test::OwnedImage image = test::random_image(size.width, size.height, 100 + k);
        const Size out{size.width - 23, size.height - 19};
        std::vector<std::uint32_t> a(static_cast<std::size_t>(out.width) * out.height), b(a.size());
        fft.run(image.view(), a.data(), out.width);
        direct_numerator(image.view(), templ.view(), b.data(), out.width);
        ASSERT_EQ(a, b) << "size " << size.width << "x" << size.height;
        EXPECT_LE(FftNumerator::cached_plans(), kFftPlanCacheSize);
    }
    EXPECT_GE(FftNumerator::plans_created() - created_before, 40u);
}

// A frame uploaded to the device and room for a float map of the same size (auto's tests).
struct DeviceFrame {
    explicit DeviceFrame(const test::OwnedImage& image) : width(image.width), height(image.height) {
        const std::size_t n = image.pixels.size();
        if (cudaMalloc(&pixels, n) != cudaSuccess || cudaMalloc(&map, n * sizeof(float)) != cudaSuccess ||
            cudaMemcpy(pixels, image.pixels.data(), n, cudaMemcpyHostToDevice) != cudaSuccess)
            failed = true;
    }
    ~DeviceFrame() {
        cudaFree(pixels);
        cudaFree(map);
    }
    DeviceFrame(const DeviceFrame&) = delete;
    DeviceFrame& operator=(const DeviceFrame&) = delete;
    bool ok() const { return !failed; }
    ImageView view() const { return {pixels, width, height, static_cast<std::size_t>(width), MemorySpace::kDevice}; }
    int width, height;
    std::uint8_t* pixels = nullptr;
    float* map = nullptr;
    bool failed = false;
};

// auto remembers at most 64 buckets of shapes however many it meets (a re-detection window
// that drifts through sizes for hours), the least recently used forgotten. 8 x 8 template
// sides x 2 window sizes are 128 buckets. GPU only.
TEST(BoundedCaches, AutoRemembersABoundedNumberOfShapes) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU here";
    const DeviceFrame dev(test::random_image(256, 192, 7));
    ASSERT_TRUE(dev.ok());
    auto corr = make_auto();
    auto* a = dynamic_cast<AutoSelect*>(corr.get());
    ASSERT_TRUE(a);
    const ImageView view = dev.view();
    const int sides[] = {4, 8, 12, 16, 24, 32, 48, 64};
    for (int k = 0; k < 128; ++k) {
        const Size t{sides[k % 8], sides[(k / 8) % 8]};
        const test::OwnedImage templ = test::random_image(t.width, t.height, 8 + k);
        corr->set_template(templ.view(), nullptr);
        const Rect roi = k < 64 ? Rect{0, 0, 256, 192} : Rect{0, 0, 128, 96};
        const NccProblem p{{256, 192}, t, roi, 1};
        const Size o = p.out_size();
        corr->run(view, p, {dev.map, o.width, o.height, static_cast<std::size_t>(o.width), MemorySpace::kDevice},
                  nullptr);
        ASSERT_LE(a->remembered_shapes(), 64u) << k;
    }
    EXPECT_EQ(a->remembered_shapes(), 64u);  // the bound was reached and held
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

// A small problem (a tracker's window) goes to cuda_dp4a_ilp with no timing round; a full
// 1080p frame with a 64x64 template (7.7G multiply-adds) is timed once, and its winner is then reused. GPU only.
TEST(AutoSelect, SmallProblemsUntimedLargeOnesTimedOnce) {
    if (!cuda_available()) GTEST_SKIP() << "no CUDA GPU here";
    const test::OwnedImage templ = test::random_image(64, 64, 4);
    const DeviceFrame dev(test::random_image(1920, 1080, 3));
    ASSERT_TRUE(dev.ok());
    auto corr = make_auto();
    auto* a = dynamic_cast<AutoSelect*>(corr.get());
    ASSERT_TRUE(a);
    corr->set_template(templ.view(), nullptr);
    const ImageView view = dev.view();
    auto run = [&](const Rect& roi) {
        const NccProblem p{{1920, 1080}, {64, 64}, roi, 1};
        const Size o = p.out_size();
        corr->run(view, p, {dev.map, o.width, o.height, static_cast<std::size_t>(o.width), MemorySpace::kDevice},
                  nullptr);
        return p;
    };
    const NccProblem small = run(Rect{500, 300, 160, 160});  // 97x97 positions x 4096: 39M
    EXPECT_EQ(a->choice(small), "cuda_dp4a_ilp");
    EXPECT_EQ(a->last_timings().rfind("untimed: cuda_dp4a_ilp", 0), 0u) << a->last_timings();
    const NccProblem full = run(Rect{0, 0, 1920, 1080});
    const std::string timings = a->last_timings();
    EXPECT_EQ(timings.find("untimed"), std::string::npos) << timings;
    EXPECT_NE(timings.find("cuda_mma"), std::string::npos) << timings;  // the candidates were timed
    const std::string winner = a->choice(full);
    EXPECT_EQ(timings.rfind(winner + " ", 0), 0u) << timings;  // the fastest is listed first
    run(Rect{0, 0, 1920, 1080});
    EXPECT_EQ(a->last_timings(), timings);  // no second round
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
}  // namespace corrtrack
