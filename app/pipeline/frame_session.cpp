#include "app/pipeline/frame_session.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "app/pipeline/frame_upload.h"
#include "corrtrack/cuda_util.h"

namespace corrtrack {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

void match_source_to_tracker(SourceOptions& so, const MultiTracker& tracker, DecodeMode decode, int slots) {
    so.decode = decode == DecodeMode::kAuto && !tracker.on_gpu() ? DecodeMode::kSoftware : decode;
    so.cuda_stream = tracker.stream();
    so.want_host_luma = !tracker.on_gpu();
    // The colour cue reads the decoder's chroma planes (Frame::yuv, no RGB) on the host: on
    // the CPU path, and on the GPU path where frames are decoded in software (an NVDEC frame
    // stays on the device, and there the cue steps aside).
    so.want_yuv =
        so.want_yuv || (tracker.options().colour > 0 && (!tracker.on_gpu() || so.decode == DecodeMode::kSoftware));
    so.held_frames = slots + 2;
}

FrameSession::FrameSession(MultiTracker& tracker, const SessionOptions& options)
    : tracker_(tracker), options_(options) {}

FrameSession::FrameSession(MultiTracker& tracker, std::unique_ptr<FrameSource> source, const SessionOptions& options)
    : FrameSession(tracker, options) {
    stream_ = options.source.cuda_stream;
    start(std::move(source));
}

FrameSession::~FrameSession() {
    release(current_);
    if (pipeline_) pipeline_->stop();
}

void FrameSession::start(std::unique_ptr<FrameSource> source) {
    int slots = options_.slots;
    if (source) {
        decode_mode_ = source->decode_mode();
        decode_note_ = source->decode_note();
        if (source->live() && options_.live_slots > 0) slots = options_.live_slots;
    }
    pipeline_ = std::make_unique<FramePipeline>(std::move(source), slots);
}

std::unique_ptr<FrameSession> FrameSession::open(MultiTracker& tracker, const SessionOptions& o, std::string* error) {
    SourceOptions so = o.source;
    match_source_to_tracker(so, tracker, o.decode, std::max(o.slots, o.live_slots));
    // Frames stay on the device (no host RGB: the decoder would download every frame) only
    // where every reader takes them there: a GPU tracker and an RGB consumer that reads
    // device frames.
    const bool device_frames =
        o.want_rgb && o.rgb_consumer_takes_device && tracker.on_gpu() && so.decode != DecodeMode::kSoftware;
    so.want_rgb = o.want_rgb && !device_frames;
    so.want_yuv = so.want_yuv || o.want_yuv;
    auto source = FrameSource::open(so, error);
    if (source && device_frames && source->decode_mode() != "nvdec") {
        // NVDEC declined the input (codec, profile, no device): software frames need host RGB.
        so.want_rgb = true;
        source = FrameSource::open(so, error);
    }
    if (!source) return nullptr;
    std::unique_ptr<FrameSession> session(new FrameSession(tracker, o));
    session->stream_ = so.cuda_stream;
    session->start(std::move(source));
    return session;
}

SessionFrame FrameSession::describe(const Frame* f) {
    SessionFrame s;
    s.index = f->index;
    s.pts = f->pts;
    s.size = f->size();
    s.decoded_size = f->decoded_size;
    s.decode_ms = f->decode_ms;
    s.decode_start = f->decode_start;
    s.latency_start = f->decode_start;
    s.frame = f;
    return s;
}

bool FrameSession::next(SessionFrame* out) {
    const std::atomic<bool>* stop = pacing_.stop;
    PacingClock& clock = pacing_.clock ? *pacing_.clock : PacingClock::steady();
    Clock::time_point due{};
    if (!paced_) {
        paced_ = true;
        pace_start_ = clock.now();
    }
    const double interval = pipeline_->fps() > 0 ? 1.0 / pipeline_->fps() : 0.04;
    for (;;) {
        if (stop && stop->load()) {
            stopped_ = true;
            return false;
        }
        const Frame* f = pipeline_->acquire();
        if (!f) {
            stopped_ = stop && stop->load();
            return false;
        }
        if (pacing_.max_frames >= 0 && taken_ >= pacing_.max_frames) {
            pipeline_->release(f);
            return false;
        }
        if (pacing_.realtime) {
            // Frame n is due at start + (pts_n - pts_0); one more than an interval late is dropped.
            if (first_pts_ < 0) first_pts_ = f->pts;
            due = pace_start_ +
                  std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(f->pts - first_pts_));
            const auto now = clock.now();
            if (taken_ > 0 && now - due > std::chrono::duration<double>(interval)) {
                ++late_drops_;
                pipeline_->release(f);
                continue;
            }
            if (due > now) clock.sleep_until(due);
        }
        ++taken_;
        *out = describe(f);
        if (pacing_.realtime)
            out->latency_start = f->decode_start <= due
                                     ? due - std::chrono::duration_cast<Clock::duration>(
                                                 std::chrono::duration<double, std::milli>(f->decode_ms))
                                     : due;
        upload(*out);
        return true;
    }
}

void FrameSession::upload(SessionFrame& f) {
    if (f.device_slot >= 0 || !f.frame || !f.frame->has_host_luma() || !tracker_.on_gpu()) return;
    // Three device frames: the one being copied, the one being tracked and one spare.
    if (!uploader_) uploader_ = std::make_unique<FrameUploader>(tracker_.gpu(), 3);
    f.device_slot = uploader_->upload(*f.frame);
}

bool FrameSession::copied(const SessionFrame& f) const {
    return f.device_slot >= 0 && uploader_->copied(f.device_slot);
}

ImageView FrameSession::host_luma_of(const Frame& f, bool* ready) {
    if (!*ready) {
        const auto stream = as_cuda(stream_);
        host_luma_.resize(static_cast<std::size_t>(f.width) * f.height);
        cudaError_t err = cudaMemcpy2DAsync(host_luma_.data(), f.width, f.device.data, f.device.pitch, f.width,
                                            f.height, cudaMemcpyDeviceToHost, stream);
        if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
        if (err != cudaSuccess) throw std::runtime_error(std::string("luma download: ") + cudaGetErrorString(err));
        *ready = true;
    }
    return {host_luma_.data(), f.width, f.height, static_cast<std::size_t>(f.width), MemorySpace::kHost};
}

FrameView FrameSession::with_host_colour(const Frame& f) {
    const int w = f.width, h = f.height, cw = (w + 1) / 2, ch = (h + 1) / 2;
    const std::size_t luma_bytes = static_cast<std::size_t>(w) * h, chroma_bytes = static_cast<std::size_t>(cw) * ch;
    if (colour_frame_ != &f || colour_index_ != f.index) {
        colour_planes_.resize(yuv420_bytes(w, h));  // grows once; no allocation per frame
        colour_uv_.resize(2 * chroma_bytes);
        const auto stream = as_cuda(stream_);
        cudaError_t err = cudaMemcpy2DAsync(colour_planes_.data(), w, f.device.data, f.device.pitch, w, h,
                                            cudaMemcpyDeviceToHost, stream);
        if (err == cudaSuccess)
            err = cudaMemcpy2DAsync(colour_uv_.data(), 2 * static_cast<std::size_t>(cw), f.device.uv, f.device.uv_pitch,
                                    2 * static_cast<std::size_t>(cw), ch, cudaMemcpyDeviceToHost, stream);
        if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
        if (err != cudaSuccess) throw std::runtime_error(std::string("colour download: ") + cudaGetErrorString(err));
        // NV12's UV pairs into the U and V planes the colour model reads.
        const std::uint8_t* uv = colour_uv_.data();
        std::uint8_t* u = colour_planes_.data() + luma_bytes;
        std::uint8_t* v = u + chroma_bytes;
        for (std::size_t i = 0; i < chroma_bytes; ++i) {
            u[i] = uv[2 * i];
            v[i] = uv[2 * i + 1];
        }
        colour_frame_ = &f;
        colour_index_ = f.index;
    }
    const std::uint8_t* planes = colour_planes_.data();
    const FrameView host{
        {planes, w, h, static_cast<std::size_t>(w), MemorySpace::kHost},
        {planes + luma_bytes, cw, ch, static_cast<std::size_t>(cw), MemorySpace::kHost},
        {planes + luma_bytes + chroma_bytes, cw, ch, static_cast<std::size_t>(cw), MemorySpace::kHost}};
    return host.with_device_luma(f.device_luma_view());
}

FrameView FrameSession::tracker_view(SessionFrame& f) {
    if (tracker_.on_gpu() && f.device_slot >= 0) {  // the device copy, with the host planes while held
        const ImageView device = uploader_->device_view(f.device_slot, tracker_.stream());
        return f.frame ? f.frame->frame_view().with_device_luma(device) : FrameView(device);
    }
    if (!tracker_.on_gpu() && f.frame->has_host_luma()) return f.frame->frame_view();
    if (wants_host_colour(*f.frame)) return with_host_colour(*f.frame);
    if (f.frame == current_.frame) return luma(tracker_.on_gpu());
    const Frame& fr = *f.frame;
    if (fr.has_host_luma() || tracker_.on_gpu()) return fr.luma_view();
    bool ready = false;  // a held frame other than the current one: downloaded each time
    host_luma_ready_ = false;
    return host_luma_of(fr, &ready);
}

const std::vector<TrackResult>& FrameSession::track(SessionFrame& f) {
    const FrameView view = tracker_view(f);
    const auto t0 = Clock::now();
    results_ = tracker_.update(view);
    track_ms_ += ms_between(t0, Clock::now());
    return results_;
}

double FrameSession::finish(SessionFrame& f, std::vector<TrackResult>& results) {
    const auto ready = pacing_.clock ? pacing_.clock->now() : Clock::now();
    if (f.device_slot >= 0) {
        // Work queued on the tracker's stream from here on may reuse the device frame only
        // after the tracker's reads of it: the copy into this slot a ring later waits for this.
        if (tracker_.on_gpu()) uploader_->done(f.device_slot, tracker_.stream());
        // The tracker waited on its results, which came after the copy: the event is done.
        if (uploader_->copied(f.device_slot)) {
            const double copy_ms = uploader_->copy_ms(f.device_slot);
            for (TrackResult& r : results) r.times.upload_ms += copy_ms;
        }
    }
    const double latency = ms_between(f.latency_start, ready);
    for (TrackResult& r : results) {
        r.times.decode_ms = f.decode_ms;
        r.times.latency_ms = latency;
    }
    return latency;
}

void FrameSession::release(SessionFrame& f) {
    if (!f.frame) return;
    if (f.frame == current_.frame && &f != &current_) return;  // the current frame goes with advance()
    if (pipeline_) pipeline_->release(f.frame);
    f.frame = nullptr;
}

bool FrameSession::advance() {
    const Frame* f = pipeline_->acquire();
    if (!f) return false;
    release(current_);
    current_ = describe(f);
    host_luma_ready_ = false;
    return true;
}

ImageView FrameSession::luma(bool device_ok) {
    const Frame& f = frame();
    if (f.has_host_luma() || (device_ok && f.on_device())) return f.luma_view();
    if (!f.on_device()) return f.luma_view();
    return host_luma_of(f, &host_luma_ready_);
}

FrameView FrameSession::frame_view(bool device_ok) {
    const Frame& f = frame();
    if (f.has_host_luma() && !f.yuv.empty()) return f.frame_view();
    if (device_ok && wants_host_colour(f)) return with_host_colour(f);
    return luma(device_ok);
}

const std::vector<TrackResult>& FrameSession::track_current() {
    upload(current_);
    track(current_);
    finish(current_, results_);
    return results_;
}

}  // namespace corrtrack
