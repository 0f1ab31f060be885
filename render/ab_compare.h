// A/B kernel comparison on live frames: two kernels run on the same problem and are compared
// map to map and peak to peak. Two scopes: the tracker's (a target's search window at scale 1,
// template cut from its box, host clocks around each run, one sample a frame), and the
// kernels' own (the whole frame against a square template, several runs a comparison, timed
// as the kernel alone: CUDA events on the GPU, steady_clock on the CPU), so that the time
// ratio there is the kernels' throughput ratio.
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

// Max-pools `map` by `factor` (blocks of factor x factor, partial ones at the right and bottom
// edges) into *out, which holds ceil(w / factor) x ceil(h / factor) values afterwards (grown,
// never shrunk, so a steady size allocates nothing); the view of them is returned. Max keeps a
// peak visible where a mean would blur it away.
MapView downscale_max(const MapView& map, int factor, std::vector<float>* out);

class AbCompare {
public:
    static constexpr int kWindow = 60;  // samples in the timing medians
    // Full frame: timed runs per kernel and comparison, after one untimed warm-up run; a
    // kernel stops early once its timed runs add up to kFullFrameBudgetMs (at least one run).
    static constexpr int kFullFrameRuns = 5;
    static constexpr double kFullFrameBudgetMs = 300;
    // Full-frame maps are max-pooled to at most this many texels a side for display.
    static constexpr int kViewSide = 512;
    // cpu_ref is brute force (about 1 GMAC/s on a 2-core VM): full-frame problems above this
    // many multiply-adds are refused for it, so one comparison cannot stall the GUI for seconds.
    static constexpr double kMaxCpuRefMacs = 2.5e8;

    // `gpu` must outlive the comparison.
    explicit AbCompare(const GpuContext& gpu) : matcher_{Matcher(gpu), Matcher(gpu)} {}

    // False + *error when a kernel is unknown or not available here. Clears the timings.
    bool set_kernels(const std::string& a, const std::string& b, std::string* error);

    // Window scope: search = `search` rounded to whole pixels and clipped to the frame;
    // template = `box` rounded and clipped, centre-cropped to at most 128x128. False + *error
    // when the shapes do not fit or a kernel refuses them (nothing is compared then).
    bool run(ImageView frame, const BoxF& search, const BoxF& box, std::string* error);
    // Full-frame scope: a side x side template (clipped to the frame) centred on (cx, cy) as
    // near as the frame allows, searched over the whole frame by both kernels. False + *error
    // when a kernel refuses the problem or it is too large for cpu_ref (kMaxCpuRefMacs).
    bool run_full_frame(ImageView frame, float cx, float cy, int side, std::string* error);

    MapView map(int which) const;                     // 0: A, 1: B (host memory, valid until the next run)
    MapView view_map(int which) const;                // as shown: the map, max-pooled in full-frame scope
    int view_factor() const { return view_factor_; }  // map pixels per view texel (1: the map)
    bool full_frame() const { return full_frame_; }
    Rect roi() const { return roi_; }
    Rect templ_rect() const { return templ_rect_; }
    Size templ_size() const { return templ_.size(); }
    double median_ms(int which) const;
    double median_ratio() const;  // window: median of per-frame time A / time B; full frame:
                                  // median(A's runs) / median(B's runs)
    // Window: frames in the ratio's median; full frame: timed runs (the fewer of A's and B's).
    int samples() const;
    float max_abs_diff() const { return max_diff_; }
    bool peaks_agree() const { return peak_[0].x == peak_[1].x && peak_[0].y == peak_[1].y; }
    const Peak& peak(int which) const { return peak_[which]; }

private:
    // Cuts the template `t` (inside the frame) into templ_ and returns a view of it.
    ImageView cut_template(ImageView frame, Rect t);
    // After the maps are in maps_: the largest difference and the peaks.
    void compare_maps();

    Matcher matcher_[2];
    std::vector<float> maps_[2], views_[2];
    Size map_size_;
    Rect roi_, templ_rect_;
    bool full_frame_ = false;
    int view_factor_ = 1;
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
