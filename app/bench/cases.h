// The one list of kernel cases that both `corrtrack bench` and the kernel tests draw from (as
// ggml's test-backend-ops drives its test and perf modes from one test_case): frame size x
// template size x search mode x batch, each marked for checking (tests/test_kernel_sweep.cpp
// runs it against cpu_ref), for timing (the bench's default plan), or both. What a case means
// as an NccProblem (the window mode's centred 3x region, the batch's atlas of windows) is
// defined here once, so a timed case and a checked case of the same shape are the same problem.
// It lives in app/bench/ rather than the kernel library: the library's public API is the
// correlator contract alone, and these are the shapes we choose to exercise it with (the tests
// link corrtrack_app, which holds this).
// Thread rules: plain values and pure functions.
#pragma once

#include <string>
#include <vector>

#include "corrtrack/correlator.h"

namespace corrtrack::bench {

// kFull: every position of the frame. kWindow: the tracking window, a region kWindowFactor
// template sides wide and high (clipped to the frame), centred. kRoi: the case's own roi.
enum class Mode { kFull, kWindow, kRoi };
// The tracking window is this many template sides wide and high.
constexpr int kWindowFactor = 3;

const char* mode_name(Mode m);
std::string size_text(Size s);  // "WxH"

// How a checked case's frame sits in memory: an aligned pitch, an odd pitch, or a view whose
// first byte is not aligned (a crop of a larger buffer). Timing always uses aligned frames.
enum class Layout { kAligned, kOddPitch, kUnalignedBase };

// What a case is for (a bit set).
enum Use : unsigned { kCheck = 1, kTime = 2 };

struct KernelCase {
    KernelCase() = default;
    KernelCase(Size frame_size, Size templ_size, Mode m = Mode::kFull, Rect r = {}, int n = 1, int roi_step = 0)
        : frame(frame_size), templ(templ_size), mode(m), roi(r), batch(n), step(roi_step) {}

    Size frame, templ;
    Mode mode = Mode::kFull;
    Rect roi;  // kRoi only
    // Templates in one run (stacked vertically). In window mode a batch of N is an atlas of N
    // search windows stacked vertically (frame = window width x N window heights, roi the first
    // window, step the window height), the tracker's multi-target launch. In roi mode template
    // k searches roi shifted down by k * step rows (step < 0: the roi's height).
    int batch = 1;
    int step = 0;
    unsigned use = kCheck;
    // Check-only details (timing ignores them): a flat rectangle larger than the template in
    // the (last) roi, one template painted flat (its index; -1: none), the frame's layout.
    bool flat_patch = false;
    int flat_template = -1;
    Layout layout = Layout::kAligned;

    // The problem a run of this case solves. A window batch's frame is the atlas (its size is
    // problem().frame); its windows are cut from a `frame`-sized image (batch_windows()).
    NccProblem problem() const;
    // The same case with `n` targets batched (window mode).
    KernelCase batched(int n) const;
    long long positions() const;  // output positions of one template (0 when it does not fit)
    double macs() const;          // positions x template pixels
    std::string key() const;      // "frame|templ|mode": the bench's row key (batch excluded)
};

// Window origins of a window batch's targets in the `frame`-sized image, spread over it by a
// fixed rule (the same for every kernel), so the atlas holds n different windows.
std::vector<Rect> batch_windows(Size frame, Size window, int n);

// Every case, in a fixed order (tests seed their data by the position in their subset).
const std::vector<KernelCase>& kernel_cases();
// The cases with `use` set, in list order; batched: the ones with batch > 1, else batch == 1.
std::vector<KernelCase> cases_for(unsigned use, bool batched);

// The bench's default plan, read off the kTime cases (a full grid of sizes x templates x
// modes): each list in first-appearance order, as the --sizes/--templates/--modes defaults.
std::string default_sizes_text();
std::string default_templates_text();
std::string default_modes_text();

}  // namespace corrtrack::bench
