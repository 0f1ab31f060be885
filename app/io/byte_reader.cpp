#include "app/io/byte_reader.h"

extern "C" {
#include <libavformat/avio.h>
#include <libavutil/error.h>
}

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace corrtrack {
namespace {

class MemoryReader final : public ByteReader {
public:
    explicit MemoryReader(std::string bytes) : bytes_(std::move(bytes)) {}
    int read(std::uint8_t* buf, int size) override {
        if (pos_ >= bytes_.size()) return AVERROR_EOF;
        const std::size_t n = std::min(bytes_.size() - pos_, static_cast<std::size_t>(std::max(size, 0)));
        std::memcpy(buf, bytes_.data() + pos_, n);
        pos_ += n;
        return static_cast<int>(n);
    }
    std::int64_t seek(std::int64_t offset, int whence) override {
        const auto size = static_cast<std::int64_t>(bytes_.size());
        std::int64_t to = 0;
        switch (whence & ~AVSEEK_FORCE) {
        case AVSEEK_SIZE: return size;
        case SEEK_SET: to = offset; break;
        case SEEK_CUR: to = static_cast<std::int64_t>(pos_) + offset; break;
        case SEEK_END: to = size + offset; break;
        default: return AVERROR(EINVAL);
        }
        if (to < 0 || to > size) return AVERROR(EINVAL);
        pos_ = static_cast<std::size_t>(to);
        return to;
    }
    bool seekable() const override { return true; }

private:
    std::string bytes_;
    std::size_t pos_ = 0;
};

class DescriptorReader final : public ByteReader {
public:
    DescriptorReader(int fd, double stall_s, std::function<bool()> cancelled)
        : fd_(fd), stall_s_(stall_s), cancelled_(std::move(cancelled)) {}
    ~DescriptorReader() override {
        if (fd_ >= 0) ::close(fd_);
    }
    int read(std::uint8_t* buf, int size) override {
        using Clock = std::chrono::steady_clock;
        const auto start = Clock::now();
        failure_.clear();
        for (;;) {
            if (cancelled_ && cancelled_()) {
                failure_ = "cancelled (interrupted or out of time)";
                return AVERROR_EXIT;
            }
            pollfd p{fd_, POLLIN, 0};
            const int ready = ::poll(&p, 1, 100);
            if (ready < 0 && errno != EINTR) {
                failure_ = std::strerror(errno);
                return AVERROR(errno);
            }
            if (ready > 0) {
                const ssize_t n = ::read(fd_, buf, static_cast<std::size_t>(std::max(size, 0)));
                if (n > 0) return static_cast<int>(n);
                if (n == 0) return AVERROR_EOF;  // the writer closed its end
                if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                    failure_ = std::strerror(errno);
                    return AVERROR(errno);
                }
            }
            const double waited = std::chrono::duration<double>(Clock::now() - start).count();
            if (stall_s_ > 0 && waited >= stall_s_) {
                char buf_s[64];
                std::snprintf(buf_s, sizeof buf_s, "%.4g", stall_s_);
                failure_ = std::string("nothing for ") + buf_s + " s (read timeout; is anything writing to it?)";
                return AVERROR(ETIMEDOUT);
            }
        }
    }
    std::int64_t seek(std::int64_t, int) override { return -1; }
    bool seekable() const override { return false; }
    std::string failure() const override { return failure_; }

private:
    int fd_;
    double stall_s_;
    std::function<bool()> cancelled_;
    std::string failure_;
};

// "pipe:N" -> N, "-" -> 0, else -1.
int pipe_number(const std::string& path) {
    if (path == "-") return 0;
    if (path.rfind("pipe:", 0) != 0) return -1;
    const std::string digits = path.substr(5);
    if (digits.empty()) return 0;  // FFmpeg's "pipe:" is standard input too
    if (digits.size() > 4 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
    return std::atoi(digits.c_str());
}

}  // namespace

std::shared_ptr<ByteReader> memory_reader(std::string bytes) {
    return std::make_shared<MemoryReader>(std::move(bytes));
}

std::shared_ptr<ByteReader> descriptor_reader(int fd, double stall_s, std::function<bool()> cancelled) {
    return std::make_shared<DescriptorReader>(fd, stall_s, std::move(cancelled));
}

bool is_stream_path(const std::string& path) {
    if (pipe_number(path) >= 0) return true;
    if (path.rfind("/dev/video", 0) == 0) return false;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return false;
    return S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode);
}

int open_stream_descriptor(const std::string& path, std::string* error) {
    const int n = pipe_number(path);
    const int fd = n >= 0 ? ::fcntl(n, F_DUPFD_CLOEXEC, 3) : ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (error) *error = "cannot open '" + path + "': " + std::strerror(errno);
        return -1;
    }
    // poll() does the waiting, bounded by the read timeout, so reads find data ready. A dup of
    // standard input shares its file status with the parent shell: its flags stay as they are.
    return fd;
}

}  // namespace corrtrack
