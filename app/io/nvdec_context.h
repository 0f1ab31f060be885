// The CUDA device context NVDEC decodes in: the CUDA runtime's primary context of the
// consumer's device, working on the consumer's stream, handed to FFmpeg as a user context.
// Thread rules: call on the thread that opens the source; the context (an AVBufferRef) then
// belongs to the decoder, and the last unref gives the primary context back.
#pragma once

#include <string>

#include "corrtrack/image.h"

extern "C" {
#include <libavutil/buffer.h>
}

namespace corrtrack {

// stream: the consumer's stream (null: the legacy default stream on the current device).
// nullptr with *why (for the user) when there is no usable CUDA device or driver, or when this
// build's libavutil has no CUDA device context.
AVBufferRef* open_cuda_device(Stream stream, std::string* why);

}  // namespace corrtrack
