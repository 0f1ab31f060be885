// Which decoder each stream of a several-input run gets with `--decode auto`: NVDEC for at
// most `limit` streams at once (`--nvdec-streams`, default kDefaultNvdecStreams), the CPU's
// decoders for the rest, so that streams beyond NVDEC's saturation point add the CPU's
// decoders to the run instead of queueing on NVDEC.
//
// Why a count of streams: on the H200, FFmpeg alone decoding 1080p H.264 on NVDEC in N
// concurrent sessions reached 395 fps (N=1), 1082 (4), 1468 (8) and 1457 (16); 4K 99 (1), 346
// (8) and 356 (16). Both sizes plateau at about 8 sessions (about 3 Gpixel/s), so an 8-th
// session already gets the last of NVDEC and a 9-th only shares it, while the CPU decoders
// (2213 fps at 1080p with 16 cores) sit idle.
//
// The rule: streams take their decoder as they start, in input order (all at once without
// --jobs, so the first `limit` inputs NVDEC can serve get it); a stream gives its NVDEC place
// back when it ends, so with --jobs the next stream to start takes it. Only files and URLs
// count (NVDEC serves nothing else); a file whose codec NVDEC declines still holds its place
// until it ends (its codec is known only once it is open). --decode nvdec puts every stream on
// NVDEC and --decode sw none, as asked.
// Thread rules: NvdecShare is not locked; its owner calls take() and give_back() under its
// own lock (run_streams' start lock).
#pragma once

#include <string>

#include "app/io/frame_source.h"

namespace corrtrack {

constexpr int kDefaultNvdecStreams = 8;
constexpr int kMaxNvdecStreams = 4096;

// A file or URL: an input NVDEC may decode (cameras and image sequences never reach it).
bool nvdec_candidate(const std::string& input);

// One stream's decoder: the mode its FrameSource opens with, and whether it holds an NVDEC
// place (to give back when it ends).
struct DecoderChoice {
    DecodeMode mode = DecodeMode::kSoftware;
    bool holds_nvdec = false;
    bool nvdec_full = false;  // auto sent it to the CPU because `limit` streams hold NVDEC
};

class NvdecShare {
public:
    explicit NvdecShare(int limit) : limit_(limit) {}
    // The decoder of the next stream to start, which asked for `requested` (--decode);
    // candidate: nvdec_candidate(its input).
    DecoderChoice take(DecodeMode requested, bool candidate);
    // The stream that took `choice` has ended.
    void give_back(const DecoderChoice& choice);
    int held() const { return held_; }
    int limit() const { return limit_; }

private:
    int limit_;
    int held_ = 0;
};

}  // namespace corrtrack
