// Damaged and odd media for the bad-input tests: a packet overwritten in place, a file cut
// just before a packet, a stream whose resolution changes, and byte-exact file helpers.
// Thread rules: plain functions.
#pragma once

#include <string>
#include <vector>

namespace corrtrack::test {

// Byte position and size of every video packet of `path`, in file order (libavformat).
struct PacketSpan {
    long long pos = -1;
    int size = 0;
};
std::vector<PacketSpan> video_packets(const std::string& path, std::string* error);

// Overwrites video packet `index` of a Matroska MJPEG clip with zeros. kBlock: the container's
// block with it (the demuxer skips it: a hole in the timestamps); kPayload: the JPEG data only
// (the demuxer delivers the packet and the decoder rejects it).
enum class Damage { kBlock, kPayload };
bool zero_packet(const std::string& path, long index, Damage what, std::string* error);

// Copies `from` to `to`, cut just before video packet `index` (that packet and all after it
// are gone; the container's header still declares them).
bool cut_before_packet(const std::string& from, const std::string& to, long index, std::string* error);

// An MPEG-TS H.264 clip whose first `frames_a` frames are a_w x a_h and the next `frames_b`
// b_w x b_h: two encodes concatenated, as a broadcast stream changes resolution.
bool write_resolution_change_ts(const std::string& path, int a_w, int a_h, int frames_a, int b_w, int b_h, int frames_b,
                                std::string* error);

std::string read_bytes(const std::string& path);
bool write_bytes(const std::string& path, const std::string& bytes);

}  // namespace corrtrack::test
