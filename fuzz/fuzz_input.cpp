// Fuzz target: the input layer. The bytes are a media file read through an in-memory
// AVIOContext (SourceOptions::reader); up to 48 frames are decoded, converted and counted.
// A first byte that picks "seq.png" or "seq.jpg" makes the rest an image sequence instead:
// images separated by kImageSeparator, written as numbered files (empty, damaged or missing
// ones included) and read through image2. Whatever the bytes, open() and read() must return
// (no crash, no hang, no leak), frame sizes must stay those of the first frame, indices must
// increase, and a sequence that delivers fewer frames than it has images never ends clean.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

#include "app/io/frame_source.h"
#include "fuzz/fuzz_common.h"

namespace {

// The names the first byte picks from (fuzz::memory_source).
const char* const kNames[] = {"in.mkv",  "in.mp4",  "in.avi", "in.ts",  "in.mov",  "in.png",
                              "in.jpg",  "in.webm", "in.y4m", "in.gif", "in.bmp",  "in.nut",
                              "in.h264", "in.mpg",  "in.flv", "in",     "seq.png", "seq.jpg"};

std::string g_dir;  // this process's folder for image sequences

// Writes the images of `bytes` as g_dir/NNN.ext (at most 8) and returns the pattern.
std::string write_sequence(const std::string& bytes, const std::string& ext) {
    for (int i = 1; i <= 9; ++i) std::remove((g_dir + "/" + std::to_string(100 + i) + "." + ext).c_str());
    std::size_t at = 0;
    for (int i = 1; i <= 8 && at <= bytes.size(); ++i) {
        std::size_t end = bytes.find(fuzz::kImageSeparator, at);
        if (end == std::string::npos) end = bytes.size();
        std::FILE* f = std::fopen((g_dir + "/" + std::to_string(100 + i) + "." + ext).c_str(), "wb");
        if (!f) std::abort();
        std::fwrite(bytes.data() + at, 1, end - at, f);
        std::fclose(f);
        at = end + std::strlen(fuzz::kImageSeparator);
    }
    return g_dir + "/%03d." + ext;
}

// The folder goes with the process (libFuzzer exits through exit()).
void remove_sequence_dir() {
    for (int i = 1; i <= 9; ++i)
        for (const char* ext : {"png", "jpg"}) std::remove((g_dir + "/" + std::to_string(100 + i) + "." + ext).c_str());
    ::rmdir(g_dir.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/fuzz_input.XXXXXX";
    if (!::mkdtemp(tmpl.data())) std::abort();
    g_dir = tmpl;
    std::atexit(remove_sequence_dir);
    return fuzz::quiet_ffmpeg_log();
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace corrtrack;
    if (size < 1) return 0;
    SourceOptions so = fuzz::memory_source(data, size, kNames);
    const bool sequence = so.input.rfind("seq.", 0) == 0;
    if (sequence) {
        so.input = write_sequence(std::string(reinterpret_cast<const char*>(data + 1), size - 1), so.input.substr(4));
        so.reader.reset();
    }
    so.want_rgb = (data[0] & 0x80) != 0;
    so.max_pixels = 1024 * 1024;  // keeps each run short; the limit path is tested too
    so.open_timeout_s = 10;
    so.read_timeout_s = 10;
    std::string error;
    auto source = FrameSource::open(so, &error);
    if (!source) {
        if (error.empty()) std::abort();  // every failure says why
        return 0;
    }
    Frame f;
    Size first;
    long last_index = -1, frames = 0;
    ReadStatus st = ReadStatus::kFrame;
    for (int n = 0; n < 48; ++n) {
        st = source->read(f);
        if (st != ReadStatus::kFrame) {
            if (st == ReadStatus::kError && source->error().empty()) std::abort();
            break;
        }
        ++frames;
        if (n == 0) first = f.size();
        if (f.size() != first || f.luma.size() != static_cast<std::size_t>(f.width) * f.height) std::abort();
        if (so.want_rgb && f.rgb.size() != static_cast<std::size_t>(f.width) * f.height * 3) std::abort();
        if (f.index <= last_index) std::abort();
        last_index = f.index;
    }
    const SourceReport report = source->report();
    // Every image the sequence has is a frame or a loss: nothing vanishes at a clean end.
    if (sequence && st == ReadStatus::kEnd && frames < source->frame_count()) std::abort();
    (void)report;
    return 0;
}
