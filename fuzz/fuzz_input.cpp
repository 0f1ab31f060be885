// Fuzz target: the input layer. The bytes are a media file read through an in-memory
// AVIOContext (SourceOptions::reader); up to 48 frames are decoded, converted and counted.
// Whatever the bytes, open() and read() must return (no crash, no hang, no leak), frame sizes
// must stay those of the first frame, and indices must increase.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "app/io/frame_source.h"
#include "fuzz/fuzz_common.h"

namespace {

// The names the first byte picks from (fuzz::memory_source).
const char* const kNames[] = {"in.mkv", "in.mp4", "in.avi", "in.ts",  "in.mov",  "in.png", "in.jpg", "in.webm",
                              "in.y4m", "in.gif", "in.bmp", "in.nut", "in.h264", "in.mpg", "in.flv", "in"};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) { return fuzz::quiet_ffmpeg_log(); }

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace corrtrack;
    if (size < 1) return 0;
    SourceOptions so = fuzz::memory_source(data, size, kNames);
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
    long last_index = -1;
    for (int n = 0; n < 48; ++n) {
        const ReadStatus st = source->read(f);
        if (st != ReadStatus::kFrame) {
            if (st == ReadStatus::kError && source->error().empty()) std::abort();
            break;
        }
        if (n == 0) first = f.size();
        if (f.size() != first || f.luma.size() != static_cast<std::size_t>(f.width) * f.height) std::abort();
        if (so.want_rgb && f.rgb.size() != static_cast<std::size_t>(f.width) * f.height * 3) std::abort();
        if (f.index <= last_index) std::abort();
        last_index = f.index;
    }
    (void)source->report();
    return 0;
}
