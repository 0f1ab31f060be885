// cuda_fft: the numerator SIT through double-precision cuFFT (D2Z, spectrum product with the
// template's conjugate, Z2D), rounded to the exact integer in the finish kernel, which adds
// the integral-image denominator. Plans and buffers are made once per padded shape.
//
// Why double, and why rounding is exact. Percival (Math. Comp. 72, 2003, Thm 5.1) bounds the
// error of a cyclic convolution computed with floating-point FFTs of length N = 2^n by
//     |error| <= ||x||_2 * ||t||_2 * ((1+e)^{3n} (1+e*sqrt(5))^{3n+1} (1+b)^{3n} - 1)
//             ~= ||x||_2 * ||t||_2 * (3n + (3n+1)*sqrt(5) + 3n*b/e) * e,
// with e the unit roundoff and b the twiddle error (accurate twiddles: b ~ e). Mixed radix
// (factors 2, 3, 5, 7) has fewer stages than radix 2 for the same N, so the same form holds
// with n = ceil(log2 N). Our extremes: a roi of kMaxIntegralPixels = 16.8 Mpx of 255
// (||x||_2 <= 255 * 4100 = 1.05e6), a 256 x 256 template of 255 (||t||_2 = 65280), N < 2^25
// (n = 25):
//     double (e = 1.1e-16): 6.9e10 * (75 + 170 + 75) * 1.1e-16 = 2.4e-3  << 0.5, exact;
//     float  (e = 6.0e-8):  6.9e10 * 320 * 6.0e-8             = 1.3e6   >> 0.5, not exact
// (already at 4K, 3840 x 2160, float's bound is ~5e5). So every rounded value is the exact SIT.
#include <cufft.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "cuda/common.cuh"
#include "cuda/cuda_kernels.h"
#include "cuda/integral.cuh"

namespace corrtrack {
namespace {

constexpr int kPadWidth = 32;
constexpr int kPadRows = 8;
constexpr int kProductThreads = 256;
constexpr int kMinFftSide = 8;   // keeps degenerate 1-pixel sides away from cuFFT
constexpr std::size_t kMaxPlans = 4;  // padded shapes kept (a tracker's roi changes at edges)

// Zero-padded copy of a w x h uint8 image into a pw x ph double buffer (row pitch pw).
static __global__ void __launch_bounds__(kPadWidth * kPadRows)
pad_kernel(const std::uint8_t* __restrict__ src, std::size_t pitch, int w, int h,
           double* __restrict__ dst, int pw, int ph) {
    const int x = blockIdx.x * kPadWidth + threadIdx.x;
    const int y = blockIdx.y * kPadRows + threadIdx.y;
    if (x >= pw || y >= ph) return;
    dst[static_cast<std::size_t>(y) * pw + x] =
        x < w && y < h ? static_cast<double>(__ldg(src + static_cast<std::size_t>(y) * pitch + x)) : 0.0;
}

// spectrum *= conj(templ): the transform of the correlation sum_i I(x + i) T(i).
static __global__ void __launch_bounds__(kProductThreads)
conj_product_kernel(cufftDoubleComplex* __restrict__ spectrum,
                    const cufftDoubleComplex* __restrict__ templ, std::size_t count) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(kProductThreads) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * kProductThreads) {
        const cufftDoubleComplex a = spectrum[i];
        const cufftDoubleComplex b = templ[i];
        spectrum[i] = make_cuDoubleComplex(a.x * b.x + a.y * b.y, a.y * b.x - a.x * b.y);
    }
}

int div_up(int a, int b) { return (a + b - 1) / b; }

static void launch_pad(const std::uint8_t* src, std::size_t pitch, int w, int h, double* dst, Size padded,
                cudaStream_t stream) {
    const dim3 grid(div_up(padded.width, kPadWidth), div_up(padded.height, kPadRows));
    pad_kernel<<<grid, dim3(kPadWidth, kPadRows), 0, stream>>>(src, pitch, w, h, dst, padded.width,
                                                                padded.height);
    CORRTRACK_CUDA_LAUNCHED();
}

static void launch_conj_product(cufftDoubleComplex* spectrum, const cufftDoubleComplex* templ, std::size_t count,
                         int sm_count, cudaStream_t stream) {
    const std::size_t blocks = std::min<std::size_t>((count + kProductThreads - 1) / kProductThreads,
                                                     static_cast<std::size_t>(sm_count) * 16);
    conj_product_kernel<<<static_cast<unsigned>(blocks), kProductThreads, 0, stream>>>(spectrum, templ, count);
    CORRTRACK_CUDA_LAUNCHED();
}

// Smallest m >= n whose only prime factors are 2, 3, 5 and 7 (cuFFT's fast radices).
int fast_fft_length(int n) {
    for (int m = std::max(n, kMinFftSide);; ++m) {
        int r = m;
        for (int f : {2, 3, 5, 7})
            while (r % f == 0) r /= f;
        if (r == 1) return m;
    }
}

// One padded shape: forward and inverse plans (sharing the Correlator's work area) and the
// template spectrum at that size.
struct FftPlan {
    Size padded;
    cufftHandle forward = 0, inverse = 0;
    bool have_forward = false, have_inverse = false;
    DeviceBuffer<cufftDoubleComplex> templ_spectrum;
    std::uint64_t templ_generation = 0;  // 0: never computed
    std::uint64_t last_use = 0;
    ~FftPlan() {
        if (have_forward) cufftDestroy(forward);
        if (have_inverse) cufftDestroy(inverse);
    }
};

class CudaFft final : public Correlator {
public:
    const KernelInfo& info() const override { return info_; }
    bool supports(const NccProblem& p, std::string* why) const override { return jpdc_supports(p, why); }
    void set_template(ImageView templ, Stream stream) override {
        templ_.set(templ, templ.height, stream);
        ++templ_generation_;
    }
    void run(ImageView frame, const NccProblem& p, MapView out, Stream stream) override {
        jpdc_check_run(*this, frame, p, out, templ_);
        const cudaStream_t s = as_cuda(stream);
        const ImageView roi = frame.sub(p.roi);
        if (sm_count_ == 0) {
            int dev = 0;
            CORRTRACK_CUDA(cudaGetDevice(&dev));
            CORRTRACK_CUDA(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, dev));
        }
        integral_.build(roi, s);

        FftPlan& plan = plan_for({fast_fft_length(roi.width), fast_fft_length(roi.height)});
        const Size pad = plan.padded;
        const std::size_t reals = static_cast<std::size_t>(pad.width) * pad.height;
        const std::size_t complexes = static_cast<std::size_t>(pad.width / 2 + 1) * pad.height;
        double* real = real_.ensure(reals);
        cufftDoubleComplex* spectrum = spectrum_.ensure(complexes);
        CORRTRACK_CUFFT(cufftSetStream(plan.forward, s));
        CORRTRACK_CUFFT(cufftSetStream(plan.inverse, s));
        CORRTRACK_CUFFT(cufftSetWorkArea(plan.forward, work_.get()));
        CORRTRACK_CUFFT(cufftSetWorkArea(plan.inverse, work_.get()));

        if (plan.templ_generation != templ_generation_) {
            launch_pad(templ_.device(), static_cast<std::size_t>(p.templ.width), p.templ.width,
                       p.templ.height, real, pad, s);
            CORRTRACK_CUFFT(cufftExecD2Z(plan.forward, real, plan.templ_spectrum.get()));
            plan.templ_generation = templ_generation_;
        }
        launch_pad(roi.data, roi.pitch, roi.width, roi.height, real, pad, s);
        CORRTRACK_CUFFT(cufftExecD2Z(plan.forward, real, spectrum));
        launch_conj_product(spectrum, plan.templ_spectrum.get(), complexes, sm_count_, s);
        CORRTRACK_CUFFT(cufftExecZ2D(plan.inverse, spectrum, real));
        // Valid positions never wrap: x + i <= roi.width - 1 < pad.width (same for y).
        launch_ncc_finish_rounded(real, static_cast<std::size_t>(pad.width), 1.0 / static_cast<double>(reals),
                                  integral_.tables(), p.templ, templ_.stats(), out, p.out_size(), s);
    }

private:
    FftPlan& plan_for(Size padded) {
        ++clock_;
        for (auto& plan : plans_)
            if (plan->padded == padded) {
                plan->last_use = clock_;
                return *plan;
            }
        if (plans_.size() >= kMaxPlans) {
            // Freeing waits for the device (cudaFree): only on a new shape, never per frame.
            auto oldest = std::min_element(plans_.begin(), plans_.end(),
                                           [](const auto& a, const auto& b) { return a->last_use < b->last_use; });
            plans_.erase(oldest);
        }
        auto plan = std::make_unique<FftPlan>();
        plan->padded = padded;
        plan->last_use = clock_;
        std::size_t forward_bytes = 0, inverse_bytes = 0;
        // cufftPlan2d's nx is the slow (row) dimension.
        CORRTRACK_CUFFT(cufftCreate(&plan->forward));
        plan->have_forward = true;
        CORRTRACK_CUFFT(cufftSetAutoAllocation(plan->forward, 0));
        CORRTRACK_CUFFT(cufftMakePlan2d(plan->forward, padded.height, padded.width, CUFFT_D2Z, &forward_bytes));
        CORRTRACK_CUFFT(cufftCreate(&plan->inverse));
        plan->have_inverse = true;
        CORRTRACK_CUFFT(cufftSetAutoAllocation(plan->inverse, 0));
        CORRTRACK_CUFFT(cufftMakePlan2d(plan->inverse, padded.height, padded.width, CUFFT_Z2D, &inverse_bytes));
        work_.ensure(std::max<std::size_t>({forward_bytes, inverse_bytes, 1}));
        plan->templ_spectrum.ensure(static_cast<std::size_t>(padded.width / 2 + 1) * padded.height);
        plans_.push_back(std::move(plan));
        return *plans_.back();
    }

    KernelInfo info_{"cuda_fft", Device::kCuda,
                     "cuFFT double D2Z/Z2D numerator, rounded exact, integral-image denominator"};
    TemplateUpload templ_;
    std::uint64_t templ_generation_ = 0;
    GpuIntegral integral_;
    std::vector<std::unique_ptr<FftPlan>> plans_;
    std::uint64_t clock_ = 0;
    DeviceBuffer<double> real_;
    DeviceBuffer<cufftDoubleComplex> spectrum_;
    DeviceBuffer<std::uint8_t> work_;  // shared by every plan: they all run on one stream in turn
    int sm_count_ = 0;
};

}  // namespace

std::unique_ptr<Correlator> make_cuda_fft() { return std::make_unique<CudaFft>(); }

}  // namespace corrtrack
