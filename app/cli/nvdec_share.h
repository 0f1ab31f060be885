// Which decoder each stream of a several-input run gets with `--decode auto`.
//
// Full-speed streams (files without --realtime): NVDEC for at most `limit` streams at once
// (`--nvdec-streams`, default kDefaultNvdecStreams), the CPU's decoders for the rest. On the
// H200, FFmpeg alone decoding 1080p H.264 on NVDEC in N concurrent sessions reached 395 fps
// (N=1), 1082 (4), 1468 (8) and 1457 (16); 4K 99 (1), 346 (8) and 356 (16). Both sizes
// plateau at about 8 sessions (about 3 Gpixel/s), so a 9-th full-speed session only shares
// NVDEC while the CPU decoders (2213 fps at 1080p with 16 cores) sit idle.
//
// Paced streams (--realtime, and URLs, which come at their sender's rate): NVDEC while the
// pixel rates they ask for add up to at most `rate_limit` Mpixel/s (`--nvdec-rate`, default
// kDefaultNvdecMpixPerS, 80% of that plateau). A paced stream asks only width x height x fps
// of its decoder, so 32 live 1080p30 streams (1991 Mpixel/s) all fit on NVDEC, where they ran
// without a drop, while 8 on NVDEC and 24 on the CPU dropped 324 late frames (H200,
// bench/results/h200_2026-12-02b): the CPU decoders compete with the trackers for the cores.
//
// Streams take their decoder in input order: all before any starts without --jobs (so the
// choice cannot depend on which thread runs first), else each as it starts; they
// give it back when they end, so with --jobs the next stream to start takes the place. Only
// files and URLs count (NVDEC serves nothing else); a file whose codec NVDEC declines still
// holds its place until it ends (its codec is known only once it is open). --decode nvdec
// puts every stream on NVDEC and --decode sw none, as asked.
// Thread rules: NvdecShare is not locked; its owner calls take() and give_back() under its
// own lock (run_streams' start lock). nvdec_need may open the input: call it before the
// streams start.
#pragma once

#include <string>

#include "app/io/frame_source.h"

namespace corrtrack {

constexpr int kDefaultNvdecStreams = 8;
constexpr int kMaxNvdecStreams = 4096;
constexpr double kDefaultNvdecMpixPerS = 2400;
constexpr double kMaxNvdecMpixPerS = 1e6;
// What a paced input is taken to ask for when its container does not say (URLs are not
// opened twice; a file that gives no size or rate): 1920x1080 at 30 fps.
constexpr double kUnknownPacedMpixPerS = 1920.0 * 1080 * 30 / 1e6;

// What sharing NVDEC needs to know of one input, from one resolve_input.
struct NvdecNeed {
    bool candidate = false;       // a file or URL: NVDEC may decode it (cameras, images never)
    bool paced = false;           // comes at its own pace: a URL, or any file with --realtime
    double paced_mpix_per_s = 0;  // with paced and --decode auto: what it asks of its decoder
};
// `input` under --decode `requested` and --realtime `realtime`. A paced auto file is opened
// for its container's width x height x frame rate (kUnknownPacedMpixPerS for URLs, which are
// not opened twice, and files that do not say or do not open: they fail on their own later).
NvdecNeed nvdec_need(const std::string& input, DecodeMode requested, bool realtime);

// One stream's decoder: the mode its FrameSource opens with, and the NVDEC share it holds
// (to give back when it ends).
struct DecoderChoice {
    DecodeMode mode = DecodeMode::kSoftware;
    bool holds_nvdec = false;
    double mpix_per_s = 0;    // a paced stream's pixel rate, held while holds_nvdec
    bool nvdec_full = false;  // auto sent it to the CPU: `limit` streams (or the rate) hold NVDEC
    bool by_rate = false;     // judged by the pixel rate (a paced stream), not the count
    std::string full_why;     // with nvdec_full: "NVDEC full: 8 streams on it (--nvdec-streams)"
};

class NvdecShare {
public:
    explicit NvdecShare(int limit, double rate_limit = kDefaultNvdecMpixPerS)
        : limit_(limit), rate_limit_(rate_limit) {}
    // The decoder of the next stream to start, which asked for `requested` (--decode);
    // candidate and paced_mpix_per_s: its nvdec_need (0 for a full-speed stream).
    DecoderChoice take(DecodeMode requested, bool candidate, double paced_mpix_per_s = 0);
    // The stream that took `choice` has ended.
    void give_back(const DecoderChoice& choice);
    int held() const { return held_; }               // full-speed streams on NVDEC
    double held_rate() const { return held_rate_; }  // Mpixel/s of the paced ones

private:
    int limit_;
    double rate_limit_;
    int held_ = 0;
    double held_rate_ = 0;
};

}  // namespace corrtrack
