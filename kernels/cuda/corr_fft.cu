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
//
// Batches (templates > 1): the template spectra come from one batched D2Z; with
// template_roi_step 0 the roi's spectrum is computed once and multiplied by each template's,
// otherwise the rois go through one batched D2Z; one product launch for all templates, one
// batched Z2D, one finish launch (integral images over every row searched, each template's
// statistics from the stack's prefix table).
#include <cufft.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "corrtrack/start_trace.h"
#include "cuda/common.cuh"
#include "cuda/cuda_kernels.h"
#include "cuda/integral.cuh"

namespace corrtrack {
namespace {

constexpr int kPadWidth = 32;
constexpr int kPadRows = 8;
constexpr int kProductThreads = 256;
constexpr int kMinFftSide = 8;        // keeps degenerate 1-pixel sides away from cuFFT
constexpr std::size_t kMaxPlans = 4;  // padded shapes kept (a tracker's roi changes at edges)

// Zero-padded copy of a w x h uint8 image into a pw x ph double buffer (row pitch pw); image
// k = blockIdx.z starts src_stride bytes after image k - 1 and lands pw * ph doubles after it.
static __global__ void __launch_bounds__(kPadWidth* kPadRows)
    pad_kernel(const std::uint8_t* __restrict__ src, std::size_t pitch, std::size_t src_stride, int w, int h,
               double* __restrict__ dst, int pw, int ph) {
    const int x = blockIdx.x * kPadWidth + threadIdx.x;
    const int y = blockIdx.y * kPadRows + threadIdx.y;
    if (x >= pw || y >= ph) return;
    const std::size_t k = blockIdx.z;
    src += k * src_stride;
    dst[k * pw * ph + static_cast<std::size_t>(y) * pw + x] =
        x < w && y < h ? static_cast<double>(__ldg(src + static_cast<std::size_t>(y) * pitch + x)) : 0.0;
}

// out_k = image_k * conj(templ_k), k = blockIdx.y: the transform of the correlation
// sum_i I(x + i) T(i). image_k is image + k * image_stride (0: one image for every template);
// out may be image (in place: each element is read, then written, by the same thread).
static __global__ void __launch_bounds__(kProductThreads)
    conj_product_kernel(cufftDoubleComplex* out, const cufftDoubleComplex* image, std::size_t image_stride,
                        const cufftDoubleComplex* __restrict__ templ, std::size_t count) {
    const std::size_t k = blockIdx.y;
    out += k * count;
    image += k * image_stride;
    templ += k * count;
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(kProductThreads) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * kProductThreads) {
        const cufftDoubleComplex a = image[i];
        const cufftDoubleComplex b = templ[i];
        out[i] = make_cuDoubleComplex(a.x * b.x + a.y * b.y, a.y * b.x - a.x * b.y);
    }
}

int div_up(int a, int b) { return (a + b - 1) / b; }

static void launch_pad(const std::uint8_t* src, std::size_t pitch, std::size_t src_stride, int w, int h, int images,
                       double* dst, Size padded, cudaStream_t stream) {
    const dim3 grid(div_up(padded.width, kPadWidth), div_up(padded.height, kPadRows), images);
    pad_kernel<<<grid, dim3(kPadWidth, kPadRows), 0, stream>>>(src, pitch, src_stride, w, h, dst, padded.width,
                                                               padded.height);
    CORRTRACK_CUDA_LAUNCHED();
}

static void launch_conj_product(cufftDoubleComplex* out, const cufftDoubleComplex* image, std::size_t image_stride,
                                const cufftDoubleComplex* templ, std::size_t count, int templates, int sm_count,
                                cudaStream_t stream) {
    const std::size_t blocks =
        std::max<std::size_t>(1, std::min<std::size_t>((count + kProductThreads - 1) / kProductThreads,
                                                       static_cast<std::size_t>(sm_count) * 16 / templates));
    conj_product_kernel<<<dim3(static_cast<unsigned>(blocks), templates), kProductThreads, 0, stream>>>(
        out, image, image_stride, templ, count);
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

// One padded shape and template count: a single forward plan, for a batch also a batched
// forward plan (templates, and rois a step apart), an inverse plan over every template (all
// sharing the Correlator's work area), and the template spectra at that size.
struct FftPlan {
    Size padded;
    int templates = 1;
    cufftHandle forward = 0, forward_batch = 0, inverse = 0;
    bool have_forward = false, have_forward_batch = false, have_inverse = false;
    DeviceBuffer<cufftDoubleComplex> templ_spectrum;
    std::uint64_t templ_generation = 0;  // 0: never computed
    Size templ_size;                     // the split the spectra were computed for
    std::uint64_t last_use = 0;
    ~FftPlan() {
        if (have_forward) cufftDestroy(forward);
        if (have_forward_batch) cufftDestroy(forward_batch);
        if (have_inverse) cufftDestroy(inverse);
    }
    cufftHandle batch_forward() const { return templates > 1 ? forward_batch : forward; }
};

// A 2D double transform of `batch` contiguous padded images (cuFFT's basic layout), made
// without a work area of its own; returns the work-area bytes it needs.
std::size_t make_plan(cufftHandle* plan, bool* have, Size padded, cufftType type, int batch) {
    std::size_t bytes = 0;
    int n[2] = {padded.height, padded.width};  // the slow (row) dimension first
    StartTraceScope trace("cufft plan", std::to_string(padded.width) + "x" + std::to_string(padded.height) + " x" +
                                            std::to_string(batch));
    CORRTRACK_CUFFT(cufftCreate(plan));
    *have = true;
    CORRTRACK_CUFFT(cufftSetAutoAllocation(*plan, 0));
    if (batch == 1)
        CORRTRACK_CUFFT(cufftMakePlan2d(*plan, padded.height, padded.width, type, &bytes));
    else
        CORRTRACK_CUFFT(cufftMakePlanMany(*plan, 2, n, nullptr, 1, 0, nullptr, 1, 0, type, batch, &bytes));
    return bytes;
}

class CudaFft final : public Correlator {
public:
    const KernelInfo& info() const override { return info_; }
    bool supports(const NccProblem& p, std::string* why) const override {
        return jpdc_supports(p, why, /*batches=*/true);
    }
    void set_template(ImageView templ, Stream stream) override {
        templ_.set(templ, templ.height, stream);
        ++templ_generation_;
    }
    void run(ImageView frame, const NccProblem& p, MapView out, Stream stream) override {
        jpdc_check_run(*this, frame, p, out, templ_);
        const cudaStream_t s = as_cuda(stream);
        const int templates = p.templates;
        const int step = p.template_roi_step;
        const ImageView roi = frame.sub(p.roi);
        if (sm_count_ == 0) {
            int dev = 0;
            CORRTRACK_CUDA(cudaGetDevice(&dev));
            CORRTRACK_CUDA(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, dev));
        }
        // Window sums of every template from one pair of tables over every row searched.
        integral_.build(frame.sub({p.roi.x, p.roi.y, p.roi.width, p.roi.height + (templates - 1) * step}), s);

        FftPlan& plan = plan_for({fast_fft_length(roi.width), fast_fft_length(roi.height)}, templates);
        const Size pad = plan.padded;
        const std::size_t reals = static_cast<std::size_t>(pad.width) * pad.height;
        const std::size_t complexes = static_cast<std::size_t>(pad.width / 2 + 1) * pad.height;
        double* real = real_.ensure(reals * templates);
        cufftDoubleComplex* spectrum = spectrum_.ensure(complexes * templates);
        for (const cufftHandle h : {plan.forward, plan.batch_forward(), plan.inverse}) {
            CORRTRACK_CUFFT(cufftSetStream(h, s));
            CORRTRACK_CUFFT(cufftSetWorkArea(h, work_.get()));
        }

        if (plan.templ_generation != templ_generation_ || plan.templ_size != p.templ) {
            const std::size_t templ_bytes = static_cast<std::size_t>(p.templ.width) * p.templ.height;
            launch_pad(templ_.device(), static_cast<std::size_t>(p.templ.width), templ_bytes, p.templ.width,
                       p.templ.height, templates, real, pad, s);
            CORRTRACK_CUFFT(cufftExecD2Z(plan.batch_forward(), real, plan.templ_spectrum.get()));
            plan.templ_generation = templ_generation_;
            plan.templ_size = p.templ;
        }
        if (templates == 1 || step == 0) {
            // One roi spectrum, multiplied by each template's (in place for one template).
            cufftDoubleComplex* image = templates == 1 ? spectrum : frame_spectrum_.ensure(complexes);
            launch_pad(roi.data, roi.pitch, 0, roi.width, roi.height, 1, real, pad, s);
            CORRTRACK_CUFFT(cufftExecD2Z(plan.forward, real, image));
            launch_conj_product(spectrum, image, 0, plan.templ_spectrum.get(), complexes, templates, sm_count_, s);
        } else {
            launch_pad(roi.data, roi.pitch, static_cast<std::size_t>(step) * roi.pitch, roi.width, roi.height,
                       templates, real, pad, s);
            CORRTRACK_CUFFT(cufftExecD2Z(plan.forward_batch, real, spectrum));
            launch_conj_product(spectrum, spectrum, complexes, plan.templ_spectrum.get(), complexes, templates,
                                sm_count_, s);
        }
        CORRTRACK_CUFFT(cufftExecZ2D(plan.inverse, spectrum, real));
        // Valid positions never wrap: x + i <= roi.width - 1 < pad.width (same for y).
        const double scale = 1.0 / static_cast<double>(reals);
        if (templates == 1) {
            launch_ncc_finish_rounded(real, static_cast<std::size_t>(pad.width), scale, integral_.tables(), p.templ,
                                      templ_.stats(), out, p.out_size(), s);
            return;
        }
        if (prefix_generation_ != templ_generation_) {
            const int rows = templ_.height();
            launch_template_prefix(templ_.device(), templ_.width(), rows,
                                   prefix_.ensure(static_cast<std::size_t>(rows) + 1), nullptr, prefix_scan_, s);
            prefix_generation_ = templ_generation_;
        }
        launch_ncc_finish_rounded_batch(real, static_cast<std::size_t>(pad.width), reals, scale, integral_.tables(),
                                        p.templ, prefix_.get(), templates, step, out, p.out_size(), s);
    }

private:
    FftPlan& plan_for(Size padded, int templates) {
        ++clock_;
        for (auto& plan : plans_)
            if (plan->padded == padded && plan->templates == templates) {
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
        plan->templates = templates;
        plan->last_use = clock_;
        std::size_t bytes = make_plan(&plan->forward, &plan->have_forward, padded, CUFFT_D2Z, 1);
        if (templates > 1)
            bytes = std::max(bytes,
                             make_plan(&plan->forward_batch, &plan->have_forward_batch, padded, CUFFT_D2Z, templates));
        bytes = std::max(bytes, make_plan(&plan->inverse, &plan->have_inverse, padded, CUFFT_Z2D, templates));
        work_.ensure(std::max<std::size_t>(bytes, 1));
        plan->templ_spectrum.ensure(static_cast<std::size_t>(padded.width / 2 + 1) * padded.height * templates);
        plans_.push_back(std::move(plan));
        return *plans_.back();
    }

    KernelInfo info_ = registry_info("cuda_fft");
    TemplateUpload templ_;
    std::uint64_t templ_generation_ = 0;
    GpuIntegral integral_;
    std::vector<std::unique_ptr<FftPlan>> plans_;
    std::uint64_t clock_ = 0;
    DeviceBuffer<double> real_;                        // one padded map per template
    DeviceBuffer<cufftDoubleComplex> spectrum_;        // one spectrum per template
    DeviceBuffer<cufftDoubleComplex> frame_spectrum_;  // the shared roi's spectrum (batch, step 0)
    DeviceBuffer<TemplatePrefix> prefix_;              // the stack's statistics (batches)
    DeviceBuffer<std::uint8_t> prefix_scan_;           // its scan's workspace (large stacks)
    std::uint64_t prefix_generation_ = 0;
    DeviceBuffer<std::uint8_t> work_;  // shared by every plan: they all run on one stream in turn
    int sm_count_ = 0;
};

}  // namespace

std::unique_ptr<Correlator> make_cuda_fft() { return std::make_unique<CudaFft>(); }

}  // namespace corrtrack
