// A target's correlation filter: a multi-channel MOSSE (Bolme et al., CVPR 2010) over the search
// window's log grey level and four gradient-orientation channels (a HOG without cells), learnt
// online from sure frames. It is trained to answer a peak on the target and nothing elsewhere,
// so it discriminates against the background the NCC template never sees, and it fails in
// other ways (it blurs over fine texture, drifts slowly): the search blends its map with the
// NCC's, each weighted by its own peak-to-sidelobe ratio (search_cues.cpp).
// Thread rules: a filter is trained by the target's thread; respond() is const and may run on
// any thread with its own scratch.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

#include "corrtrack/image.h"

namespace corrtrack {

// Channels: log grey, then kFilterBins gradient orientations.
constexpr int kFilterBins = 4;
constexpr int kFilterChannels = 1 + kFilterBins;

// Work arrays of one thread's filter calls (aligned for FFTW; grown, never shrunk).
class FilterScratch {
public:
    FilterScratch();
    ~FilterScratch();
    FilterScratch(const FilterScratch&) = delete;
    FilterScratch& operator=(const FilterScratch&) = delete;
    struct Arrays;
    Arrays& arrays() { return *arrays_; }

private:
    std::unique_ptr<Arrays> arrays_;
};

class CorrelationFilter {
public:
    // Learns from `window` (packed rows of `size`), whose centre holds the target of size
    // `templ`: the first call (or a new size) starts afresh, later ones move `rate` of the way.
    // `inside`: the part of the window inside the frame (window_in_frame); the rest is
    // replicated border and counts as zeros. `support` > 0: the filter is zero beyond that
    // many times the box's sides around the target (constrain_to_support); 0: unconstrained.
    void train(const std::uint8_t* window, Size size, Size templ, Rect inside, double rate, double support,
               FilterScratch& s);
    bool ready() const { return ready_; }
    // Changes with every training, unique in the process: what a cached answer was made with.
    std::uint64_t version() const { return version_; }
    Size window() const { return size_; }
    // The filter's answer at each template position of `window` (its size, as trained): out
    // has o = window - templ + 1 positions, packed; the position's value is the response at
    // the template's centre there.
    void respond(const std::uint8_t* window, Rect inside, float* out, FilterScratch& s) const;

private:
    void constrain_to_support(double support, FilterScratch& s);

    Size size_, templ_;
    std::shared_ptr<const struct FilterFft> fft_;  // the transforms of the padded window
    std::size_t spectrum_ = 0;                     // complex values a channel
    std::vector<std::complex<float>> label_;       // the desired answer's spectrum
    std::vector<std::complex<float>> num_;         // channels x spectrum: label x conj(features)
    std::vector<float> den_;                       // spectrum: the features' energy
    std::vector<std::complex<float>> filter_;      // num_ / (den_ + lambda)
    bool ready_ = false;
    std::uint64_t version_ = 0;
};

// What a search request needs to blend the filter's map (search_cues.cpp): the target's filter
// (null: none) and the largest share the filter may take.
struct FilterCue {
    const CorrelationFilter* filter = nullptr;
    float cap = 0;      // the filter's weight never exceeds this
    float balance = 1;  // w = PSR_filter / (PSR_filter + balance x PSR_ncc)
    // The target's frame: a search's requests of one target and frame (its scales) share one
    // answer, the first request's (the centre scale's).
    std::uint64_t frame = 0;
};

// The pixels of a window (sampled at pixel u from ox + (u + 0.5) x scale, as the search's
// windows are) whose samples fall inside the frame. Beyond the frame a window holds replicated
// border rows and columns that stay with the frame, not with the target: a filter that learnt
// them would pull the box back toward where the border was.
Rect window_in_frame(double ox, double oy, double scale, Size window, Size frame);

// The filter's weight from the two maps' peak-to-sidelobe ratios.
float filter_weight(const FilterCue& cue, float psr_filter, float psr_ncc);

}  // namespace corrtrack
