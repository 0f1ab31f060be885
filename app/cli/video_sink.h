// The annotated video output of `corrtrack track --video`: boxes, the search window and the
// first target's heatmap inset drawn on the decoder's YUV picture, encoded on a writer thread
// (app/io/async_video.h) so that the tracker only copies the frame.
// Thread rules: the stream's thread; the queue's writer thread owns the encoder until drain().
#pragma once

#include <memory>

#include "app/cli/output_sinks.h"

namespace corrtrack {

std::unique_ptr<OutputSink> make_video_sink();

}  // namespace corrtrack
