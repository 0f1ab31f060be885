// Synthetic test video with exactly known motion: a textured patch moving over a different
// static texture, plus Gaussian noise; written through VideoWriter with its ground truth.
// Thread rules: plain functions; a SyntheticScene is immutable after construction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "app/track/types.h"

namespace corrtrack {

// Top-left corner and size in continuous pixel coordinates: pixel i covers [i, i+1).
struct TruthBox {
    double x = 0, y = 0, w = 0, h = 0;
    double cx() const { return x + w / 2; }
    double cy() const { return y + h / 2; }
};

inline BoxF to_box(const TruthBox& t) { return {t.x, t.y, t.w, t.h}; }

struct SyntheticClipSpec {
    int width = 320, height = 240;
    int object_width = 40, object_height = 32;
    int frames = 60;
    double fps = 25.0;
    double noise_sigma = 2.0;                   // grey levels, per pixel and frame
    std::uint32_t seed = 1;                     // textures and noise; same seed, same clip
    double start_x = 60.0, start_y = 70.0;      // object top-left at frame 0
    double velocity_x = 1.7, velocity_y = 0.9;  // pixels per frame
    double wobble_amplitude = 0.6;              // pixels: a sinusoid on top of the straight motion
    double wobble_period = 7.0;                 // frames (not an integer ratio, so phases keep moving)
    double scale_per_frame = 1.0;               // the object's size is multiplied by this every frame
                                                // (about its centre, texture scaled with it)
    int crf = 0;                                // encoder quality: 0 is lossless x264 / finest JPEG
    std::string codec;                          // empty: VideoWriter's default for the file name
};

// The default scene with `frames` frames.
inline SyntheticClipSpec small_spec(int frames = 24) {
    SyntheticClipSpec spec;
    spec.frames = frames;
    return spec;
}

// Renders frames of a spec. The object's texture is a continuous function of object-local
// coordinates (a sum of random plane waves), sampled 4x4 per pixel, so sub-pixel motion and
// anti-aliased edges are exact; the background is another such texture. The caller keeps the
// box inside the frame (nothing is clamped).
class SyntheticScene {
public:
    explicit SyntheticScene(const SyntheticClipSpec& spec);
    const SyntheticClipSpec& spec() const { return spec_; }
    TruthBox box(int frame) const;
    std::vector<TruthBox> boxes() const;  // one per frame
    // width x height grey levels, rows packed; noise is deterministic per (seed, frame).
    void render(int frame, std::vector<std::uint8_t>& luma, bool noise = true) const;

private:
    struct Wave {
        double fx, fy, phase, amplitude;
        double pixel_gain;  // what averaging over a pixel's 4x4 samples leaves of it
    };
    static double texture(const std::vector<Wave>& waves, double u, double v);
    static double pixel_average(const std::vector<Wave>& waves, double cu, double cv);

    SyntheticClipSpec spec_;
    std::vector<Wave> object_waves_, background_waves_;
    std::vector<double> background_;  // supersampled background, one value per pixel
};

// Writes every frame of spec to path (container and codec from the name, see VideoWriter)
// and returns the ground truth; empty with *error on failure.
std::vector<TruthBox> write_synthetic_clip(const std::string& path, const SyntheticClipSpec& spec, std::string* error);
// Same through the image2 muxer: pattern like "dir/img/%05d.png" (or .jpg), files from 1.
std::vector<TruthBox> write_synthetic_sequence(const std::string& pattern, const SyntheticClipSpec& spec,
                                               std::string* error);
// An OTB-style folder: dir/img/00001.jpg ... and dir/groundtruth_rect.txt (x,y,w,h per line,
// 1-based top-left as OTB has it). Returns the 0-based truth.
std::vector<TruthBox> write_otb_folder(const std::string& dir, const SyntheticClipSpec& spec, std::string* error);

// Mean |a - b| over a w x h region of two grey images.
double mean_abs_diff(const std::uint8_t* a, std::size_t pitch_a, const std::uint8_t* b, std::size_t pitch_b, int w,
                     int h);

// A fresh directory (mkdtemp under $TMPDIR or /tmp) removed with everything in it by the
// destructor, unless CORRTRACK_KEEP_TEMP is set in the environment.
class TempDir {
public:
    explicit TempDir(const std::string& tag = "test");
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

// A synthetic clip written into a TempDir of its own (removed with it): the file, the spec and
// the truth; truth is empty, and error says why, when the clip could not be written.
struct WrittenClip {
    WrittenClip(const std::string& tag, const SyntheticClipSpec& clip_spec, const std::string& name = "clip.mkv")
        : dir(tag), spec(clip_spec), path(dir.file(name)), truth(write_synthetic_clip(path, spec, &error)) {}
    TempDir dir;
    SyntheticClipSpec spec;
    std::string path, error;
    std::vector<TruthBox> truth;
};

}  // namespace corrtrack
