// The writer thread and its bounded queue; see async_video.h.
#include "app/io/async_video.h"

#include <chrono>

namespace corrtrack {

AsyncVideoWriter::AsyncVideoWriter(std::unique_ptr<VideoWriter> writer, int depth)
    : writer_(std::move(writer)), slots_(static_cast<std::size_t>(depth < 1 ? 1 : depth)) {
    stats_.depth = static_cast<int>(slots_.size());
    for (VideoSlot& s : slots_) free_.push_back(&s);
    thread_ = std::thread([this] { run(); });
}

AsyncVideoWriter::~AsyncVideoWriter() { close(nullptr); }

VideoSlot* AsyncVideoWriter::acquire() {
    std::unique_lock<std::mutex> lock(mutex_);
    if (free_.empty() && error_.empty() && !closing_) {
        // Back-pressure: the encoder is behind by every slot; wait rather than drop.
        const auto t0 = std::chrono::steady_clock::now();
        freed_cv_.wait(lock, [&] { return !free_.empty() || !error_.empty(); });
        ++stats_.waits;
        stats_.wait_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    if (!error_.empty() || closing_ || free_.empty()) return nullptr;
    VideoSlot* s = free_.back();
    free_.pop_back();
    return s;
}

void AsyncVideoWriter::submit(VideoSlot* slot) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        queued_.push_back(slot);
        ++stats_.submitted;
    }
    queued_cv_.notify_one();
}

void AsyncVideoWriter::run() {
    std::string why;
    for (;;) {
        VideoSlot* s = nullptr;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            queued_cv_.wait(lock, [&] { return !queued_.empty() || closing_; });
            if (queued_.empty()) return;  // closing and drained
            s = queued_.front();
            queued_.pop_front();
        }
        bool ok = true;
        if (error_.empty() && !s->yuv.empty()) {  // only this thread sets error_: reading it unlocked is safe
            const std::size_t y_bytes = static_cast<std::size_t>(s->width) * s->height;
            const std::size_t uv_pitch = static_cast<std::size_t>(s->width + 1) / 2;
            std::uint8_t* y = s->yuv.data();
            YuvImage img{y,        y + y_bytes,  y + y_bytes + uv_pitch * ((s->height + 1) / 2),
                         s->width, s->height,    static_cast<std::size_t>(s->width),
                         uv_pitch, s->yuv_format};
            draw_overlay(img, s->overlay);
            ok = writer_->write_yuv420(y, s->yuv_format, &why);
        } else if (error_.empty()) {
            RgbImage img{s->rgb.data(), s->width, s->height, static_cast<std::size_t>(s->width) * 3};
            draw_overlay(img, s->overlay);
            ok = writer_->write_rgb(s->rgb.data(), img.pitch, &why);
        }
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (!ok && error_.empty()) error_ = why;
            if (ok && error_.empty()) ++stats_.frames;
            free_.push_back(s);
        }
        freed_cv_.notify_one();
    }
}

bool AsyncVideoWriter::close(std::string* error) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (closed_) {
            if (error && !error_.empty()) *error = error_;
            return error_.empty();
        }
        closing_ = true;
    }
    queued_cv_.notify_one();
    if (thread_.joinable()) thread_.join();
    std::string why;
    const bool closed = writer_->close(&why);
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    if (!closed && error_.empty()) error_ = why;
    if (error && !error_.empty()) *error = error_;
    return error_.empty();
}

std::string AsyncVideoWriter::error() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return error_;
}

VideoQueueStats AsyncVideoWriter::stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
}

}  // namespace corrtrack
