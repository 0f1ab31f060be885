// Tracker options, trackers and frame sessions set up as the CLI and the GUI set them up, for the pipeline
// tests: a kernel that cannot run here, or an input that does not open, fails the test.
// Thread rules: plain functions.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "app/pipeline/frame_session.h"
#include "app/track/tracker.h"

namespace corrtrack::test {

// The default options with `kernel`.
inline TrackerOptions options_on(const std::string& kernel) {
    TrackerOptions to;
    to.kernel = kernel;
    return to;
}

// A MultiTracker on `kernel`; null with *error when that kernel cannot run here.
inline std::unique_ptr<MultiTracker> tracker_on(const std::string& kernel, std::string* error) {
    auto tracker = std::make_unique<MultiTracker>(options_on(kernel));
    if (!tracker->set_kernel(kernel, error)) return nullptr;
    return tracker;
}

inline std::unique_ptr<FrameSession> open_session(MultiTracker& tracker, const std::string& path, DecodeMode decode,
                                                  bool want_rgb, int slots) {
    SessionOptions so;
    so.source.input = path;
    so.decode = decode;
    so.want_rgb = want_rgb;
    so.slots = slots;
    std::string error;
    auto session = FrameSession::open(tracker, so, &error);
    EXPECT_TRUE(session) << error;
    return session;
}

}  // namespace corrtrack::test
