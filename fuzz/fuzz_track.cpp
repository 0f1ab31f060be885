// Fuzz target: the track loop on short clips. The bytes are a media file (in memory); the
// decode thread, the frame ring and the tracker (cpu_fast, three scales, blend updates) run
// over up to 24 frames with one box in the middle of the declared frame. Nothing may crash,
// hang or leak, and every frame handed to the callback carries one result per target.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "app/pipeline/frame_session.h"
#include "app/pipeline/track_loop.h"
#include "fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) { return fuzz::quiet_ffmpeg_log(); }

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace corrtrack;
    if (size < 1) return 0;
    static const char* const kNames[] = {"in.mkv", "in.mp4", "in.avi", "in.ts"};
    SourceOptions so = fuzz::memory_source(data, size, kNames);
    so.want_rgb = false;
    so.max_pixels = 512 * 512;
    std::string error;
    auto source = FrameSource::open(so, &error);
    if (!source) return 0;
    TrackerOptions to;
    to.kernel = "cpu_fast";
    to.scales = 1 + (data[0] >> 6);  // 1..4
    MultiTracker tracker(to);
    if (!tracker.set_kernel(to.kernel, &error)) std::abort();
    SessionOptions opts;
    opts.slots = 4;
    FrameSession session(tracker, std::move(source), opts);
    const Size s = session.size();
    if (s.width < 16 || s.height < 16) return 0;
    const std::vector<BoxF> boxes{{s.width / 4.0, s.height / 4.0, s.width / 2.0, s.height / 2.0}};
    TrackLoopOptions lo;
    lo.pacing.max_frames = 24;
    TrackLoopStats st;
    run_track_loop(
        session, boxes, lo,
        [&](const LoopFrame&, std::vector<TrackResult>& results, std::string*) {
            if (results.size() != boxes.size()) std::abort();
            return true;
        },
        &st, &error);
    return 0;
}
