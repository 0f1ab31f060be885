#include "app/cli/nvdec_share.h"

#include <cmath>
#include <cstdio>

#include "app/io/demuxer.h"
#include "app/io/input_path.h"

namespace corrtrack {
namespace {

bool resolve(const std::string& input, ResolvedInput* resolved) {
    SourceOptions so;
    so.input = input;
    std::string error;
    return resolve_input(so, resolved, &error);
}

}  // namespace

bool nvdec_candidate(const std::string& input) {
    ResolvedInput resolved;
    // An input that does not resolve fails on its own when it opens; it needs no NVDEC place.
    if (!resolve(input, &resolved)) return false;
    return resolved.kind == SourceKind::kFile || resolved.kind == SourceKind::kUrl;
}

bool paced_by_source(const std::string& input) {
    ResolvedInput resolved;
    return resolve(input, &resolved) && resolved.kind == SourceKind::kUrl;
}

double paced_pixel_rate(const std::string& input) {
    SourceOptions so;
    so.input = input;
    ResolvedInput resolved;
    std::string error;
    if (!resolve_input(so, &resolved, &error) || resolved.kind != SourceKind::kFile) return kUnknownPacedMpixPerS;
    so.open_timeout_s = 5.0;
    Demuxer demuxer;
    // A file that does not open fails on its own when its stream starts.
    if (!demuxer.open(so, resolved, &error)) return kUnknownPacedMpixPerS;
    const Size s = demuxer.size();
    const double fps = demuxer.fps();
    if (s.width <= 0 || s.height <= 0 || !(fps > 0) || !std::isfinite(fps)) return kUnknownPacedMpixPerS;
    return static_cast<double>(s.width) * s.height * fps / 1e6;
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
