#include "app/bench/cases.h"

#include <algorithm>

namespace corrtrack::bench {

const char* mode_name(Mode m) {
    switch (m) {
    case Mode::kFull: return "full";
    case Mode::kWindow: return "window";
    case Mode::kRoi: return "roi";
    }
    return "?";
}

std::string size_text(Size s) { return std::to_string(s.width) + "x" + std::to_string(s.height); }

NccProblem KernelCase::problem() const {
    switch (mode) {
    case Mode::kFull: return NccProblem::full_frame(frame, templ);
    case Mode::kWindow: {
        const int w = std::min(kWindowFactor * templ.width, frame.width);
        const int h = std::min(kWindowFactor * templ.height, frame.height);
        if (batch <= 1) return {frame, templ, Rect{(frame.width - w) / 2, (frame.height - h) / 2, w, h}, 1};
        return {{w, h * batch}, templ, Rect{0, 0, w, h}, batch, h};
    }
    case Mode::kRoi: return {frame, templ, roi, batch, step < 0 ? roi.height : step};
    }
    return {};
}

KernelCase KernelCase::batched(int n) const {
    KernelCase c = *this;
    c.batch = n;
    return c;
}

long long KernelCase::positions() const {
    const Size o = problem().out_size();
    return o.width > 0 && o.height > 0 ? o.area() : 0;
}

double KernelCase::macs() const { return static_cast<double>(positions()) * static_cast<double>(templ.area()); }

std::string KernelCase::key() const { return size_text(frame) + "|" + size_text(templ) + "|" + mode_name(mode); }

std::vector<Rect> batch_windows(Size frame, Size window, int n) {
    std::vector<Rect> w;
    for (int i = 0; i < n; ++i) {
        const int x =
            static_cast<int>(static_cast<long long>(frame.width - window.width) * ((37 * i + 50) % 101) / 100);
        const int y =
            static_cast<int>(static_cast<long long>(frame.height - window.height) * ((61 * i + 50) % 101) / 100);
        w.push_back({x, y, window.width, window.height});
    }
    return w;
}

namespace {

// Checked cases: asymmetric templates from 1x1 to 128x128 plus the largest supported
// (256x256) in small frames, widths that are not a multiple of 4, rois at the frame edges,
// flat windows and a flat template, odd pitches and unaligned bases.
void add_single_checks(std::vector<KernelCase>& c) {
    const Size templates[] = {{1, 1},   {2, 3},   {3, 2},     {5, 7},     {7, 5},    {8, 8},   {13, 9},
                              {16, 16}, {17, 31}, {31, 17},   {32, 32},   {33, 5},   {48, 24}, {63, 65},
                              {64, 64}, {97, 50}, {100, 127}, {128, 128}, {256, 256}};
    int i = 0;
    for (Size t : templates) {
        KernelCase k;
        k.frame = {t.width + 37 + (i * 13) % 61, t.height + 29 + (i * 7) % 43};
        k.templ = t;
        // Alternate: full frame; roi touching the right/bottom edges; roi at the top-left;
        // an interior roi with an odd (unaligned) x.
        switch (i % 4) {
        case 0: k.mode = Mode::kFull; break;
        case 1:
            k.roi = {k.frame.width - t.width - 20, k.frame.height - t.height - 9, t.width + 20, t.height + 9};
            break;
        case 2: k.roi = {0, 0, t.width + 11, t.height + 14}; break;
        default: k.roi = {3, 5, k.frame.width - 10, k.frame.height - 8}; break;
        }
        if (i % 4 != 0) k.mode = Mode::kRoi;
        k.flat_patch = i % 3 == 1;
        k.layout = static_cast<Layout>(i % 3);
        c.push_back(k);
        ++i;
    }
    KernelCase flat_templ{{90, 70}, {12, 10}, Mode::kFull};
    flat_templ.flat_template = 0;
    flat_templ.layout = Layout::kOddPitch;
    c.push_back(flat_templ);
    KernelCase unaligned{{333, 171}, {45, 27}, Mode::kRoi, {1, 1, 331, 169}};
    unaligned.flat_patch = true;
    unaligned.layout = Layout::kUnalignedBase;
    c.push_back(unaligned);
}

// Checked batches: 2 to 4 templates stacked, one roi for all or an atlas of rois.
void add_batch_checks(std::vector<KernelCase>& c) {
    const auto roi_batch = [&](Size frame, Size templ, Rect roi, int n, int step, int flat_template = -1,
                               bool flat_patch = false, Layout layout = Layout::kAligned) {
        KernelCase k{frame, templ, Mode::kRoi, roi, n, step};
        k.flat_template = flat_template;
        k.flat_patch = flat_patch;
        k.layout = layout;
        c.push_back(k);
    };
    // Every template against the same offset roi (JPDC one-to-many), width 13.
    roi_batch({120, 90}, {13, 9}, {5, 7, 60, 40}, 2, 0);
    // Atlas: three patches a roi height apart, odd pitch, width 7.
    roi_batch({101, 150}, {7, 5}, {3, 2, 40, 30}, 3, -1, -1, false, Layout::kOddPitch);
    // Atlas of four at an unaligned base, width 33 (not a multiple of 4), a flat patch.
    roi_batch({200, 200}, {33, 17}, {11, 9, 70, 45}, 4, -1, -1, true, Layout::kUnalignedBase);
    // Same roi for four, one of them flat, plus a flat patch.
    roi_batch({150, 100}, {16, 16}, {9, 3, 100, 90}, 4, 0, 2, true);
    // The tracker's atlas exactly: the frame is the atlas, roi at its origin, width 27.
    roi_batch({27, 63}, {5, 7}, {0, 0, 27, 21}, 3, -1, 1);
    // Any step: overlapping rois 7 rows apart, odd pitch.
    roi_batch({80, 70}, {9, 11}, {4, 6, 50, 40}, 2, 7, -1, false, Layout::kOddPitch);
    // A larger template over an atlas of two, width 61.
    roi_batch({300, 230}, {61, 48}, {2, 3, 150, 110}, 2, -1);
}

// The bench's own problem shapes on small frames: the centred window (clipped by a frame
// narrower than 3 template sides) and its atlas of windows (--batch).
void add_window_checks(std::vector<KernelCase>& c) {
    c.push_back({{160, 120}, {13, 7}, Mode::kWindow});
    c.push_back({{100, 60}, {40, 24}, Mode::kWindow});  // 120x72 window clipped to 100x60
    KernelCase atlas{{160, 120}, {8, 8}, Mode::kWindow};
    c.push_back(atlas.batched(3));
    KernelCase odd{{200, 150}, {13, 9}, Mode::kWindow};
    c.push_back(odd.batched(4));
}

// The bench's default grid: sizes x templates x modes, timed. Those cheap enough for cpu_ref
// (at most 2e7 multiply-adds, a fraction of a second) are checked as well: the window cases of
// templates up to 48x24 at every size and the 640x480 full frame with 8x8.
void add_bench_grid(std::vector<KernelCase>& c) {
    const Size sizes[] = {{640, 480}, {1920, 1080}, {3840, 2160}};
    const Size templates[] = {{8, 8}, {16, 16}, {32, 32}, {64, 64}, {128, 128}, {48, 24}};
    for (Size s : sizes)
        for (Size t : templates)
            for (Mode m : {Mode::kFull, Mode::kWindow}) {
                KernelCase k{s, t, m};
                k.use = kTime | (k.macs() <= 2e7 ? kCheck : 0u);
                c.push_back(k);
            }
}

std::vector<KernelCase> make_cases() {
    std::vector<KernelCase> c;
    add_single_checks(c);
    add_batch_checks(c);
    add_window_checks(c);
    add_bench_grid(c);
    return c;
}

template <typename T, typename Text>
std::string unique_list(const std::vector<KernelCase>& cases, T KernelCase::*field, Text text) {
    std::vector<T> seen;
    std::string out;
    for (const KernelCase& k : cases) {
        if (!(k.use & kTime) || std::find(seen.begin(), seen.end(), k.*field) != seen.end()) continue;
        seen.push_back(k.*field);
        out += (out.empty() ? "" : ",") + std::string(text(k.*field));
    }
    return out;
}

}  // namespace

const std::vector<KernelCase>& kernel_cases() {
    static const std::vector<KernelCase> cases = make_cases();
    return cases;
}

std::vector<KernelCase> cases_for(unsigned use, bool batched) {
    std::vector<KernelCase> out;
    for (const KernelCase& k : kernel_cases())
        if ((k.use & use) && (k.batch > 1) == batched) out.push_back(k);
    return out;
}

std::string default_sizes_text() { return unique_list(kernel_cases(), &KernelCase::frame, size_text); }

std::string default_templates_text() {
    // Square templates as "N", as --templates takes them.
    return unique_list(kernel_cases(), &KernelCase::templ,
                       [](Size s) { return s.width == s.height ? std::to_string(s.width) : size_text(s); });
}

std::string default_modes_text() { return unique_list(kernel_cases(), &KernelCase::mode, mode_name); }

}  // namespace corrtrack::bench
