// Tracks one box through a video with corrtrack's installed libraries (corrtrack::io decodes,
// corrtrack::tracker tracks) and prints "frame x y w h score" for every frame.
//   track_clip <video> x,y,w,h
#include <cstdio>
#include <string>

#include "app/io/box_file.h"
#include "app/io/frame_source.h"
#include "app/track/tracker.h"

int main(int argc, char** argv) {
    using namespace corrtrack;
    std::string error;
    BoxF box;
    if (argc != 3 || !parse_box(argv[2], &box, &error)) {
        std::fprintf(stderr, "usage: track_clip <video> x,y,w,h %s\n", error.c_str());
        return 2;
    }
    SourceOptions input;
    input.input = argv[1];
    input.want_rgb = false;
    input.want_yuv = true;  // chroma for the tracker's colour model, as `corrtrack track` has it
    std::unique_ptr<FrameSource> source = FrameSource::open(input, &error);
    Tracker tracker(TrackerOptions{});  // kernel "auto": CUDA with a GPU, else cpu_fast
    Frame frame;
    for (long n = 0; source && source->read(frame) == ReadStatus::kFrame; ++n) {
        if (n == 0 && !tracker.init(frame.frame_view(), box, &error)) break;
        const TrackResult r = n == 0 ? initial_result(0, box) : tracker.update(frame.frame_view());
        std::printf("%ld %.2f %.2f %.2f %.2f %.3f\n", frame.index, r.box.x, r.box.y, r.box.width, r.box.height,
                    r.score);
    }
    if (source && error.empty()) error = source->error();
    if (!error.empty()) std::fprintf(stderr, "track_clip: %s\n", error.c_str());
    return error.empty() ? 0 : 1;
}
