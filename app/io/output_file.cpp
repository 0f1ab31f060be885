#include "app/io/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

namespace corrtrack {
namespace fs = std::filesystem;

namespace {

// The process's umask, read once (umask() can only be read by setting it).
mode_t process_umask() {
    static const mode_t mask = [] {
        const mode_t m = ::umask(022);
        ::umask(m);
        return m;
    }();
    return mask;
}

// The descriptor N that /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N name, or -1.
// Such an output is written through a dup() of it, so that it shares the offset of what the
// process writes there itself (reopening a redirected stdout would start at byte 0).
int own_descriptor(const std::string& path) {
    const std::string p = fs::path(path).lexically_normal().string();
    if (p == "/dev/stdout") return STDOUT_FILENO;
    if (p == "/dev/stderr") return STDERR_FILENO;
    for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
        const std::string pre = prefix;
        if (p.size() > pre.size() && p.compare(0, pre.size(), pre) == 0 &&
            p.find_first_not_of("0123456789", pre.size()) == std::string::npos && p.size() - pre.size() < 6)
            return std::stoi(p.substr(pre.size()));
    }
    return -1;
}

}  // namespace

bool is_device_path(const std::string& path) {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);  // follows symlinks
    if (fs::exists(st) && !fs::is_regular_file(st) && !fs::is_directory(st)) return true;
    fs::path abs = fs::absolute(path, ec);
    if (ec) abs = path;
    const std::string p = abs.lexically_normal().string();
    return p.rfind("/dev/", 0) == 0 || p.rfind("/proc/", 0) == 0;
}

OutputFile::~OutputFile() {
    if (open_) discard();
}

bool OutputFile::fail(const std::string& what, int err, std::string* error) {
    if (error) *error = what + " '" + path_ + "': " + (err ? std::strerror(err) : "write error");
    discard();
    return false;
}

bool OutputFile::open(const std::string& path, Mode mode, std::string* error) {
    if (open_) discard();
    path_ = path;
    mode_ = mode;
    in_place_ = false;
    if (path.empty()) {
        if (error) *error = "empty output path";
        return false;
    }
    std::error_code ec;
    const fs::path p(path);
    const fs::file_status st = fs::status(p, ec);  // follows symlinks
    if (fs::is_directory(st)) {
        if (error) *error = "cannot write '" + path + "': it is a folder";
        return false;
    }
    if (is_device_path(path)) {
        // A device or FIFO: written in place. O_NONBLOCK so that a FIFO nobody reads is an
        // error now (ENXIO) instead of a hang; writes block again once it is open.
        in_place_ = true;
        target_ = write_path_ = path;
        const int own = mode == Mode::kStream ? own_descriptor(path) : -1;
        const int fd =
            own >= 0 ? ::fcntl(own, F_DUPFD_CLOEXEC, 0) : ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) {
            const int err = errno;
            if (error)
                *error = "cannot write '" + path +
                         "': " + (err == ENXIO ? std::string("no process is reading the FIFO") : std::strerror(err));
            return false;
        }
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        if (mode == Mode::kPath) {
            ::close(fd);  // the writer opens it again itself
        } else {
            file_ = ::fdopen(fd, "w");
            if (!file_) {
                const int err = errno;
                ::close(fd);
                return fail("cannot write", err, error);
            }
        }
        open_ = true;
        return true;
    }
    // A symlink is followed: the file it points to is replaced, the link stays.
    const fs::path target = fs::is_symlink(fs::symlink_status(p, ec)) ? fs::weakly_canonical(p, ec) : p;
    target_ = target.string();
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    const std::string name = target.filename().string();
    std::string tmpl;
    int suffix = 0;
    if (mode == Mode::kPath) {
        const std::string ext = target.extension().string();
        tmpl = (dir / ("." + target.stem().string() + ".XXXXXX" + ext)).string();
        suffix = static_cast<int>(ext.size());
    } else {
        tmpl = (dir / ("." + name + ".XXXXXX")).string();
    }
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    const int fd = ::mkostemps(buf.data(), suffix, O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        if (error) *error = "cannot write '" + path + "': " + std::strerror(err);
        return false;
    }
    write_path_ = buf.data();
    struct stat old {};
    const mode_t perms = ::stat(target_.c_str(), &old) == 0 ? (old.st_mode & 07777) : (0666 & ~process_umask());
    ::fchmod(fd, perms);
    open_ = true;
    if (mode == Mode::kPath) {
        ::close(fd);
        return true;
    }
    file_ = ::fdopen(fd, "w");
    if (!file_) {
        const int err = errno;
        ::close(fd);
        return fail("cannot write", err, error);
    }
    return true;
}

bool OutputFile::write(const std::string& text, std::string* error) {
    if (!file_) {
        if (error) *error = "writing '" + path_ + "': the output is closed";
        return false;
    }
    errno = 0;
    if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() || std::ferror(file_))
        return fail("error writing", errno, error);
    return true;
}

bool OutputFile::flush(std::string* error) {
    if (!file_) return open_;
    errno = 0;
    if (std::fflush(file_) != 0 || std::ferror(file_)) return fail("error writing", errno, error);
    return true;
}

bool OutputFile::commit(std::string* error) {
    if (!open_) {
        if (error) *error = "writing '" + path_ + "': the output is closed";
        return false;
    }
    if (file_) {
        errno = 0;
        const bool flushed = std::fflush(file_) == 0 && !std::ferror(file_);
        const int flush_err = errno;
        std::FILE* f = file_;
        file_ = nullptr;
        errno = 0;
        const bool closed = std::fclose(f) == 0;
        const int close_err = errno;
        if (!flushed || !closed) return fail("error writing", flushed ? close_err : flush_err, error);
    }
    if (!in_place_ && std::rename(write_path_.c_str(), target_.c_str()) != 0) return fail("cannot write", errno, error);
    open_ = false;
    return true;
}

void OutputFile::discard() {
    if (file_) std::fclose(file_);
    file_ = nullptr;
    if (open_ && !in_place_) ::unlink(write_path_.c_str());
    open_ = false;
}

bool write_file_atomically(const std::string& path, const std::string& text, std::string* error) {
    OutputFile out;
    return out.open(path, OutputFile::Mode::kStream, error) && out.write(text, error) && out.commit(error);
}

TextRead read_text_file(const std::string& path, std::size_t max_bytes, std::string* text) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return TextRead::kFailed;
    text->clear();
    char buf[65536];
    std::size_t n = 0;
    TextRead result = TextRead::kOk;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
        if (text->size() + n > max_bytes) {
            result = TextRead::kTooLarge;
            break;
        }
        text->append(buf, n);
    }
    if (result == TextRead::kOk && std::ferror(f)) result = TextRead::kFailed;
    std::fclose(f);
    return result;
}

}  // namespace corrtrack
