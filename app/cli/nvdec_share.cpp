#include "app/cli/nvdec_share.h"

#include "app/io/input_path.h"

namespace corrtrack {

bool nvdec_candidate(const std::string& input) {
    SourceOptions so;
    so.input = input;
    ResolvedInput resolved;
    std::string error;
    // An input that does not resolve fails on its own when it opens; it needs no NVDEC place.
    if (!resolve_input(so, &resolved, &error)) return false;
    return resolved.kind == SourceKind::kFile || resolved.kind == SourceKind::kUrl;
}

DecoderChoice NvdecShare::take(DecodeMode requested, bool candidate) {
    DecoderChoice c;
    c.mode = requested;
    if (requested != DecodeMode::kAuto || !candidate) return c;
    if (held_ < limit_) {
        ++held_;
        c.holds_nvdec = true;
        return c;
    }
    c.mode = DecodeMode::kSoftware;
    c.nvdec_full = true;
    return c;
}

void NvdecShare::give_back(const DecoderChoice& choice) {
    if (choice.holds_nvdec && held_ > 0) --held_;
}

}  // namespace corrtrack
