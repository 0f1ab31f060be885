// The hand-off between the decode thread and the tracker: a fixed pool of frame slots and a
// decode thread that fills them. Files never drop (the decoder waits for a free slot); live
// sources keep the newest frame and count what they drop.
// Thread rules: the decode thread owns the FrameSource; the consumer calls acquire/release
// from one thread; they share only the mutex-guarded slot states and atomics.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <deque>

#include "app/io/frame_source.h"

namespace corrtrack {

// Slots: the decoder fills one, the consumer holds what it acquired, the rest wait in display
// order. A live source with no free slot overwrites the oldest waiting frame (dropped() counts
// it), so the frame acquire() returns is at most slots - 2 frames older than the newest one
// decoded: few slots give the least latency, more slots ride out jitter. stop() returns once
// the decode thread has ended: at once when it waits for a slot, else after the read in
// progress (bounded by the source's read timeout).
class FramePipeline {
public:
    // slots >= 2 (fewer are raised to 2). Starts the decode thread at once.
    FramePipeline(std::unique_ptr<FrameSource> source, int slots = 4);
    ~FramePipeline();  // stops the decode thread
    FramePipeline(const FramePipeline&) = delete;
    FramePipeline& operator=(const FramePipeline&) = delete;

    // Blocks until the next frame is ready (returns it) or the input ended (nullptr; then
    // error() is empty at a clean end, or says what went wrong). The frame stays valid
    // until release().
    const Frame* acquire();
    void release(const Frame* frame);

    // Valid once acquire() has returned nullptr (written by the decode thread before that).
    const std::string& error() const { return error_; }
    // The source's account of its frames (lost, damaged, resized) and why it ended; valid
    // once acquire() has returned nullptr. After stop() the end is kInterrupted.
    const SourceReport& report() const { return report_; }
    long dropped() const { return dropped_.load(); }
    bool live() const { return live_; }
    Size size() const { return size_; }
    double fps() const { return fps_; }
    long frame_count() const { return frame_count_; }
    std::string description() const { return description_; }
    void stop();  // ends the decode thread; acquire() then returns nullptr

private:
    void decode_loop();

    std::unique_ptr<FrameSource> source_;
    std::vector<Frame> slots_;
    bool live_ = false;
    Size size_;
    double fps_ = 0;
    long frame_count_ = -1;
    std::string description_;

    std::mutex mutex_;                 // guards free_, ready_, finished_, stopping_, error_
    std::condition_variable changed_;  // signalled on every change of the above
    std::deque<int> free_;             // slots the decoder may fill
    std::deque<int> ready_;            // decoded slots in display order
    bool finished_ = false;            // decoder reached the end or an error
    bool stopping_ = false;
    std::string error_;
    SourceReport report_;
    std::atomic<long> dropped_{0};
    std::thread thread_;
};

}  // namespace corrtrack
