#include "app/bench/e2e_clip.h"

#include "app/io/frame_source.h"
#include "app/pipeline/frame_session.h"
#include "app/track/tracker.h"

namespace corrtrack {

bool probe_e2e_clip(const std::string& path, const std::string& kernel, E2eClip* clip, std::string* error) {
    clip->path = path;
    clip->name = path.substr(path.find_last_of('/') + 1);
    SourceOptions so;
    so.input = path;
    so.want_rgb = false;
    auto source = FrameSource::open(so, error);
    if (!source) return false;
    Frame f;
    if (source->read(f) != ReadStatus::kFrame || !f.has_host_luma()) {
        *error = "'" + path + "' has no frame: " + source->error();
        return false;
    }
    clip->size = f.size();
    clip->fps = source->fps();
    clip->frames = source->frame_count();
    clip->first_luma.assign(f.luma.data(), f.luma.data() + static_cast<std::size_t>(f.width) * f.height);
    // NVDEC as the tracked passes would open it: on a tracker's stream.
    TrackerOptions to;
    to.kernel = kernel;
    MultiTracker tracker(to);
    if (!tracker.set_kernel(kernel, error)) return false;
    SourceOptions nv = so;
    match_source_to_tracker(nv, tracker, DecodeMode::kNvdec, 6);
    nv.want_rgb = false;
    std::string why;
    auto hw = FrameSource::open(nv, &why);
    clip->nvdec = hw && hw->decode_mode() == "nvdec";
    clip->nvdec_note = clip->nvdec ? "" : hw ? hw->decode_note() : why;
    return true;
}

}  // namespace corrtrack
