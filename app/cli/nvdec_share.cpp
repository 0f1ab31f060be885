#include "app/cli/nvdec_share.h"

#include <cmath>
#include <cstdio>

#include "app/io/demuxer.h"
#include "app/io/input_path.h"

namespace corrtrack {

NvdecNeed nvdec_need(const std::string& input, DecodeMode requested, bool realtime) {
    NvdecNeed need;
    SourceOptions so;
    so.input = input;
    ResolvedInput resolved;
    std::string error;
    // An input that does not resolve fails on its own when it opens; it needs no NVDEC place.
    if (!resolve_input(so, &resolved, &error)) return need;
    need.candidate = resolved.kind == SourceKind::kFile || resolved.kind == SourceKind::kUrl;
    need.paced = need.candidate && (realtime || resolved.kind == SourceKind::kUrl);
    if (!need.paced || requested != DecodeMode::kAuto) return need;
    need.paced_mpix_per_s = kUnknownPacedMpixPerS;
    if (resolved.kind != SourceKind::kFile) return need;
    so.open_timeout_s = 5.0;
    Demuxer demuxer;
    if (!demuxer.open(so, resolved, &error)) return need;
    const Size s = demuxer.size();
    const double fps = demuxer.fps();
    if (s.width > 0 && s.height > 0 && fps > 0 && std::isfinite(fps))
        need.paced_mpix_per_s = static_cast<double>(s.width) * s.height * fps / 1e6;
    return need;
}

DecoderChoice NvdecShare::take(DecodeMode requested, bool candidate, double paced_mpix_per_s) {
    DecoderChoice c;
    c.mode = requested;
    if (requested != DecodeMode::kAuto || !candidate) return c;
    c.by_rate = paced_mpix_per_s > 0;
    // The first paced stream always fits: one stream on NVDEC is never worse than on the CPU.
    const bool fits = c.by_rate ? held_rate_ == 0 || held_rate_ + paced_mpix_per_s <= rate_limit_ : held_ < limit_;
    if (fits) {
        c.holds_nvdec = true;
        if (c.by_rate) {
            c.mpix_per_s = paced_mpix_per_s;
            held_rate_ += paced_mpix_per_s;
        } else {
            ++held_;
        }
        return c;
    }
    c.mode = DecodeMode::kSoftware;
    c.nvdec_full = true;
    char why[160];
    if (c.by_rate)
        std::snprintf(why, sizeof why, "NVDEC full: %.0f of %.0f Mpixel/s taken by paced streams (--nvdec-rate)",
                      held_rate_, rate_limit_);
    else
        std::snprintf(why, sizeof why, "NVDEC full: %d streams on it (--nvdec-streams)", limit_);
    c.full_why = why;
    return c;
}

void NvdecShare::give_back(const DecoderChoice& choice) {
    if (!choice.holds_nvdec) return;
    if (choice.by_rate) {
        held_rate_ -= choice.mpix_per_s;
        if (held_rate_ < 1e-6) held_rate_ = 0;  // rounding must not leave a phantom stream
    } else if (held_ > 0) {
        --held_;
    }
}

}  // namespace corrtrack
