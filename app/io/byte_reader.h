// Byte sources for FrameSource other than a path FFmpeg opens itself: bytes in memory (the
// fuzz targets, tests) and a pipe, FIFO or other non-seekable descriptor, read with poll() so
// that a writer that never comes, or stalls, ends in a read timeout instead of a hang.
// Thread rules: a reader belongs to the thread that owns its FrameSource.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace corrtrack {

class ByteReader {
public:
    virtual ~ByteReader() = default;
    // Up to `size` bytes into buf: the count, AVERROR_EOF at the end, or a negative AVERROR.
    virtual int read(std::uint8_t* buf, int size) = 0;
    // As avio's seek callback (whence SEEK_SET/CUR/END or AVSEEK_SIZE); negative when the
    // source cannot seek.
    virtual std::int64_t seek(std::int64_t offset, int whence) = 0;
    virtual bool seekable() const = 0;
    // Why the last read failed, for the user ("" when it did not, or for a plain EOF).
    virtual std::string failure() const { return {}; }
};

// The bytes of a file held in memory.
std::shared_ptr<ByteReader> memory_reader(std::string bytes);

// A pipe, FIFO or character device: `fd` is owned (closed by the reader). A read waits at
// most stall_s for data (0: no limit), polling `cancelled` every 100 ms; either ends the read
// with an error and failure() says which.
std::shared_ptr<ByteReader> descriptor_reader(int fd, double stall_s, std::function<bool()> cancelled);

// Opens `path` for reading without blocking on a FIFO that has no writer yet, or dup()s the
// descriptor of "pipe:N" / "-" (standard input). -1 with *error on failure.
int open_stream_descriptor(const std::string& path, std::string* error);

// Whether FrameSource should read `path` through descriptor_reader: "pipe:N", "-", or a
// FIFO, socket or character device that is not a V4L2 camera.
bool is_stream_path(const std::string& path);

}  // namespace corrtrack
