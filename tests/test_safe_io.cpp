// The pieces behind "nothing lost, nothing destroyed": outputs written beside their
// destination and renamed into place, the output-path checks, frame accounting by source index,
// the byte readers (memory, pipes) and resolution changes at the source. (The kernel library's
// bounded caches are white-box tests: kernels/tests/test_kernel_caches.cpp.)
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "app/cli/output_paths.h"
#include "app/io/byte_reader.h"
#include "app/io/frame_accounting.h"
#include "app/io/frame_source.h"
#include "app/io/output_file.h"
#include "app/io/sequence_pattern.h"
#include "tests/support/damage.h"
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
    // Frames whose timestamps match no packet are numbered in order, with no verdict on
    // where a loss was; the packet that gave no frame is still counted, at the end.
    FrameAccounting odd;
    for (int k = 0; k < 3; ++k) odd.packet_sent(k, k, 1);
    EXPECT_EQ(odd.frame_out(100), 0);
    EXPECT_EQ(odd.frame_out(FrameAccounting::kNoTimestamp), 1);
    odd.end_of_stream();
    EXPECT_EQ(odd.lost(), 1);
    EXPECT_EQ(odd.lost_at(), (std::vector<long>{2}));
    // Issue 28: 25 packets, one frame out with a timestamp of its own; never a whole stream.
    FrameAccounting flipped;
    for (int k = 0; k < 25; ++k) flipped.packet_sent(k * 512, k * 512, 512);
    EXPECT_EQ(flipped.frame_out(7), 0);
    flipped.end_of_stream();
    EXPECT_EQ(flipped.lost(), 24);
    EXPECT_EQ(flipped.next_index(), 25);
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

}  // namespace
}  // namespace corrtrack
