// FramePipeline: the decode thread and the slot hand-off. See frame_ring.h for the rules.
#include "app/pipeline/frame_ring.h"

#include <algorithm>
#include <utility>

namespace corrtrack {

FramePipeline::FramePipeline(std::unique_ptr<FrameSource> source, int slots)
    : source_(std::move(source)), slots_(static_cast<std::size_t>(std::max(slots, 2))) {
    for (int i = 0; i < static_cast<int>(slots_.size()); ++i) free_.push_back(i);
    if (!source_) {
        finished_ = true;
        error_ = "no input source";
        report_.end = EndReason::kFailed;
        return;
    }
    // Read once here, before the decode thread takes the source over.
    live_ = source_->live();
    size_ = source_->size();
    fps_ = source_->fps();
    frame_count_ = source_->frame_count();
    description_ = source_->description();
    thread_ = std::thread(&FramePipeline::decode_loop, this);
}

FramePipeline::~FramePipeline() { stop(); }

void FramePipeline::stop() {
    {
        std::lock_guard<std::mutex> lock(mutex_);  // guards stopping_
        stopping_ = true;
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void FramePipeline::decode_loop() {
    std::string end_error;
    for (;;) {
        int slot = -1;
        {
            // Guards free_, ready_ and stopping_ while the decoder picks a slot to fill.
            std::unique_lock<std::mutex> lock(mutex_);
            changed_.wait(lock, [&] { return stopping_ || !free_.empty() || (live_ && !ready_.empty()); });
            if (stopping_) break;
            if (!free_.empty()) {
                slot = free_.front();
                free_.pop_front();
            } else {
                // Live and the consumer is behind: the oldest unconsumed frame makes way.
                slot = ready_.front();
                ready_.pop_front();
                dropped_.fetch_add(1);
            }
        }
        // The slot now belongs to this thread alone; the read may block up to the source's
        // read timeout, with no lock held.
        const ReadStatus status = source_->read(slots_[static_cast<std::size_t>(slot)]);
        {
            std::lock_guard<std::mutex> lock(mutex_);  // guards free_ and ready_
            if (status == ReadStatus::kFrame)
                ready_.push_back(slot);
            else
                free_.push_back(slot);
        }
        changed_.notify_all();
        if (status != ReadStatus::kFrame) {
            if (status == ReadStatus::kError) end_error = source_->error();
            break;
        }
    }
    SourceReport report = source_->report();
    {
        std::lock_guard<std::mutex> lock(mutex_);  // guards stopping_
        if (report.end == EndReason::kNone && stopping_) report.end = EndReason::kInterrupted;
    }
    // The decode thread is the only libav user, so the source is closed here too.
    source_.reset();
    {
        std::lock_guard<std::mutex> lock(mutex_);  // guards finished_, error_ and report_
        finished_ = true;
        error_ = std::move(end_error);
        report_ = std::move(report);
    }
    changed_.notify_all();
}

const Frame* FramePipeline::acquire() {
    // Guards ready_, finished_ and stopping_ while the consumer waits for a frame.
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !ready_.empty() || finished_ || stopping_; });
    if (ready_.empty() || stopping_) return nullptr;
    const int slot = ready_.front();
    ready_.pop_front();
    return &slots_[static_cast<std::size_t>(slot)];
}

void FramePipeline::release(const Frame* frame) {
    if (!frame) return;
    const std::ptrdiff_t slot = frame - slots_.data();
    if (slot < 0 || slot >= static_cast<std::ptrdiff_t>(slots_.size())) return;
    {
        std::lock_guard<std::mutex> lock(mutex_);  // guards free_
        free_.push_back(static_cast<int>(slot));
    }
    changed_.notify_all();
}

}  // namespace corrtrack
