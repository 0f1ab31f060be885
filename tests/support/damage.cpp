#include "tests/support/damage.h"

extern "C" {
#include <libavformat/avformat.h>
}

#include <fstream>
#include <iterator>
#include <sstream>

#include "tests/support/synthetic_clip.h"

namespace corrtrack::test {

std::string read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool write_bytes(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return static_cast<bool>(out.flush());
}

std::vector<PacketSpan> video_packets(const std::string& path, std::string* error) {
    std::vector<PacketSpan> spans;
    AVFormatContext* fc = nullptr;
    if (avformat_open_input(&fc, path.c_str(), nullptr, nullptr) < 0) {
        if (error) *error = "cannot open " + path;
        return spans;
    }
    const int video = avformat_find_stream_info(fc, nullptr) >= 0
                          ? av_find_best_stream(fc, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0)
                          : -1;
    AVPacket* pkt = av_packet_alloc();
    while (video >= 0 && av_read_frame(fc, pkt) >= 0) {
        if (pkt->stream_index == video) spans.push_back({pkt->pos, pkt->size});
        av_packet_unref(pkt);
    }
    av_packet_free(&pkt);
    avformat_close_input(&fc);
    if (spans.empty() && error) *error = "no video packets in " + path;
    return spans;
}

bool zero_packet(const std::string& path, long index, Damage what, std::string* error) {
    const auto spans = video_packets(path, error);
    if (index < 0 || index >= static_cast<long>(spans.size()) || spans[static_cast<std::size_t>(index)].pos < 0) {
        if (error && error->empty()) *error = "no packet " + std::to_string(index);
        return false;
    }
    std::string bytes = read_bytes(path);
    const PacketSpan& s = spans[static_cast<std::size_t>(index)];
    long long from = s.pos;  // the block's first byte
    if (what == Damage::kPayload) {
        // The JPEG starts with FF D8 FF a few bytes into the block, after its header.
        const std::size_t soi = bytes.find("\xFF\xD8\xFF", static_cast<std::size_t>(s.pos));
        if (soi == std::string::npos || soi > static_cast<std::size_t>(s.pos) + 64) {
            if (error) *error = "no JPEG start in packet " + std::to_string(index);
            return false;
        }
        from = static_cast<long long>(soi);
    }
    for (int i = 0; i < s.size && from + i < static_cast<long long>(bytes.size()); ++i)
        bytes[static_cast<std::size_t>(from + i)] = '\0';
    return write_bytes(path, bytes);
}

bool cut_before_packet(const std::string& from, const std::string& to, long index, std::string* error) {
    const auto spans = video_packets(from, error);
    if (index < 0 || index >= static_cast<long>(spans.size())) {
        if (error && error->empty()) *error = "no packet " + std::to_string(index);
        return false;
    }
    std::string bytes = read_bytes(from);
    bytes.resize(static_cast<std::size_t>(spans[static_cast<std::size_t>(index)].pos));
    return write_bytes(to, bytes);
}

bool write_resolution_change_ts(const std::string& path, int a_w, int a_h, int frames_a, int b_w, int b_h, int frames_b,
                                std::string* error) {
    SyntheticClipSpec a, b;
    a.width = a_w;
    a.height = a_h;
    a.frames = frames_a;
    a.crf = 18;
    b = a;
    b.width = b_w;
    b.height = b_h;
    b.frames = frames_b;
    b.seed = 2;
    const std::string pa = path + ".a.ts", pb = path + ".b.ts";
    if (write_synthetic_clip(pa, a, error).empty() || write_synthetic_clip(pb, b, error).empty()) return false;
    const bool ok = write_bytes(path, read_bytes(pa) + read_bytes(pb));
    std::remove(pa.c_str());
    std::remove(pb.c_str());
    return ok;
}

}  // namespace corrtrack::test
