// Factories of the CPU kernels, for the registry, plus cpu_fast's numerator stages, which
// tests check for exact integer results.
// Thread rules: see correlator.h; numerator functions are reentrant.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "corrtrack/correlator.h"

namespace corrtrack {

std::unique_ptr<Correlator> make_cpu_ref();
std::unique_ptr<Correlator> make_cpu_fast();
std::unique_ptr<Correlator> make_cpu_opencv();  // defined only when OpenCV was found
bool cpu_opencv_available();

// SIT for every valid position of templ over image, straight from the definition, in
// unsigned 32 bits (exact for templates up to 65536 pixels). Rows run on all cores.
void direct_numerator(ImageView image, ImageView templ, std::uint32_t* out, std::size_t out_pitch);

// SIT through a double-precision real FFT (FFTW), rounded to the exact integer. Plans are
// made once per shape and the template spectrum is cached until the template changes.
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

private:
    struct Plan;
    std::unique_ptr<Plan> plan_;
    std::vector<std::uint8_t> templ_;
    Size templ_size_;
    bool spectrum_valid_ = false;
};

// Which numerator cpu_fast uses for a shape: true when the FFT is predicted faster.
bool cpu_fast_prefers_fft(Size image, Size templ);

}  // namespace corrtrack
