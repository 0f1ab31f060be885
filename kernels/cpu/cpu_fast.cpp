// cpu_fast: integral images for the window sums, and for the numerator either a direct
// multiply-accumulate (vectorised, rows on all cores) or a double-precision FFT, whichever
// the cost model predicts faster for the shape.
#include <fftw3.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <cstring>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>

#include "cpu/cpu_kernels.h"
#include "cpu/int8_numerator.h"
#include "cpu/integral.h"
#include "cpu/ncc_epilogue.h"
#include "corrtrack/work_pool.h"
#include "corrtrack/ncc_math.h"

namespace corrtrack {

namespace {

// Below this size the loop runs on the calling thread only (see direct_numerator).
constexpr double kParallelMacs = 4e6;

// The AVX2 clone is picked at load time where the CPU has it; the default keeps the binary
// portable to any x86-64 (CI machines, the GPU host). Not under ThreadSanitizer: it
// instruments the clones' ifunc resolver, which the loader runs before TSan is set up (the
// binary dies at start).
#if defined(__SANITIZE_THREAD__)
#define CORRTRACK_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CORRTRACK_TSAN 1
#endif
#endif
#ifndef CORRTRACK_TSAN
__attribute__((target_clones("avx2", "default")))
#endif
void accumulate_row(std::uint32_t* acc, const std::uint8_t* pixels, std::uint16_t t, int n) {
    // t * pixel <= 255 * 255 fits 16 bits, which lets the compiler use 16-bit multiplies.
    for (int x = 0; x < n; ++x) acc[x] += static_cast<std::uint16_t>(t * pixels[x]);
}

// FFTW's planner is not thread-safe; execution of an existing plan is.
std::mutex& fftw_planner_mutex() {
    static std::mutex m;
    return m;
}

void init_fftw_threads() {
    static std::once_flag once;
    std::call_once(once, [] { fftw_init_threads(); });
}

int next_fast_length(int n) {
    for (int m = n;; ++m) {
        int r = m;
        for (int f : {2, 3, 5, 7})
            while (r % f == 0) r /= f;
        if (r == 1) return m;
    }
}

}  // namespace

void direct_numerator(ImageView image, ImageView templ, std::uint32_t* out, std::size_t out_pitch) {
    const int ow = image.width - templ.width + 1;
    const int oh = image.height - templ.height + 1;
    // Tracking-window searches are tiny: waking the thread team would cost more than it saves.
    const bool parallel = static_cast<double>(ow) * oh * templ.width * templ.height > kParallelMacs;
#pragma omp parallel for schedule(dynamic, 4) if (parallel)
    for (int y = 0; y < oh; ++y) {
        std::uint32_t* acc = out + static_cast<std::size_t>(y) * out_pitch;
        std::fill(acc, acc + ow, 0u);
        for (int j = 0; j < templ.height; ++j) {
            const std::uint8_t* irow = image.row(y + j);
            const std::uint8_t* trow = templ.row(j);
            for (int i = 0; i < templ.width; ++i)
                if (trow[i] != 0) accumulate_row(acc, irow + i, trow[i], ow);
        }
    }
}

// FFTW plans for one padded shape (forward r2c, inverse c2r), shared by every numerator of
// that shape: executing a plan on other arrays of the same alignment is thread-safe.
struct FftNumerator::PlanPair {
    Size padded;
    fftw_plan forward = nullptr, inverse = nullptr;
    ~PlanPair() {
        std::lock_guard<std::mutex> lock(fftw_planner_mutex());
        if (forward) fftw_destroy_plan(forward);
        if (inverse) fftw_destroy_plan(inverse);
    }
};

// Work arrays, grown to the largest padded shape seen, never shrunk (a window that changes
// size never frees and allocates again). The transform scratch is one set per thread, shared
// by every numerator the thread runs; each numerator keeps only its template's spectrum.
struct FftNumerator::Buffers {
    std::size_t real_capacity = 0, complex_capacity = 0;
    double* real = nullptr;
    fftw_complex* spectrum = nullptr;
    void ensure(std::size_t nreal, std::size_t ncomplex) {
        if (nreal > real_capacity) {
            fftw_free(real);
            real = fftw_alloc_real(nreal);
            real_capacity = real ? nreal : 0;
        }
        if (ncomplex > complex_capacity) {
            fftw_free(spectrum);
            spectrum = fftw_alloc_complex(ncomplex);
            complex_capacity = spectrum ? ncomplex : 0;
        }
        if (!real || !spectrum) throw std::bad_alloc();
    }
    ~Buffers() {
        fftw_free(real);
        fftw_free(spectrum);
    }
};

namespace {

// The process-wide plan cache: kFftPlanCacheSize shapes, least recently used evicted. FFTW's
// planner remembers every problem it has planned (its wisdom), even with FFTW_ESTIMATE, so a
// long run over drifting window sizes would grow it without end: it is forgotten every
// kFftWisdomResetPlans new plans (existing plans stay valid).
class FftPlanCache {
public:
    using PlanPair = FftNumerator::PlanPair;
    std::shared_ptr<const PlanPair> get(Size padded, double* real, fftw_complex* spectrum) {
        std::lock_guard<std::mutex> lock(mutex_);  // guards entries_, clock_ and created_
        ++clock_;
        for (Entry& e : entries_)
            if (e.plan->padded == padded) {
                e.last_use = clock_;
                return e.plan;
            }
        auto plan = std::make_shared<PlanPair>();
        plan->padded = padded;
        {
            std::lock_guard<std::mutex> planner(fftw_planner_mutex());
            if (created_ > 0 && created_ % kFftWisdomResetPlans == 0) fftw_forget_wisdom();
            const std::size_t nreal = static_cast<std::size_t>(padded.width) * padded.height;
            // Threads pay off only on large transforms; small ones run faster on one core.
            fftw_plan_with_nthreads(nreal >= (1u << 18) ? omp_get_max_threads() : 1);
            // FFTW_ESTIMATE leaves the arrays alone; later runs pass their own (same alignment).
            plan->forward = fftw_plan_dft_r2c_2d(padded.height, padded.width, real, spectrum, FFTW_ESTIMATE);
            plan->inverse = fftw_plan_dft_c2r_2d(padded.height, padded.width, spectrum, real, FFTW_ESTIMATE);
            ++created_;
        }
        if (!plan->forward || !plan->inverse) throw std::runtime_error("FFTW could not plan the transform");
        if (entries_.size() >= kFftPlanCacheSize) {
            auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                           [](const Entry& a, const Entry& b) { return a.last_use < b.last_use; });
            entries_.erase(oldest);  // numerators still using it keep it alive
        }
        entries_.push_back({plan, clock_});
        return plan;
    }
    std::size_t size() {
        std::lock_guard<std::mutex> lock(mutex_);  // guards entries_
        return entries_.size();
    }
    std::size_t created() {
        std::lock_guard<std::mutex> lock(mutex_);  // guards created_
        return created_;
    }

private:
    struct Entry {
        std::shared_ptr<const PlanPair> plan;
        std::uint64_t last_use = 0;
    };
    std::mutex mutex_;
    std::vector<Entry> entries_;
    std::uint64_t clock_ = 0;
    std::size_t created_ = 0;
};

FftPlanCache& plan_cache() {
    static FftPlanCache cache;
    return cache;
}

}  // namespace

FftNumerator::FftNumerator() : templ_spectrum_(std::make_unique<Buffers>()) {}
FftNumerator::~FftNumerator() = default;

std::size_t FftNumerator::cached_plans() { return plan_cache().size(); }
std::size_t FftNumerator::plans_created() { return plan_cache().created(); }

Size FftNumerator::padded_size(Size image) { return {next_fast_length(image.width), next_fast_length(image.height)}; }

void FftNumerator::set_template(ImageView templ) {
    templ_size_ = templ.size();
    templ_.resize(static_cast<std::size_t>(templ.width) * templ.height);
    for (int y = 0; y < templ.height; ++y)
        std::memcpy(&templ_[static_cast<std::size_t>(y) * templ.width], templ.row(y), templ.width);
    spectrum_valid_ = false;
}

void FftNumerator::run(ImageView image, std::uint32_t* out, std::size_t out_pitch) {
    thread_local Buffers scratch;  // the transforms' arrays, one set per thread
    init_fftw_threads();
    const Size padded = padded_size(image.size());
    const std::size_t nreal = static_cast<std::size_t>(padded.width) * padded.height;
    const std::size_t ncomplex = static_cast<std::size_t>(padded.width / 2 + 1) * padded.height;
    scratch.ensure(nreal, ncomplex);
    if (!plan_ || plan_->padded != padded) {
        plan_ = plan_cache().get(padded, scratch.real, scratch.spectrum);
        templ_spectrum_->ensure(1, ncomplex);
        spectrum_valid_ = false;
    }
    struct {
        Size padded;
        int spectrum_width;
        double* real;
        fftw_complex* image_spectrum;
        fftw_complex* templ_spectrum;
        fftw_plan forward, inverse;
    } p{plan_->padded,    plan_->padded.width / 2 + 1, scratch.real,
        scratch.spectrum, templ_spectrum_->spectrum,   plan_->forward,
        plan_->inverse};
    const int pw = p.padded.width, ph = p.padded.height;

    // The element-wise passes run on the work pool for the transforms FFTW threads too.
    const bool parallel = static_cast<std::size_t>(pw) * ph >= (1u << 18);
    auto rows = [&](int n, const std::function<void(int)>& fn) {
        if (parallel) {
            parallel_for(n, fn);
        } else {
            for (int i = 0; i < n; ++i) fn(i);
        }
    };
    auto load_padded = [&](const std::uint8_t* src, std::size_t pitch, int w, int h) {
        rows(ph, [&](int y) {
            double* dst = p.real + static_cast<std::size_t>(y) * pw;
            int x = 0;
            if (y < h)
                for (; x < w; ++x) dst[x] = src[y * pitch + x];
            std::fill(dst + x, dst + pw, 0.0);
        });
    };
    if (!spectrum_valid_) {
        load_padded(templ_.data(), templ_size_.width, templ_size_.width, templ_size_.height);
        fftw_execute_dft_r2c(p.forward, p.real, p.templ_spectrum);
        spectrum_valid_ = true;
    }
    load_padded(image.data, image.pitch, image.width, image.height);
    fftw_execute_dft_r2c(p.forward, p.real, p.image_spectrum);
    // Correlation = inverse transform of F(image) * conj(F(template)).
    auto* fi = reinterpret_cast<std::complex<double>*>(p.image_spectrum);
    const auto* ft = reinterpret_cast<const std::complex<double>*>(p.templ_spectrum);
    rows(ph, [&](int y) {
        const std::size_t begin = static_cast<std::size_t>(y) * p.spectrum_width;
        for (std::size_t i = begin; i < begin + p.spectrum_width; ++i) fi[i] *= std::conj(ft[i]);
    });
    fftw_execute_dft_c2r(p.inverse, p.image_spectrum, p.real);

    // Valid positions never wrap around (padded >= image), and the rounding error of a double
    // FFT of these sizes stays far below 0.5, so rounding recovers the exact integer.
    const double scale = 1.0 / (static_cast<double>(pw) * ph);
    const int ow = image.width - templ_size_.width + 1;
    const int oh = image.height - templ_size_.height + 1;
    rows(oh, [&](int y) {
        for (int x = 0; x < ow; ++x)
            out[static_cast<std::size_t>(y) * out_pitch + x] =
                static_cast<std::uint32_t>(std::llround(p.real[static_cast<std::size_t>(y) * pw + x] * scale));
    });
}

bool cpu_fast_prefers_fft(Size image, Size templ) { return cpu_fast_prefers_fft(image, templ, CpuIsa::kScalar); }

bool cpu_fast_prefers_fft(Size image, Size templ, CpuIsa isa) {
    // Cost model fitted to timings on a 2-core x86-64 VM (notes/PERF.md, 2026-11-29): the direct
    // numerator costs ~0.06 ns per multiply-accumulate (AVX2, rows split over the cores), the
    // FFT path ~0.75 ns x log2(points) per padded point (two real transforms + product). The
    // int8 kernels (docs/cpu_kernels.md, 2026-12-04, AMD EPYC Zen 4) cost ~1/4 of that per
    // multiply-accumulate (AVX2 vpmaddwd) and ~1/20 (AVX-512 VNNI vpdpbusd): at 1080p VNNI
    // wins up to 64x64 templates, the FFT from 128x128.
    const double macs = static_cast<double>(image.width - templ.width + 1) * (image.height - templ.height + 1) *
                        templ.width * templ.height;
    const double mac_cost = isa == CpuIsa::kVnni ? 1.0 / 20 : isa == CpuIsa::kAvx2 ? 1.0 / 4 : 1.0;
    const Size padded = FftNumerator::padded_size(image);
    const double n = static_cast<double>(padded.width) * padded.height;
    return 12.5 * n * std::log2(std::max(n, 2.0)) < macs * mac_cost;
}

namespace {

class CpuFast final : public CpuCorrelator {
public:
    // isa: the numerator it always uses (cpu_avx2, cpu_vnni); none: cpu_fast, which takes the
    // best the CPU has, or the FFT where the cost model predicts it faster.
    CpuFast(const char* name, std::optional<CpuIsa> isa) : CpuCorrelator(registry_info(name)), fixed_isa_(isa) {}
    void set_template(ImageView templ, Stream) override {
        copy_template(templ);
        fft_ready_.assign(fft_ready_.size(), false);
        int8_stale_ = true;
    }
    void run(ImageView frame, const NccProblem& p, MapView out, Stream) override {
        const Size o = p.out_size();
        const int tw = p.templ.width, th = p.templ.height;
        // Scratch for this call only: one per thread, shared by every cpu_fast instance the
        // thread runs (a tracker's targets), grown to the largest search and kept.
        thread_local std::vector<std::uint32_t> numerator_tls;
        std::vector<std::uint32_t>& numerator_ = numerator_tls;
        if (numerator_.size() < static_cast<std::size_t>(o.width) * o.height)
            numerator_.resize(static_cast<std::size_t>(o.width) * o.height);
        const Size roi_size{p.roi.width, p.roi.height};
        const CpuIsa isa = fixed_isa_ ? *fixed_isa_ : cpu_isa_best();
        const bool use_fft = !fixed_isa_ && cpu_fast_prefers_fft(roi_size, p.templ, isa);
        if (use_fft) prepare_fft(roi_size, p);
        if (!use_fft && isa != CpuIsa::kScalar) prepare_int8(p, isa);
        for (int k = 0; k < p.templates; ++k) {
            const ImageView roi = frame.sub(p.roi_of(k));
            const ImageView t{&templ_[static_cast<std::size_t>(k) * tw * th], tw, th, static_cast<std::size_t>(tw),
                              MemorySpace::kHost};
            if (use_fft) {
                // Templates past the cached slots share the last one and redo its spectrum.
                const std::size_t slot = std::min<std::size_t>(k, fft_.size() - 1);
                if (!fft_ready_[slot] || fft_index_[slot] != k) {
                    fft_[slot]->set_template(t);
                    fft_ready_[slot] = true;
                    fft_index_[slot] = k;
                }
                fft_[slot]->run(roi, numerator_.data(), o.width);
            } else if (isa != CpuIsa::kScalar) {
                int8_[k].run(roi, numerator_.data(), o.width);
            } else {
                direct_numerator(roi, t, numerator_.data(), o.width);
            }
            // Window sums by sliding column sums, then the shared NCC formula.
            ncc_epilogue(roi, p.templ, template_stats(t), numerator_.data(), o.width,
                         {out.row(k * o.height), o.width, o.height, out.pitch, out.space});
        }
    }

private:
    // One int8 numerator per template, in the kernel's layout, refilled when the template, its
    // split or the ISA changes. The numerators are kept, so a template learnt every frame
    // reuses their storage instead of allocating.
    void prepare_int8(const NccProblem& p, CpuIsa isa) {
        if (!int8_stale_ && !int8_.empty() && int8_templ_ == p.templ &&
            int8_.size() == static_cast<std::size_t>(p.templates) && int8_.front().isa() == isa)
            return;
        if (!int8_.empty() && int8_.front().isa() != isa) int8_.clear();
        int8_.resize(static_cast<std::size_t>(p.templates), Int8Numerator(isa));
        int8_templ_ = p.templ;
        int8_stale_ = false;
        const int tw = p.templ.width, th = p.templ.height;
        for (int k = 0; k < p.templates; ++k)
            int8_[k].set_template({&templ_[static_cast<std::size_t>(k) * tw * th], tw, th, static_cast<std::size_t>(tw),
                                   MemorySpace::kHost});
    }

    // One FFT numerator per template, each caching its template's spectrum, as many as fit
    // kFftCacheBytes (at least one); a new template split (size) invalidates them all.
    void prepare_fft(Size roi, const NccProblem& p) {
        if (p.templ != fft_templ_) {
            fft_ready_.assign(fft_ready_.size(), false);
            fft_templ_ = p.templ;
        }
        const Size padded = FftNumerator::padded_size(roi);
        const double bytes = static_cast<double>(padded.width) * padded.height * sizeof(double) +
                             2.0 * (padded.width / 2 + 1) * padded.height * 2 * sizeof(double);
        const std::size_t slots =
            static_cast<std::size_t>(std::clamp(kFftCacheBytes / bytes, 1.0, static_cast<double>(p.templates)));
        while (fft_.size() < slots) {
            fft_.push_back(std::make_unique<FftNumerator>());
            fft_ready_.push_back(false);
            fft_index_.push_back(-1);
        }
    }

    static constexpr double kFftCacheBytes = 256.0 * 1024 * 1024;

    std::optional<CpuIsa> fixed_isa_;
    std::vector<Int8Numerator> int8_;
    bool int8_stale_ = true;  // the template changed since the numerators were filled
    Size int8_templ_;
    std::vector<std::unique_ptr<FftNumerator>> fft_;
    std::vector<bool> fft_ready_;  // fft_[i] holds template fft_index_[i]'s spectrum
    std::vector<int> fft_index_;
    Size fft_templ_;
};

}  // namespace

std::unique_ptr<Correlator> make_cpu_fast() { return std::make_unique<CpuFast>("cpu_fast", std::nullopt); }
std::unique_ptr<Correlator> make_cpu_avx2() { return std::make_unique<CpuFast>("cpu_avx2", CpuIsa::kAvx2); }
std::unique_ptr<Correlator> make_cpu_vnni() { return std::make_unique<CpuFast>("cpu_vnni", CpuIsa::kVnni); }
bool cpu_avx2_available() { return cpu_isa_best() >= CpuIsa::kAvx2; }
bool cpu_vnni_available() { return cpu_isa_best() >= CpuIsa::kVnni; }

}  // namespace corrtrack
