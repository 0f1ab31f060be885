// What the media fuzz targets share: FFmpeg's log silenced, and source options over the fuzzer's
// bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" {
#include <libavutil/log.h>
}

#include "app/io/frame_source.h"

namespace fuzz {

// Between the images of fuzz_input's image sequences (and their seeds).
constexpr const char* kImageSeparator = "--next-image--";

// For LLVMFuzzerInitialize: a broken file would log on every packet.
inline int quiet_ffmpeg_log() {
    av_log_set_level(AV_LOG_QUIET);
    return 0;
}

// The first byte picks the name the rest of the bytes go by (demuxers use the extension as a
// hint), the rest is the file, read in memory. `size` must be at least 1.
template <std::size_t N>
corrtrack::SourceOptions memory_source(const std::uint8_t* data, std::size_t size, const char* const (&names)[N]) {
    corrtrack::SourceOptions so;
    so.input = names[data[0] % N];
    so.reader = corrtrack::memory_reader(std::string(reinterpret_cast<const char*>(data + 1), size - 1));
    return so;
}

}  // namespace fuzz
