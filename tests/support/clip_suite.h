// gtest fixtures whose whole suite shares a scratch folder and the synthetic clips in it,
// written once in SetUpTestSuite (the CLI suites run the binary on them many times). Suite is
// the fixture deriving from these (each suite gets its own folder) and names its folder's tag
// in kTag.
// Thread rules: gtest's: set up and torn down around the suite, on the test thread.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/support/synthetic_clip.h"

namespace corrtrack::test {

// "x,y,w,h" as --box and --inputs take a box, to 3 decimals.
inline std::string box_text(const TruthBox& t) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.3f,%.3f,%.3f,%.3f", t.x, t.y, t.w, t.h);
    return buf;
}

template <typename Suite>
class SuiteDir : public ::testing::Test {
protected:
    static void SetUpTestSuite() { dir_ = new TempDir(Suite::kTag); }
    static void TearDownTestSuite() {
        delete dir_;
        dir_ = nullptr;
    }
    static std::string d() { return dir_->path(); }
    static inline TempDir* dir_ = nullptr;
};

// One clip for the suite: 40 frames of the default scene, clip.mp4.
template <typename Suite>
class ClipSuite : public SuiteDir<Suite> {
protected:
    using Base = SuiteDir<Suite>;
    static void SetUpTestSuite() {
        Base::SetUpTestSuite();
        std::string error;
        spec_.frames = 40;
        truth_ = write_synthetic_clip(clip(), spec_, &error);
        ASSERT_EQ(truth_.size(), 40u) << error;
    }
    static std::string clip() { return Base::dir_->file("clip.mp4"); }
    static inline SyntheticClipSpec spec_;
    static inline std::vector<TruthBox> truth_;
};

}  // namespace corrtrack::test
