// Safe output files: bytes go to a temporary file beside the destination, which replaces the
// destination by rename() only when the output is complete, so a failed, interrupted or
// crashed run never leaves half a file under the name the user gave (and never destroys what
// was there before). Destinations that are not regular files (/dev/null, /dev/full,
// /dev/stdout, a FIFO) cannot be renamed onto: they are written in place.
// Thread rules: one thread owns an OutputFile.
#pragma once

#include <cstdio>
#include <string>

namespace corrtrack {

class OutputFile {
public:
    enum class Mode {
        kStream,  // write through file() / write(); the temporary name is hidden (".name.XXXXXX")
        kPath,    // a writer opens write_path() itself (libav); the temporary keeps the
                  // destination's extension, which picks the container
    };
    OutputFile() = default;
    ~OutputFile();  // removes the temporary file unless commit() succeeded
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    // Creates the temporary file (or opens a non-regular destination). False + *error
    // ("cannot write 'x': Permission denied"). A FIFO with no reader is refused at once rather
    // than waited for.
    bool open(const std::string& path, Mode mode, std::string* error);
    bool is_open() const { return open_; }

    const std::string& path() const { return path_; }              // the destination as given
    const std::string& write_path() const { return write_path_; }  // where the bytes go now
    std::FILE* file() const { return file_; }                      // kStream only

    // Checked writes (kStream): false + *error on the first failure (ENOSPC, EIO, EPIPE ...);
    // flush() pushes stdio's buffer to the file so errors surface now, not at the end.
    bool write(const std::string& text, std::string* error);
    bool flush(std::string* error);

    // Flushes, closes and renames the temporary file onto the destination. After a failure
    // the temporary file is gone and the destination untouched.
    bool commit(std::string* error);
    // Drops the output: the temporary file is removed, the destination untouched.
    void discard();

private:
    bool fail(const std::string& what, int err, std::string* error);

    std::string path_, target_, write_path_;
    std::FILE* file_ = nullptr;
    Mode mode_ = Mode::kStream;
    bool in_place_ = false;  // destination is not a regular file: no temporary, no rename
    bool open_ = false;
};

// Whether `path` names a device or FIFO, written in place: anything existing that is neither a
// regular file nor a folder, and every path under /dev/ or /proc/ whatever it points to
// (/dev/stdout is a regular file when stdout is redirected to one; a temporary beside it would
// land in /dev, and a rename would replace the file the shell opened).
bool is_device_path(const std::string& path);

// Writes `text` to path through an OutputFile (temporary + rename).
bool write_file_atomically(const std::string& path, const std::string& text, std::string* error);

// Reads a whole text file of at most max_bytes (/dev/zero or a multi-gigabyte file named by
// mistake is refused, not read into memory for ever).
enum class TextRead { kOk, kTooLarge, kFailed };
TextRead read_text_file(const std::string& path, std::size_t max_bytes, std::string* text);

}  // namespace corrtrack
