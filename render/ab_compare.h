// A/B kernel comparison on live frames: two kernels run on the same problem (a target's search
// window at scale 1, template cut from its current box), timed with host clocks around each
// run, compared map to map and peak to peak.
// Thread rules: the main thread drives it; it owns two Matchers, which run on the GPU
// context's compute stream (the tracker's), one after the other.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "app/track/matcher.h"
#include "app/track/tracker.h"
#include "corrtrack/peak.h"

namespace corrtrack {

class AbCompare {
public:
    static constexpr int kWindow = 60;  // frames in the timing medians

    // `gpu` must outlive the comparison.
    explicit AbCompare(const GpuContext& gpu) : matcher_{Matcher(gpu), Matcher(gpu)} {}

    // False + *error when a kernel is unknown or not available here. Clears the timings.
    bool set_kernels(const std::string& a, const std::string& b, std::string* error);

    // The problem: search = `search` rounded to whole pixels and clipped to the frame;
    // template = `box` rounded and clipped, centre-cropped to at most 128x128. False + *error
    // when the shapes do not fit or a kernel refuses them (nothing is compared then).
    bool run(ImageView frame, const BoxF& search, const BoxF& box, std::string* error);

    MapView map(int which) const;  // 0: A, 1: B (host memory, valid until the next run)
    Rect roi() const { return roi_; }
    Size templ_size() const { return templ_.size(); }
    double median_ms(int which) const;
    double median_ratio() const;  // median over recent frames of time A / time B
    int samples() const { return static_cast<int>(ratio_.size()); }
    float max_abs_diff() const { return max_diff_; }
    bool peaks_agree() const { return peak_[0].x == peak_[1].x && peak_[0].y == peak_[1].y; }
    const Peak& peak(int which) const { return peak_[which]; }

private:
    Matcher matcher_[2];
    std::vector<float> maps_[2];
    Size map_size_;
    Rect roi_;
    struct Templ {
        int width = 0, height = 0;
        std::vector<std::uint8_t> pixels;
        Size size() const { return {width, height}; }
    } templ_;
    std::deque<double> ms_[2], ratio_;
    float max_diff_ = 0;
    Peak peak_[2];
};

}  // namespace corrtrack
