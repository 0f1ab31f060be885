// The annotated output video on its own thread: the tracking thread copies each frame and
// what to draw on it into a slot of a bounded queue; a writer thread draws (boxes, search
// windows, heatmap inset) and encodes. Nothing is dropped: when every slot is queued the
// tracker waits (and the waits are counted), and close() encodes every queued frame. Slots
// keep their buffers, so once the frame size is stable no frame allocates.
// Thread rules: acquire(), submit(), close() and stats() belong to one producer thread (the
// tracker's); the writer thread owns the VideoWriter from construction until close() returns.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "app/io/annotate.h"
#include "app/io/video_writer.h"

namespace corrtrack {

// One frame to draw and encode. The producer fills it between acquire() and submit(): either
// yuv, packed YUV 4:2:0 (yuv420_bytes) in yuv_format, the decoder's planes as they are; or, when
// yuv is empty, rgb, packed RGB24 (width * 3 bytes a row). overlay says what goes on top.
struct VideoSlot {
    std::vector<std::uint8_t> yuv;
    YuvFormat yuv_format;
    std::vector<std::uint8_t> rgb;
    int width = 0, height = 0;
    Overlay overlay;
};

struct VideoQueueStats {
    int depth = 0;    // slots
    long frames = 0;  // encoded (after close(): every frame submitted, unless a write failed)
    long submitted = 0;
    long waits = 0;      // acquire() calls that found every slot queued and waited
    double wait_ms = 0;  // the producer's time spent in those waits
};

class AsyncVideoWriter {
public:
    // Takes an open writer; `depth` slots (at least 1) are made up front.
    AsyncVideoWriter(std::unique_ptr<VideoWriter> writer, int depth);
    ~AsyncVideoWriter();  // close() without a message when it was not called
    AsyncVideoWriter(const AsyncVideoWriter&) = delete;
    AsyncVideoWriter& operator=(const AsyncVideoWriter&) = delete;

    // A free slot, waiting while all are queued; nullptr once a write has failed (error()
    // says why) or after close().
    VideoSlot* acquire();
    // Queues the slot from acquire() for the writer thread.
    void submit(VideoSlot* slot);
    // Encodes every queued frame, closes the writer and joins the thread. False with the
    // first error when any write or the close failed.
    bool close(std::string* error);

    std::string error() const;  // the first write error ("" while none)
    VideoQueueStats stats() const;
    const VideoWriter& writer() const { return *writer_; }

private:
    void run();

    std::unique_ptr<VideoWriter> writer_;
    std::vector<VideoSlot> slots_;
    mutable std::mutex mutex_;
    std::condition_variable queued_cv_, freed_cv_;
    std::deque<VideoSlot*> queued_;  // submitted, in order
    std::vector<VideoSlot*> free_;
    bool closing_ = false, closed_ = false;
    std::string error_;
    VideoQueueStats stats_;
    std::thread thread_;
};

}  // namespace corrtrack
