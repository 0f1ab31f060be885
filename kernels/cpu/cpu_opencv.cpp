// cpu_opencv: OpenCV's matchTemplate (TM_CCOEFF_NORMED), a peer for A/B comparisons.
// OpenCV computes in float and may give +-1 on flat windows; those are set to 0 here from
// exact integral-image variances so that every kernel answers the same on flat input.
#include <opencv2/imgproc.hpp>

#include "cpu/cpu_kernels.h"
#include "cpu/integral.h"

namespace corrtrack {
namespace {

class CpuOpenCv final : public CpuCorrelator {
public:
    CpuOpenCv() : CpuCorrelator(registry_info("cpu_opencv")) {}
    void set_template(ImageView templ, Stream) override {
        cv::Mat view(templ.height, templ.width, CV_8UC1, const_cast<std::uint8_t*>(templ.data), templ.pitch);
        view.copyTo(templ_mat_);
    }
    void run(ImageView frame, const NccProblem& p, MapView out, Stream) override {
        const Size o = p.out_size();
        const int step = p.template_roi_step;
        // One integral image over every row the templates search: template k's windows are the
        // same boxes k * step rows further down.
        integral_.build(frame.sub({p.roi.x, p.roi.y, p.roi.width, p.roi.height + (p.templates - 1) * step}));
        const std::int64_t n = static_cast<std::int64_t>(p.templ.width) * p.templ.height;
        for (int k = 0; k < p.templates; ++k) {
            const ImageView roi = frame.sub(p.roi_of(k));
            const cv::Mat image(roi.height, roi.width, CV_8UC1, const_cast<std::uint8_t*>(roi.data), roi.pitch);
            const cv::Mat t = templ_mat_.rowRange(k * p.templ.height, (k + 1) * p.templ.height);
            cv::Mat dst(o.height, o.width, CV_32FC1, out.row(k * o.height), out.pitch * sizeof(float));
            cv::matchTemplate(image, t, dst, cv::TM_CCOEFF_NORMED);
            const ImageView tv{t.data, t.cols, t.rows, t.step, MemorySpace::kHost};
            const TemplateStats ts = template_stats(tv);
            const bool flat_template = n * ts.sum_sq - ts.sum * ts.sum == 0;
            for (int y = 0; y < o.height; ++y) {
                float* row = dst.ptr<float>(y);
                for (int x = 0; x < o.width; ++x) {
                    const int yk = y + k * step;
                    const auto si = static_cast<std::int64_t>(integral_.sum(x, yk, p.templ.width, p.templ.height));
                    const auto sii = static_cast<std::int64_t>(integral_.sum_sq(x, yk, p.templ.width, p.templ.height));
                    if (flat_template || n * sii - si * si == 0) row[x] = 0.0f;
                }
            }
        }
    }

private:
    cv::Mat templ_mat_;  // OpenCV's own copy (the base's packed copy is unused)
    IntegralImages integral_;
};

}  // namespace

std::unique_ptr<Correlator> make_cpu_opencv() { return std::make_unique<CpuOpenCv>(); }
bool cpu_opencv_available() { return true; }

}  // namespace corrtrack
