// The --video sink; see video_sink.h.
#include "app/cli/video_sink.h"

#include "app/cli/track_stream.h"
#include "app/io/annotate.h"
#include "app/io/async_video.h"
#include "app/io/output_file.h"
#include "app/io/sequence_pattern.h"

namespace corrtrack {
namespace {

// Frames the video queue holds: enough to ride out an encoder's uneven frame times (x264's
// lookahead, an I-frame) without the tracker waiting, few enough to bound the memory
// (4 x 6 MB at 1080p).
constexpr int kVideoQueueDepth = 4;

class VideoSink : public OutputSink {
public:
    bool open(const std::vector<std::string>& files, const SinkSettings& s, std::string* why) override {
        settings_ = s;
        const std::string& path = files.at(0);
        if (is_sequence_pattern(path)) {
            path_ = path;  // numbered images: written in place, one file per frame
            return true;
        }
        if (!file_.open(path, OutputFile::Mode::kPath, why)) return false;
        path_ = file_.write_path();
        return true;
    }

    // The frame and its boxes to the writer's queue; the encoder opens with the first frame.
    bool picture(const SinkPicture& p, std::string* why) override {
        const LoopFrame& lf = p.frame;
        const Frame* f = lf.frame;
        if (!video_ && !start(*f, p.fps, why)) return false;
        // The source gives every frame the first frame's size; anything else is a bug to
        // report, never a write past the buffer.
        if (f->yuv.size() != yuv420_bytes(f->width, f->height)) {
            *why = "frame " + std::to_string(lf.index) + " has no YUV picture for the video";
            return false;
        }
        // Only copies here: the writer thread draws and encodes (waiting only when the queue
        // is full).
        VideoSlot* slot = video_->acquire();
        if (!slot) {
            *why = video_->error();
            return false;
        }
        slot->yuv.assign(f->yuv.begin(), f->yuv.end());
        slot->yuv_format = f->yuv_format;
        slot->width = f->width;
        slot->height = f->height;
        shown_.resize(p.results.size());
        for (std::size_t i = 0; i < p.results.size(); ++i) {
            AnnotatedTarget& t = shown_[i];
            t.box = p.results[i].box;
            t.color = p.results[i].lost ? Rgb{255, 60, 60} : Rgb{60, 255, 90};
            t.searched = settings_.heatmap && !lf.first;
            if (t.searched) {
                t.window = p.tracker.last_map_region(p.results[i].id);
                t.map = i == 0 ? p.tracker.last_map(p.results[0].id) : MapView{};
            }
        }
        annotate_frame(&slot->overlay, f->width, shown_);
        video_->submit(slot);
        return true;
    }

    // Encodes the frames still queued and closes the encoder (the file is committed by finish()).
    void drain() override {
        if (!video_) return;
        ok_ = video_->close(&error_);
        stats_ = video_->stats();
        video_.reset();
    }
    void describe(nlohmann::json* tail) const override {
        if (started())
            (*tail)["video"] = {{"encoder", encoder_},
                                {"frames", stats_.frames},
                                {"waits", stats_.waits},
                                {"wait_ms", stats_.wait_ms},
                                {"queue", stats_.depth}};
    }
    bool finish(const nlohmann::json&, std::string* why) override {
        if (!started()) {
            file_.discard();  // no frame reached the encoder: nothing to keep
            return true;
        }
        drain();
        *why = error_;
        return ok_ && (!file_.is_open() || file_.commit(why));
    }
    void discard() override {
        video_.reset();
        file_.discard();
    }
    bool started() const override { return !encoder_.empty(); }
    const std::string& error() const override { return error_; }
    void report(StreamResult* r) const override {
        r->encoder = encoder_;
        r->encoder_note = note_;
        r->video_stats = stats_;
        r->video_ok = ok_;
    }

private:
    bool start(const Frame& f, double fps, std::string* why) {
        VideoWriterOptions vo;
        vo.fps = fps > 0 && fps <= 1000 ? fps : 25.0;
        vo.quality = settings_.video_quality;
        vo.hardware = true;
        vo.yuv = f.yuv_format;
        auto writer = VideoWriter::open(path_, f.size(), vo, why);
        if (!writer) return false;
        encoder_ = writer->encoder();
        note_ = writer->encoder_note();
        video_ = std::make_unique<AsyncVideoWriter>(std::move(writer), kVideoQueueDepth);
        return true;
    }

    SinkSettings settings_;
    OutputFile file_;   // the temporary the encoder writes (not for image patterns)
    std::string path_;  // what the encoder opens
    std::unique_ptr<AsyncVideoWriter> video_;
    std::string encoder_, note_;
    VideoQueueStats stats_;  // final after drain()
    bool ok_ = true;
    std::string error_;
    std::vector<AnnotatedTarget> shown_;  // what the video shows of a frame (capacity kept)
};

}  // namespace

std::unique_ptr<OutputSink> make_video_sink() { return std::make_unique<VideoSink>(); }

}  // namespace corrtrack
