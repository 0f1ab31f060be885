// FramePipeline: files deliver every frame once and in order, live sources keep the newest
// frames and count drops, and stopping never hangs. The test_pipeline binary also holds the
// track loop (test_track_loop.cpp) and the frame session (test_frame_session.cpp).
// Thread rules: each test drives the consumer side from its own thread (plus helper threads
// where a test needs a blocked consumer).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "app/pipeline/frame_ring.h"
#include "tests/support/read_source.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Frames whose every luma byte is index & 255, so a consumer can tell a frame that was
// overwritten while it held it.
class FakeSource : public FrameSource {
public:
    FakeSource(bool live, long frames, milliseconds period, long error_after = -1)
        : live_(live), frames_(frames), period_(period), error_after_(error_after) {}

    ReadStatus read(Frame& out) override {
        if (error_after_ >= 0 && next_ == error_after_) {
            error_ = "fake source failed";
            return ReadStatus::kError;
        }
        if (frames_ >= 0 && next_ >= frames_) return ReadStatus::kEnd;
        std::this_thread::sleep_for(period_);
        out.index = next_;
        out.pts = next_ * 0.01;
        out.width = 64;
        out.height = 48;
        out.luma.assign(64 * 48, static_cast<std::uint8_t>(next_ & 255));
        ++next_;
        produced_.store(next_);
        return ReadStatus::kFrame;
    }
    const std::string& error() const override { return error_; }
    bool live() const override { return live_; }
    Size size() const override { return {64, 48}; }
    double fps() const override { return 100.0; }
    long frame_count() const override { return live_ ? -1 : frames_; }
    std::string description() const override { return "fake"; }

    // Frames produced so far; readable from the consumer thread.
    static std::atomic<long> produced_;

private:
    bool live_;
    long frames_;  // -1: endless
    milliseconds period_;
    long error_after_;
    long next_ = 0;
    std::string error_;
};
std::atomic<long> FakeSource::produced_{0};

bool frame_is_intact(const Frame& f) {
    for (std::uint8_t v : f.luma)
        if (v != static_cast<std::uint8_t>(f.index & 255)) return false;
    return true;
}

// Reads that happen only when the test allows them (grant), so that the tests decide how far
// the decoder runs ahead of the consumer, instead of sleeps and the machine's load. Shared by
// the test and its GatedSource (which the decode thread destroys when the source ends).
// wait_idle() returns once the decoder is blocked for a permit (every frame read before it is
// in the ring) or the source has ended; close() ends it.
class Gate {
public:
    explicit Gate(long frames) : frames_(frames) {}
    // The next frame's index, or -1 for the end (all frames read, or closed).
    long take() {
        std::unique_lock<std::mutex> lock(mutex_);
        if (frames_ < 0 || next_ < frames_) {
            waiting_ = true;
            changed_.notify_all();
            changed_.wait(lock, [&] { return permits_ > 0 || closed_; });
            waiting_ = false;
            if (!closed_) {
                --permits_;
                return next_++;
            }
        }
        ended_ = true;
        changed_.notify_all();
        return -1;
    }
    void grant(int n) {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            permits_ += n;
            waiting_ = false;  // until the decoder comes back for more
        }
        changed_.notify_all();
    }
    void wait_idle() {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return (waiting_ && permits_ == 0) || ended_; });
    }
    void close() {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            closed_ = true;
        }
        changed_.notify_all();
    }
    long produced() {
        const std::lock_guard<std::mutex> lock(mutex_);
        return next_;
    }
    long frames() const { return frames_; }

private:
    const long frames_;  // -1: endless
    std::mutex mutex_;   // guards everything below
    std::condition_variable changed_;
    long next_ = 0;
    int permits_ = 0;
    bool waiting_ = false, ended_ = false, closed_ = false;
};

class GatedSource : public FrameSource {
public:
    GatedSource(bool live, std::shared_ptr<Gate> gate) : live_(live), gate_(std::move(gate)) {}

    ReadStatus read(Frame& out) override {
        const long index = gate_->take();
        if (index < 0) return ReadStatus::kEnd;
        out.index = index;
        out.pts = index * 0.01;
        out.width = 64;
        out.height = 48;
        out.luma.assign(64 * 48, static_cast<std::uint8_t>(index & 255));
        return ReadStatus::kFrame;
    }
    const std::string& error() const override { return error_; }
    bool live() const override { return live_; }
    Size size() const override { return {64, 48}; }
    double fps() const override { return 100.0; }
    long frame_count() const override { return live_ ? -1 : gate_->frames(); }
    std::string description() const override { return "gated"; }

private:
    const bool live_;
    const std::shared_ptr<Gate> gate_;
    std::string error_;
};

TEST(Pipeline, FileDeliversEveryFrameOnceInOrderToASlowConsumer) {
    const WrittenClip clip("pipeline", small_spec(40));
    ASSERT_EQ(clip.truth.size(), 40u) << clip.error;
    std::string error;
    auto source = open_source(clip.path, &error);
    ASSERT_TRUE(source) << error;

    SyntheticScene scene(clip.spec);
    std::vector<std::uint8_t> truth;
    FramePipeline pipeline(std::move(source), 3);
    EXPECT_FALSE(pipeline.live());
    EXPECT_EQ(pipeline.size(), (Size{320, 240}));
    EXPECT_DOUBLE_EQ(pipeline.fps(), 25.0);
    EXPECT_EQ(pipeline.frame_count(), 40);
    EXPECT_EQ(pipeline.description(), "clip.mkv: h264 320x240 @ 25 fps, 40 frames");
    long expected = 0;
    while (const Frame* f = pipeline.acquire()) {
        EXPECT_EQ(f->index, expected);
        std::this_thread::sleep_for(milliseconds(expected % 5 == 0 ? 25 : 2));
        // The slot is ours until release: the decoder must not have written into it.
        scene.render(static_cast<int>(f->index), truth);
        EXPECT_EQ(mean_abs_diff(f->luma.data(), 320, truth.data(), 320, 320, 240), 0.0) << "frame " << f->index;
        pipeline.release(f);
        ++expected;
    }
    EXPECT_EQ(expected, 40);
    EXPECT_EQ(pipeline.dropped(), 0);
    EXPECT_EQ(pipeline.error(), "");
    EXPECT_EQ(pipeline.acquire(), nullptr) << "the end stays the end";
}

TEST(Pipeline, NonLiveSourceBlocksInsteadOfDropping) {
    FakeSource::produced_ = 0;
    FramePipeline pipeline(std::make_unique<FakeSource>(false, 60, milliseconds(0)), 2);
    long expected = 0;
    while (const Frame* f = pipeline.acquire()) {
        EXPECT_EQ(f->index, expected++);
        EXPECT_TRUE(frame_is_intact(*f));
        // The decoder can be at most one frame (its own slot) ahead of us.
        EXPECT_LE(FakeSource::produced_.load(), f->index + 2);
        std::this_thread::sleep_for(milliseconds(3));
        pipeline.release(f);
    }
    EXPECT_EQ(expected, 60);
    EXPECT_EQ(pipeline.dropped(), 0);
}

TEST(Pipeline, LiveSourceKeepsTheNewestFramesAndCountsDrops) {
    const long total = 120;
    const int slots = 3, burst = 6;
    const auto gate = std::make_shared<Gate>(total);
    Gate& source = *gate;
    FramePipeline pipeline(std::make_unique<GatedSource>(true, gate), slots);
    EXPECT_TRUE(pipeline.live());
    long delivered = 0, last = -1;
    bool all_intact = true;
    // Each round the source reads `burst` frames while the consumer holds none: the ring keeps
    // the newest and drops the rest.
    source.grant(burst);
    source.wait_idle();
    while (const Frame* f = pipeline.acquire()) {
        EXPECT_GT(f->index, last) << "indices must strictly increase";
        // Fresh: at most the other ring slots hold newer frames.
        EXPECT_LE(source.produced() - 1 - f->index, slots - 1);
        last = f->index;
        all_intact &= frame_is_intact(*f);
        ++delivered;
        pipeline.release(f);
        source.grant(burst);
        source.wait_idle();
    }
    EXPECT_TRUE(all_intact);
    EXPECT_EQ(pipeline.error(), "");
    EXPECT_EQ(last, total - 1) << "the newest frame is never the one dropped";
    EXPECT_GT(pipeline.dropped(), total / 2);
    EXPECT_EQ(delivered + pipeline.dropped(), total) << "each frame delivered or dropped";
}

TEST(Pipeline, LiveSourceWithAFastConsumerDropsNothing) {
    // The consumer keeps up by construction: the source reads the next frame only once the
    // consumer has handed the last one back.
    const auto gate = std::make_shared<Gate>(50);
    Gate& source = *gate;
    FramePipeline pipeline(std::make_unique<GatedSource>(true, gate), 4);
    source.grant(1);
    long delivered = 0;
    while (const Frame* f = pipeline.acquire()) {
        EXPECT_EQ(f->index, delivered++);
        pipeline.release(f);
        source.grant(1);
    }
    EXPECT_EQ(delivered, 50);
    EXPECT_EQ(pipeline.dropped(), 0);
}

TEST(Pipeline, ErrorsReachTheConsumerAfterTheGoodFrames) {
    FramePipeline pipeline(std::make_unique<FakeSource>(false, 100, milliseconds(0), 5), 4);
    long delivered = 0;
    while (const Frame* f = pipeline.acquire()) {
        ++delivered;
        pipeline.release(f);
    }
    EXPECT_EQ(delivered, 5);
    EXPECT_EQ(pipeline.error(), "fake source failed");
}

TEST(Pipeline, MissingSourceEndsAtOnceWithAnError) {
    FramePipeline pipeline(nullptr, 4);
    EXPECT_EQ(pipeline.acquire(), nullptr);
    EXPECT_FALSE(pipeline.error().empty());
}

TEST(Pipeline, EarlyStopWhileTheDecoderWaitsForASlot) {
    const WrittenClip clip("pipeline", small_spec(30));
    ASSERT_FALSE(clip.truth.empty()) << clip.error;
    std::string error;
    auto source = open_source(clip.path, &error);
    ASSERT_TRUE(source) << error;
    auto pipeline = std::make_unique<FramePipeline>(std::move(source), 2);
    const Frame* held = pipeline->acquire();  // never released
    ASSERT_NE(held, nullptr);
    std::this_thread::sleep_for(milliseconds(200));  // the decoder fills the other slot, waits
    const auto t0 = Clock::now();
    pipeline.reset();
    // Only a hang guard (a stop that waited for the held frame would never return): a bound
    // tight enough to time the stop would fail on a loaded machine.
    EXPECT_LT(seconds_since(t0), 60.0);
}

TEST(Pipeline, EndlessSourceStopsPromptly) {
    auto pipeline = std::make_unique<FramePipeline>(std::make_unique<FakeSource>(false, -1, milliseconds(0)), 4);
    for (int i = 0; i < 10; ++i) {
        const Frame* f = pipeline->acquire();
        ASSERT_NE(f, nullptr);
        pipeline->release(f);
    }
    const auto t0 = Clock::now();
    pipeline->stop();
    EXPECT_LT(seconds_since(t0), 60.0);  // a hang guard, as above
    EXPECT_EQ(pipeline->acquire(), nullptr);
    pipeline.reset();  // a second stop from the destructor
}

TEST(Pipeline, StopWakesAConsumerWaitingForASlowSource) {
    // The source never delivers a frame: the consumer waits until stop() wakes it, then
    // closes the source so that the decode thread (blocked in read) can be joined.
    const auto gate = std::make_shared<Gate>(-1);
    Gate& source = *gate;
    FramePipeline pipeline(std::make_unique<GatedSource>(true, gate), 3);
    std::atomic<bool> got_null{false};
    std::thread consumer([&] {
        const Frame* f = pipeline.acquire();
        got_null = f == nullptr;
        source.close();
    });
    source.wait_idle();  // the decoder waits for a frame that never comes
    pipeline.stop();     // returns once the consumer woke (it closes the source)
    consumer.join();
    EXPECT_TRUE(got_null.load());
    EXPECT_EQ(pipeline.acquire(), nullptr);
}

}  // namespace
}  // namespace corrtrack
