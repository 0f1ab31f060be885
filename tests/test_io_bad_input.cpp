// Every kind of bad input FrameSource meets: missing, empty, text and audio-only files, cut and
// damaged videos; cameras and URLs that are missing, unreachable, never answer or stall (local
// HTTP servers play the dead streams). Part of test_io (test_io_*.cpp).
// Thread rules: single-threaded, except the local HTTP servers.
#include <gtest/gtest.h>

extern "C" {
#include <libavformat/avformat.h>
}

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "app/io/frame_source.h"
#include "tests/support/read_source.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

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

// ---- Cameras and URLs ----

TEST(Live, MissingCamera) {
    std::string error;
    const auto t0 = Clock::now();
    EXPECT_FALSE(open_source("/dev/video97", &error));
    // Hang guards, not speeds: each bound is far above the work and below the 10 s default
    // open timeout, so only a wait for that timeout (or a hang) can cross it.
    EXPECT_LT(seconds_since(t0), 9.0);
    EXPECT_EQ(error.rfind("cannot open camera '/dev/video97': No such file or directory", 0), 0u) << error;
}

TEST(Live, UnreachableRtspFailsFast) {
    std::string error;
    const auto t0 = Clock::now();
    EXPECT_FALSE(open_source("rtsp://127.0.0.1:9/x", &error));
    EXPECT_LT(seconds_since(t0), 9.0);  // a refused connection, not the 10 s open timeout
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
    EXPECT_GE(seconds_since(t0), 0.9) << "the open timeout cannot fire early";
    EXPECT_LT(seconds_since(t0), 9.0) << "the given 1 s timeout, not the 10 s default";
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
    EXPECT_GE(stall, 0.9) << "the read timeout cannot fire early";
    EXPECT_LT(stall, 20.0) << "a hang guard";
    EXPECT_NE(source->error().find("nothing for 1 s (read timeout)"), std::string::npos) << source->error();
}

}  // namespace
}  // namespace corrtrack
