// The decoder side of FrameSource: libavcodec on the CPU (frame threads for files, slice
// threads for live sources) or NVDEC through FFmpeg's CUDA hwaccel, with the NVDEC probe: until
// NVDEC delivers its first frame in device memory the packets it was given are kept, so that a
// refusal (profile, chroma format, bit depth, size) or an early failure restarts a software
// decoder on them and no frame is lost. A stream that changes under a running NVDEC decode
// carries on in software in the same context.
// Thread rules: belongs to the thread that owns the FrameSource (libavcodec calls its
// get_format callback on that thread); not movable (the codec context points back at it).
#pragma once

#include <deque>
#include <memory>
#include <string>

#include "app/io/demuxer.h"
#include "app/io/frame_source.h"
#include "app/io/libav_handles.h"

namespace corrtrack {

class Decoder {
public:
    Decoder() = default;
    Decoder(const Decoder&) = delete;
    Decoder& operator=(const Decoder&) = delete;

    // Opens a decoder for the demuxer's stream: NVDEC (probing) when options.decode asks and it
    // can serve the input, else software. *delivered is the source's count of frames delivered
    // (for the note about a mid-stream change). False with a message for the user.
    bool open(const Demuxer& demuxer, const SourceOptions& options, const long* delivered, std::string* error);

    AVCodecContext* context() const { return context_.get(); }
    bool probing() const { return hw_ == Hw::kProbing; }
    bool nvdec() const { return hw_ == Hw::kOn; }
    // Empty, or why NVDEC was asked for but the CPU decodes.
    const std::string& note() const { return note_; }

    // While probing: whether NVDEC has failed, judging the last receive (received: the frame)
    // or send (received: nullptr). A frame in device memory ends the probe.
    bool probe_failed(int ret, const AVFrame* received);
    // While probing: keeps a copy of pkt for a software decoder. False when out of memory.
    bool keep_for_probe(const AVPacket* pkt);
    // Packets NVDEC was given beyond what the probe keeps; their frames are lost on fallback.
    long probe_packets_dropped() const { return probe_packets_dropped_; }
    // After probe_failed: a software decoder in place of NVDEC, to be fed the kept packets
    // (next_replayed) before the demuxer's. False with *error.
    bool fall_back_to_software(std::string* error);
    // Moves the next kept packet into pkt; false when none is left.
    bool next_replayed(AVPacket* pkt);

private:
    // kProbing: NVDEC is set up but has not delivered a frame yet.
    enum class Hw { kOff, kProbing, kOn };

    bool prepare_nvdec();
    bool open_codec(bool hw, std::string* message);
    static AVPixelFormat get_format_callback(AVCodecContext* cc, const AVPixelFormat* formats);
    AVPixelFormat choose_format(AVCodecContext* cc, const AVPixelFormat* formats);

    const AVStream* stream_ = nullptr;
    const AVCodec* codec_ = nullptr;
    SourceKind kind_ = SourceKind::kFile;
    bool live_ = false;
    std::string name_, what_;
    DecodeMode mode_ = DecodeMode::kSoftware;
    Stream cuda_stream_ = nullptr;
    long long max_pixels_ = 0;
    int held_frames_ = 0;
    const long* delivered_ = nullptr;

    std::unique_ptr<AVCodecContext, CodecFreer> context_;
    Hw hw_ = Hw::kOff;
    std::unique_ptr<AVBufferRef, BufferUnref> hw_device_;
    bool cuda_chosen_ = false;  // get_format picked AV_PIX_FMT_CUDA at least once
    std::string refusal_;       // set while probing: why NVDEC gave up (the note)
    std::deque<std::unique_ptr<AVPacket, PacketFreer>> probe_packets_, replay_;
    long probe_packets_dropped_ = 0;  // beyond kMaxProbePackets
    std::string note_;
};

}  // namespace corrtrack
