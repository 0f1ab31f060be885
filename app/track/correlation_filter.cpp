// The correlation filter (correlation_filter.h): features, transforms, training and response.
// Single precision throughout (FFTW's fftwf): the filter ranks positions, it never gives the
// score the gates read, and float halves the transforms' time against double.
#include "app/track/correlation_filter.h"

#include <fftw3.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <new>
#include <stdexcept>

#include "app/track/clones.h"

namespace corrtrack {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr float kLambda = 0.01f;     // regularisation of the filter's division
constexpr double kLabelSigma = 2.0;  // the desired answer: a Gaussian this wide (pixels)

// The smallest even length >= n whose factors are 2, 3 and 5. FFTW's real transforms of odd
// lengths and of factors 7 ran 20-40% slower on the shapes the tracker meets (63x80: 17.8 us
// against 12.2 for 64x80, 75x80: 19.9 against 12.0 for 80x80, FFTW_ESTIMATE, 2-core VM).
int fast_length(int n) {
    for (int m = std::max(n, 2);; ++m) {
        if (m % 2 != 0) continue;
        int r = m;
        for (int f : {2, 3, 5})
            while (r % f == 0) r /= f;
        if (r == 1) return m;
    }
}

}  // namespace

// The plans of one transform shape. FFTW's single-precision planner is process-wide and not
// thread-safe (running a plan on other arrays of the same alignment is), so plans are made
// and destroyed under one lock, and shared through a small cache.
struct FilterFft {
    Size shape;
    fftwf_plan forward = nullptr, inverse = nullptr;
    // The same transforms in their two passes, for constrain_to_support, whose taps are zero
    // outside a band of rows: the columns' complex transforms (in place, every column), and one
    // row's real transform (run on each row of the band; unaligned, as rows start anywhere).
    fftwf_plan columns_forward = nullptr, columns_inverse = nullptr;
    fftwf_plan row_forward = nullptr, row_inverse = nullptr;
    std::size_t spectrum() const { return static_cast<std::size_t>(shape.width / 2 + 1) * shape.height; }
    // Floats between channels, and complex values between their spectra: each starts on a
    // 64-byte boundary, as FFTW's planning arrays did.
    std::size_t stride() const { return (static_cast<std::size_t>(shape.area()) + 15) / 16 * 16; }
    std::size_t spectrum_stride() const { return (spectrum() + 7) / 8 * 8; }
    ~FilterFft();
};

namespace {

std::mutex& planner_mutex() {
    static std::mutex m;
    return m;
}

// The last kCachedShapes shapes planned (filters hold their own reference, so an evicted
// shape's plans live on while used). FFTW's wisdom grows with every problem it plans: it is
// forgotten every kWisdomResetPlans plans, as the kernels' FFT plan cache does.
constexpr std::size_t kCachedShapes = 16;
constexpr int kWisdomResetPlans = 64;

std::shared_ptr<const FilterFft> plans_for(Size shape) {
    static std::vector<std::shared_ptr<const FilterFft>> cache;  // most recent last
    static int planned = 0;
    // An evicted shape whose filters are gone is destroyed here, after the lock is released
    // (its destructor takes the lock).
    std::shared_ptr<const FilterFft> evicted;
    std::shared_ptr<FilterFft> f;  // likewise if planning fails
    std::lock_guard<std::mutex> lock(planner_mutex());
    for (auto it = cache.begin(); it != cache.end(); ++it)
        if ((*it)->shape == shape) {
            std::shared_ptr<const FilterFft> hit = *it;
            cache.erase(it);
            cache.push_back(hit);
            return hit;
        }
    if (planned > 0 && planned % kWisdomResetPlans == 0) fftwf_forget_wisdom();
    ++planned;
    f = std::make_shared<FilterFft>();
    f->shape = shape;
    // FFTW_ESTIMATE leaves the arrays alone; they only set the alignment every later array has.
    float* real = fftwf_alloc_real(f->stride());
    fftwf_complex* spectrum = fftwf_alloc_complex(f->spectrum_stride());
    if (real && spectrum) {
        f->forward = fftwf_plan_dft_r2c_2d(shape.height, shape.width, real, spectrum, FFTW_ESTIMATE);
        f->inverse = fftwf_plan_dft_c2r_2d(shape.height, shape.width, spectrum, real, FFTW_ESTIMATE);
        const int columns = shape.width / 2 + 1;
        f->columns_forward = fftwf_plan_many_dft(1, &shape.height, columns, spectrum, nullptr, columns, 1, spectrum,
                                                 nullptr, columns, 1, FFTW_FORWARD, FFTW_ESTIMATE);
        f->columns_inverse = fftwf_plan_many_dft(1, &shape.height, columns, spectrum, nullptr, columns, 1, spectrum,
                                                 nullptr, columns, 1, FFTW_BACKWARD, FFTW_ESTIMATE);
        f->row_forward = fftwf_plan_dft_r2c_1d(shape.width, real, spectrum, FFTW_ESTIMATE | FFTW_UNALIGNED);
        f->row_inverse = fftwf_plan_dft_c2r_1d(shape.width, spectrum, real, FFTW_ESTIMATE | FFTW_UNALIGNED);
    }
    fftwf_free(real);
    fftwf_free(spectrum);
    if (!f->forward || !f->inverse || !f->columns_forward || !f->columns_inverse || !f->row_forward || !f->row_inverse)
        throw std::runtime_error("FFTW could not plan the filter's transform");
    if (cache.size() >= kCachedShapes) {
        evicted = std::move(cache.front());
        cache.erase(cache.begin());
    }
    cache.push_back(f);
    return f;
}

}  // namespace

FilterFft::~FilterFft() {
    std::lock_guard<std::mutex> lock(planner_mutex());
    for (fftwf_plan p : {forward, inverse, columns_forward, columns_inverse, row_forward, row_inverse})
        if (p) fftwf_destroy_plan(p);
}

namespace {

// SIMD-aligned arrays (fftwf_malloc), grown, never shrunk.
template <typename T>
struct FftwArray {
    T* data = nullptr;
    std::size_t capacity = 0;
    void ensure(std::size_t n) {
        if (n <= capacity) return;
        fftwf_free(data);
        data = static_cast<T*>(fftwf_malloc(n * sizeof(T)));
        if (!data) throw std::bad_alloc();
        capacity = n;
    }
    ~FftwArray() { fftwf_free(data); }
};

}  // namespace

struct FilterScratch::Arrays {
    FftwArray<float> features;               // channels x stride, then one real plane
    FftwArray<std::complex<float>> spectra;  // channels x spectrum stride, then one more
    std::vector<float> grey, planes, rows;   // log grey; the gradient bins, during pooling
    std::vector<float> low, high;            // each pixel's share of its two bins
    std::vector<std::uint8_t> bin;           // each pixel's lower bin
    std::vector<float> hann_x, hann_y;       // the Hann window's factors for hann_size
    Size hann_size, shape;                   // the window; the transform's (window padded)
    std::size_t stride = 0, spectrum_stride = 0;

    void ensure(Size s, const FilterFft& fft) {
        const std::size_t n = static_cast<std::size_t>(s.area());
        shape = fft.shape;
        stride = fft.stride();
        spectrum_stride = fft.spectrum_stride();
        features.ensure(stride * (kFilterChannels + 1));
        spectra.ensure(spectrum_stride * (kFilterChannels + 1));
        grey.resize(n);
        planes.resize(n * kFilterBins);
        rows.resize(n);
        low.resize(n);
        high.resize(n);
        bin.resize(n);
        if (!(hann_size == s)) {
            hann_x.resize(static_cast<std::size_t>(s.width));
            hann_y.resize(static_cast<std::size_t>(s.height));
            for (int x = 0; x < s.width; ++x)
                hann_x[x] = static_cast<float>(0.5 * (1 - std::cos(2 * kPi * (x + 0.5) / s.width)));
            for (int y = 0; y < s.height; ++y)
                hann_y[y] = static_cast<float>(0.5 * (1 - std::cos(2 * kPi * (y + 0.5) / s.height)));
            hann_size = s;
        }
    }
    float* channel(int c) { return features.data + static_cast<std::size_t>(c) * stride; }
    std::complex<float>* spectrum(int c) { return spectra.data + static_cast<std::size_t>(c) * spectrum_stride; }
};

FilterScratch::FilterScratch() : arrays_(std::make_unique<Arrays>()) {}
FilterScratch::~FilterScratch() = default;

namespace {

// The loops below run for every target with the filter, twice a frame (an answer, a training):
// -O3 for this file (app/CMakeLists.txt) and an AVX2 clone (clones.h).

// The gradient bins' planes summed over 3x3 pixels (clipped at the edges) and square-rooted,
// in place: each plane gets a pixel's `low` where its lower bin is the plane's, its `high`
// where its lower bin is the one before; then sums across each row, then down.
CORRTRACK_CLONES void pool_bins(const std::uint8_t* __restrict bin, const float* __restrict low,
                                const float* __restrict high, float* __restrict rows, float* __restrict planes, int w,
                                int h) {
    const std::size_t n = static_cast<std::size_t>(w) * h;
    for (int b = 0; b < kFilterBins; ++b) {
        const std::uint8_t below = static_cast<std::uint8_t>((b + kFilterBins - 1) % kFilterBins);
        const std::uint8_t self = static_cast<std::uint8_t>(b);
        float* plane = planes + b * n;
        for (std::size_t i = 0; i < n; ++i)
            plane[i] = (bin[i] == self ? low[i] : 0.0f) + (bin[i] == below ? high[i] : 0.0f);
        for (int y = 0; y < h; ++y) {
            const float* r = plane + static_cast<std::size_t>(y) * w;
            float* o = rows + static_cast<std::size_t>(y) * w;
            if (w == 1) {
                o[0] = r[0];
                continue;
            }
            o[0] = r[0] + r[1];
            for (int x = 1; x < w - 1; ++x) o[x] = r[x - 1] + r[x] + r[x + 1];
            o[w - 1] = r[w - 2] + r[w - 1];
        }
        for (int y = 0; y < h; ++y) {
            const float* mid = rows + static_cast<std::size_t>(y) * w;
            float* o = plane + static_cast<std::size_t>(y) * w;
            if (y > 0 && y < h - 1) {
                const float* up = mid - w;
                const float* down = mid + w;
                for (int x = 0; x < w; ++x) o[x] = std::sqrt(up[x] + mid[x] + down[x]);
            } else if (h > 1) {
                const float* other = y == 0 ? mid + w : mid - w;
                for (int x = 0; x < w; ++x) o[x] = std::sqrt(mid[x] + other[x]);
            } else {
                for (int x = 0; x < w; ++x) o[x] = std::sqrt(mid[x]);
            }
        }
    }
}

// One channel zero-mean, unit-norm and Hann-windowed into `out` (w x h inside rows of `pitch`).
// The sums run in eight fixed lanes of double, so they vectorize and give the same value on
// every machine.
CORRTRACK_CLONES void finish_channel(const float* __restrict v, const float* __restrict hann_x,
                                     const float* __restrict hann_y, float* __restrict out, int w, int h, int pitch) {
    const std::size_t n = static_cast<std::size_t>(w) * h;
    double sum[8] = {}, squares[8] = {};
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; ++k) {
            sum[k] += v[i + k];
            squares[k] += static_cast<double>(v[i + k]) * v[i + k];
        }
    for (; i < n; ++i) {
        sum[0] += v[i];
        squares[0] += static_cast<double>(v[i]) * v[i];
    }
    double total = 0, total_squares = 0;
    for (int k = 0; k < 8; ++k) {
        total += sum[k];
        total_squares += squares[k];
    }
    const double mean = total / static_cast<double>(n);
    const double energy = total_squares - total * mean;
    const float m = static_cast<float>(mean);
    const float inv_norm = static_cast<float>(1.0 / std::sqrt(std::max(energy, 1e-12)));
    for (int y = 0; y < h; ++y) {
        const float wy = hann_y[y] * inv_norm;
        const float* row = v + static_cast<std::size_t>(y) * w;
        float* o = out + static_cast<std::size_t>(y) * pitch;
        for (int x = 0; x < w; ++x) o[x] = (row[x] - m) * (hann_x[x] * wy);
    }
}

// sum += z x h over n complex values (interleaved re, im).
CORRTRACK_CLONES void multiply_add(const float* __restrict z, const float* __restrict h, float* __restrict sum,
                                   std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        const float zr = z[2 * i], zi = z[2 * i + 1], hr = h[2 * i], hi = h[2 * i + 1];
        sum[2 * i] += zr * hr - zi * hi;
        sum[2 * i + 1] += zr * hi + zi * hr;
    }
}

// energy += |f|^2 over n complex values.
CORRTRACK_CLONES void add_energy(const float* __restrict f, float* __restrict energy, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) energy[i] += f[2 * i] * f[2 * i] + f[2 * i + 1] * f[2 * i + 1];
}

// One channel's numerator moves `rate` of the way to label x conj(f); the filter is the
// numerator over the denominator (given as its inverse).
CORRTRACK_CLONES void update_channel(const float* __restrict label, const float* __restrict f,
                                     const float* __restrict inv_den, float rate, float* __restrict num,
                                     float* __restrict filter, std::size_t n) {
    const float keep = 1.0f - rate;
    for (std::size_t i = 0; i < n; ++i) {
        const float lr = label[2 * i], li = label[2 * i + 1], fr = f[2 * i], fi = f[2 * i + 1];
        const float re = keep * num[2 * i] + rate * (lr * fr + li * fi);
        const float im = keep * num[2 * i + 1] + rate * (li * fr - lr * fi);
        num[2 * i] = re;
        num[2 * i + 1] = im;
        filter[2 * i] = re * inv_den[i];
        filter[2 * i + 1] = im * inv_den[i];
    }
}

// atan(a) for a in [0, 1] (a minimax polynomial; error under 2e-5 rad): the orientation's
// bins vectorize with it, where a table or std::atan2 would not.
inline float atan_unit(float a) {
    const float s = a * a;
    return a * (0.99997726f +
                s * (-0.33262347f + s * (0.19354346f + s * (-0.11643287f + s * (0.05265332f + s * -0.01172120f)))));
}

// One row's gradients (central differences, clamped at the row's ends: `left` and `right`
// are the row shifted by one, `up` and `down` the rows above and below) as two soft bins of
// unsigned orientation: magnitude x (1 - frac) goes to bin[x], magnitude x frac to bin[x] + 1
// (mod bins); bin centres at (b + 0.5) pi / bins.
CORRTRACK_CLONES void gradient_row(const std::uint8_t* __restrict left, const std::uint8_t* __restrict right,
                                   const std::uint8_t* __restrict up, const std::uint8_t* __restrict down,
                                   std::uint8_t* __restrict bin, float* __restrict low, float* __restrict high, int n) {
    constexpr float kHalfPi = 1.57079632679f, kOnePi = 3.14159265359f, kPerBin = kFilterBins / kOnePi;
    static_assert((kFilterBins & (kFilterBins - 1)) == 0, "the bin wraps with a mask");
    // Branch-free (selects, a truncation for the floor), so that it vectorizes.
    for (int x = 0; x < n; ++x) {
        float gx = static_cast<float>(right[x]) - static_cast<float>(left[x]);
        float gy = static_cast<float>(down[x]) - static_cast<float>(up[x]);
        // Unsigned: (gx, gy) and (-gx, -gy) are one orientation; fold onto gy >= 0.
        const bool flip = (gy < 0) | ((gy == 0) & (gx < 0));
        gx = flip ? -gx : gx;
        gy = flip ? -gy : gy;
        const float ax = std::fabs(gx);
        const float big = std::max(ax, gy), small = std::min(ax, gy);
        float theta = atan_unit(small / std::max(big, 1.0f));  // [0, pi/4]; differences are integers
        theta = gy > ax ? kHalfPi - theta : theta;             // [0, pi/2]
        theta = gx < 0 ? kOnePi - theta : theta;               // [0, pi]
        const float pos = theta * kPerBin - 0.5f;              // [-0.5, bins - 0.5]
        const int b = static_cast<int>(pos + 1.0f) - 1;        // floor: pos + 1 > 0
        const float frac = pos - static_cast<float>(b);
        const float magnitude = std::sqrt(gx * gx + gy * gy);
        bin[x] = static_cast<std::uint8_t>((b + kFilterBins) & (kFilterBins - 1));
        low[x] = magnitude * (1 - frac);
        high[x] = magnitude * frac;
    }
}

// The window's channels into a.channel(0..kFilterChannels-1), on the transform's (padded)
// shape with zeros around: log grey, then the gradient magnitude per orientation bin summed
// over 3x3 pixels and square-rooted; each channel zero-mean, unit-norm and Hann-windowed.
// Only the part `inside` the frame is read, as if it were the whole window (its gradients and
// sums clipped at its own edges); the rest stays zero.
void compute_features(const std::uint8_t* window, Size s, Rect inside, FilterScratch::Arrays& a) {
    static const std::vector<float> log_grey = [] {
        std::vector<float> t(256);
        for (int i = 0; i < 256; ++i) t[i] = static_cast<float>(std::log1p(static_cast<double>(i)));
        return t;
    }();
    // The padding must be zero: the arrays are shared by filters of other shapes.
    for (int c = 0; c < kFilterChannels; ++c) std::fill(a.channel(c), a.channel(c) + a.shape.area(), 0.0f);
    const int w = inside.width, h = inside.height;
    if (w <= 0 || h <= 0) return;
    const std::size_t n = static_cast<std::size_t>(w) * h;
    const std::uint8_t* origin = window + static_cast<std::size_t>(inside.y) * s.width + inside.x;
    auto src = [&](int y) { return origin + static_cast<std::size_t>(y) * s.width; };
    const int pw = a.shape.width;
    const std::size_t out_at = static_cast<std::size_t>(inside.y) * pw + inside.x;
    const float* hann_x = a.hann_x.data() + inside.x;
    const float* hann_y = a.hann_y.data() + inside.y;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) a.grey[static_cast<std::size_t>(y) * w + x] = log_grey[src(y)[x]];
    finish_channel(a.grey.data(), hann_x, hann_y, a.channel(0) + out_at, w, h, pw);
    for (int y = 0; y < h; ++y) {
        const std::uint8_t* up = src(std::max(y - 1, 0));
        const std::uint8_t* row = src(y);
        const std::uint8_t* down = src(std::min(y + 1, h - 1));
        const std::size_t at = static_cast<std::size_t>(y) * w;
        std::uint8_t* bin = a.bin.data() + at;
        float* low = a.low.data() + at;
        float* high = a.high.data() + at;
        if (w < 3) {  // every pixel at an end
            for (int x = 0; x < w; ++x)
                gradient_row(row + std::max(x - 1, 0), row + std::min(x + 1, w - 1), up + x, down + x, bin + x, low + x,
                             high + x, 1);
            continue;
        }
        gradient_row(row, row + 1, up, down, bin, low, high, 1);
        gradient_row(row, row + 2, up + 1, down + 1, bin + 1, low + 1, high + 1, w - 2);
        gradient_row(row + w - 2, row + w - 1, up + w - 1, down + w - 1, bin + w - 1, low + w - 1, high + w - 1, 1);
    }
    pool_bins(a.bin.data(), a.low.data(), a.high.data(), a.rows.data(), a.planes.data(), w, h);
    for (int b = 0; b < kFilterBins; ++b)
        finish_channel(a.planes.data() + b * n, hann_x, hann_y, a.channel(1 + b) + out_at, w, h, pw);
}

float* floats(std::complex<float>* p) { return reinterpret_cast<float*>(p); }
const float* floats(const std::complex<float>* p) { return reinterpret_cast<const float*>(p); }

}  // namespace

// Each channel's filter zeroed beyond the target's support: in space, the filter's taps are
// offsets from the target's centre (the label's peak), so they are kept within `support` x the
// box's half-sides around offset 0 (circularly), the rest set to zero. An unconstrained filter
// also learns the background around the target, which stays where it is when the target moves:
// on a static camera its answer lags the target, and the scale search then grows the box to
// cover both (tir_airplane: 54x133 -> 93x230 over 380 frames with the box's true size 38x117).
// This is CSRT's spatial constraint in its plainest form (a box for its reliability mask, one
// projection of the closed-form filter for its iterations).
void CorrelationFilter::constrain_to_support(double support, FilterScratch& s) {
    FilterScratch::Arrays& a = s.arrays();
    const Size f = fft_->shape;
    const int rx = static_cast<int>(std::lround(templ_.width * support / 2));
    const int ry = std::min(static_cast<int>(std::lround(templ_.height * support / 2)), f.height / 2);
    const float inverse_area = 1.0f / static_cast<float>(f.area());  // FFTW's round trip scales by the area
    const std::size_t columns = static_cast<std::size_t>(f.width / 2 + 1);
    float* taps = a.channel(kFilterChannels);
    std::complex<float>* spectrum = a.spectrum(kFilterChannels);
    auto spectrum_row = [&](int y) { return reinterpret_cast<fftwf_complex*>(spectrum + y * columns); };
    // The band of rows within ry of row 0 (circularly): the only rows the taps keep, so the
    // rows' transforms run on it alone (a third of the rows; the columns' run on all).
    auto band_row = [&](int i) { return i <= ry ? i : f.height - (i - ry); };
    const int band = std::min(f.height, 2 * ry + 1);
    for (int c = 0; c < kFilterChannels; ++c) {
        std::complex<float>* filter = filter_.data() + c * spectrum_;
        std::copy(filter, filter + spectrum_, spectrum);  // the inverse transform overwrites its input
        // Through the aligned scratch: FFTW's plans want the alignment of their planning arrays.
        const auto whole = reinterpret_cast<fftwf_complex*>(spectrum);
        fftwf_execute_dft(fft_->columns_inverse, whole, whole);
        for (int i = 0; i < band; ++i) {
            const int y = band_row(i);
            float* row = taps + static_cast<std::size_t>(y) * f.width;
            fftwf_execute_dft_c2r(fft_->row_inverse, spectrum_row(y), row);
            for (int x = 0; x < f.width; ++x) row[x] = std::min(x, f.width - x) <= rx ? row[x] * inverse_area : 0.0f;
        }
        std::fill(spectrum, spectrum + spectrum_, std::complex<float>{});  // the rows outside the band
        for (int i = 0; i < band; ++i) {
            const int y = band_row(i);
            fftwf_execute_dft_r2c(fft_->row_forward, taps + static_cast<std::size_t>(y) * f.width, spectrum_row(y));
        }
        fftwf_execute_dft(fft_->columns_forward, whole, whole);
        std::copy(spectrum, spectrum + spectrum_, filter);
    }
}

void CorrelationFilter::train(const std::uint8_t* window, Size size, Size templ, Rect inside, double rate,
                              double support, FilterScratch& s) {
    FilterScratch::Arrays& a = s.arrays();
    if (!ready_ || !(size_ == size) || !(templ_ == templ)) {
        size_ = size;
        templ_ = templ;
        // Zeros pad the window to a fast transform shape (the Hann window took its edges to 0).
        fft_ = plans_for({fast_length(size.width), fast_length(size.height)});
        spectrum_ = fft_->spectrum();
        num_.assign(spectrum_ * kFilterChannels, 0.0f);
        den_.assign(spectrum_, 0.0f);
        filter_.assign(spectrum_ * kFilterChannels, 0.0f);
        rate = 1.0;
        // The desired answer: a Gaussian on the centred template position's centre pixel.
        a.ensure(size, *fft_);
        const Size f = fft_->shape;
        const int cx = (size.width - templ.width) / 2 + templ.width / 2;
        const int cy = (size.height - templ.height) / 2 + templ.height / 2;
        float* g = a.channel(kFilterChannels);
        for (int y = 0; y < f.height; ++y)
            for (int x = 0; x < f.width; ++x)
                g[static_cast<std::size_t>(y) * f.width + x] = static_cast<float>(
                    std::exp(-((x - cx) * (x - cx) + (y - cy) * (y - cy)) / (2 * kLabelSigma * kLabelSigma)));
        label_.resize(spectrum_);
        fftwf_execute_dft_r2c(fft_->forward, g, reinterpret_cast<fftwf_complex*>(a.spectrum(kFilterChannels)));
        std::copy(a.spectrum(kFilterChannels), a.spectrum(kFilterChannels) + spectrum_, label_.begin());
    }
    a.ensure(size, *fft_);
    compute_features(window, size, inside, a);
    for (int c = 0; c < kFilterChannels; ++c)
        fftwf_execute_dft_r2c(fft_->forward, a.channel(c), reinterpret_cast<fftwf_complex*>(a.spectrum(c)));
    // The denominator: the channels' energy, moved `rate` of the way; its inverse with lambda.
    float* energy = a.channel(kFilterChannels);  // free now: spectrum_ <= stride
    std::fill(energy, energy + spectrum_, 0.0f);
    for (int c = 0; c < kFilterChannels; ++c) add_energy(floats(a.spectrum(c)), energy, spectrum_);
    const float r = static_cast<float>(rate);
    for (std::size_t i = 0; i < spectrum_; ++i) {
        den_[i] = (1 - r) * den_[i] + r * energy[i];
        energy[i] = 1.0f / (den_[i] + kLambda);
    }
    for (int c = 0; c < kFilterChannels; ++c)
        update_channel(floats(label_.data()), floats(a.spectrum(c)), energy, r, floats(num_.data() + c * spectrum_),
                       floats(filter_.data() + c * spectrum_), spectrum_);
    if (support > 0) constrain_to_support(support, s);
    ready_ = true;
    static std::atomic<std::uint64_t> trainings{0};
    version_ = ++trainings;
}

void CorrelationFilter::respond(const std::uint8_t* window, Rect inside, float* out, FilterScratch& s) const {
    FilterScratch::Arrays& a = s.arrays();
    a.ensure(size_, *fft_);
    compute_features(window, size_, inside, a);
    for (int c = 0; c < kFilterChannels; ++c)
        fftwf_execute_dft_r2c(fft_->forward, a.channel(c), reinterpret_cast<fftwf_complex*>(a.spectrum(c)));
    std::complex<float>* sum = a.spectrum(kFilterChannels);
    std::fill(sum, sum + spectrum_, std::complex<float>{});
    for (int c = 0; c < kFilterChannels; ++c)
        multiply_add(floats(a.spectrum(c)), floats(filter_.data() + c * spectrum_), floats(sum), spectrum_);
    float* answer = a.channel(kFilterChannels);
    fftwf_execute_dft_c2r(fft_->inverse, reinterpret_cast<fftwf_complex*>(sum), answer);
    const Size f = fft_->shape;
    const float scale = 1.0f / static_cast<float>(f.area());
    const int ow = size_.width - templ_.width + 1, oh = size_.height - templ_.height + 1;
    for (int y = 0; y < oh; ++y) {
        const float* row = answer + static_cast<std::size_t>(y + templ_.height / 2) * f.width + templ_.width / 2;
        float* o = out + static_cast<std::size_t>(y) * ow;
        for (int x = 0; x < ow; ++x) o[x] = row[x] * scale;
    }
}

Rect window_in_frame(double ox, double oy, double scale, Size window, Size frame) {
    auto span = [&](double origin, int pixels, int extent, int& first, int& count) {
        const double lo = std::ceil(-origin / scale - 0.5);
        const double hi = std::floor((extent - 1 - origin) / scale - 0.5) + 1;
        const int a = static_cast<int>(std::clamp(lo, 0.0, static_cast<double>(pixels)));
        const int b = static_cast<int>(std::clamp(hi, static_cast<double>(a), static_cast<double>(pixels)));
        first = a;
        count = b - a;
    };
    Rect r;
    span(ox, window.width, frame.width, r.x, r.width);
    span(oy, window.height, frame.height, r.y, r.height);
    return r;
}

float filter_weight(const FilterCue& cue, float psr_filter, float psr_ncc) {
    const double a = std::max(0.0f, psr_filter), b = cue.balance * std::max(0.0f, psr_ncc);
    const double w = a + b > 0 ? a / (a + b) : 0.5;
    return static_cast<float>(std::min<double>(w, cue.cap));
}

}  // namespace corrtrack
