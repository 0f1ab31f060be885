// Factories of the CPU kernels, for the registry, plus cpu_fast's numerator stages, which
// tests check for exact integer results.
// Thread rules: see correlator.h; numerator functions are reentrant.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "corrtrack/correlator.h"

namespace corrtrack {

std::unique_ptr<Correlator> make_cpu_ref();
std::unique_ptr<Correlator> make_cpu_fast();
// cpu_fast with its numerator fixed to one int8 kernel (cpu/int8_numerator.h); available
// where the CPU has the ISA and CORRTRACK_CPU_ISA does not cap it below.
std::unique_ptr<Correlator> make_cpu_avx2();
std::unique_ptr<Correlator> make_cpu_vnni();
bool cpu_avx2_available();
bool cpu_vnni_available();
std::unique_ptr<Correlator> make_cpu_opencv();  // defined only when OpenCV was found
bool cpu_opencv_available();

// What every CPU kernel shares: its description, the problem check (any valid problem runs on
// the CPU) and a packed host copy of the template.
class CpuCorrelator : public Correlator {
public:
    explicit CpuCorrelator(KernelInfo info) : info_(std::move(info)) {}
    const KernelInfo& info() const override { return info_; }
    bool supports(const NccProblem& p, std::string* why) const override;

protected:
    // Copies templ's rows into templ_ (packed, pitch == width).
    void copy_template(ImageView templ);
    std::vector<std::uint8_t> templ_;

private:
    KernelInfo info_;
};

// SIT for every valid position of templ over image, straight from the definition, in
// unsigned 32 bits (exact for templates up to 65536 pixels). Rows run on all cores.
void direct_numerator(ImageView image, ImageView templ, std::uint32_t* out, std::size_t out_pitch);

// SIT through a double-precision real FFT (FFTW), rounded to the exact integer. The template
// spectrum is cached until the template or the padded shape changes. Memory stays bounded over
// any run: the arrays only grow (to the largest shape seen, so a changing window size never
// frees and allocates again; the transform scratch is one set per thread, not per numerator),
// and plans come from a process-wide cache of
// kFftPlanCacheSize shapes (least recently used evicted, FFTW's accumulated wisdom forgotten
// every kFftWisdomResetPlans new plans, since FFTW keeps every planned problem otherwise).
constexpr std::size_t kFftPlanCacheSize = 16;
constexpr std::size_t kFftWisdomResetPlans = 64;
class FftNumerator {
public:
    FftNumerator();
    ~FftNumerator();
    FftNumerator(const FftNumerator&) = delete;
    FftNumerator& operator=(const FftNumerator&) = delete;
    void set_template(ImageView templ);
    void run(ImageView image, std::uint32_t* out, std::size_t out_pitch);
    // FFT side lengths chosen for an image of this size (products of 2, 3, 5 and 7).
    static Size padded_size(Size image);
    // The plan cache's state, for the tests: shapes cached now and plans created so far.
    static std::size_t cached_plans();
    static std::size_t plans_created();

    struct PlanPair;  // cached plans of one padded shape (cpu_fast.cpp)
    struct Buffers;   // this numerator's work arrays

private:
    std::unique_ptr<Buffers> templ_spectrum_;  // only its spectrum array is used
    std::shared_ptr<const PlanPair> plan_;
    std::vector<std::uint8_t> templ_;
    Size templ_size_;
    bool spectrum_valid_ = false;
};

// Which numerator cpu_fast uses for a shape: true when the FFT is predicted faster than the
// direct numerator of that ISA (two arguments: the scalar/auto-vectorised one).
enum class CpuIsa;
bool cpu_fast_prefers_fft(Size image, Size templ);
bool cpu_fast_prefers_fft(Size image, Size templ, CpuIsa isa);

}  // namespace corrtrack
