// cpu_ref: brute-force NCC, the oracle every other kernel is tested against. Sums are exact
// 64-bit integers per window, combined in double by ncc_from_sums.
#include <cstring>

#include "cpu/cpu_kernels.h"
#include "cpu/integral.h"
#include "corrtrack/ncc_math.h"

namespace corrtrack {
namespace {

class CpuRef final : public CpuCorrelator {
public:
    CpuRef() : CpuCorrelator(registry_info("cpu_ref")) {}
    void set_template(ImageView templ, Stream) override {
        templ_size_ = {templ.width, templ.height};
        copy_template(templ);
    }
    void run(ImageView frame, const NccProblem& p, MapView out, Stream) override {
        const Size o = p.out_size();
        const int tw = p.templ.width, th = p.templ.height;
        for (int k = 0; k < p.templates; ++k) {
            const std::uint8_t* t = &templ_[static_cast<std::size_t>(k) * tw * th];
            const ImageView tv{t, tw, th, static_cast<std::size_t>(tw), MemorySpace::kHost};
            const TemplateStats ts = template_stats(tv);
            const Rect roi = p.roi_of(k);
            for (int y = 0; y < o.height; ++y) {
                float* dst = out.row(k * o.height + y);
                for (int x = 0; x < o.width; ++x) {
                    std::int64_t si = 0, sii = 0, sit = 0;
                    for (int j = 0; j < th; ++j) {
                        const std::uint8_t* irow = frame.row(roi.y + y + j) + roi.x + x;
                        const std::uint8_t* trow = t + static_cast<std::size_t>(j) * tw;
                        for (int i = 0; i < tw; ++i) {
                            const std::int64_t v = irow[i];
                            si += v;
                            sii += v * v;
                            sit += v * trow[i];
                        }
                    }
                    dst[x] = ncc_from_sums(ts.n, si, sii, sit, ts.sum, ts.sum_sq);
                }
            }
        }
    }

private:
    Size templ_size_;
};

}  // namespace

std::unique_ptr<Correlator> make_cpu_ref() { return std::make_unique<CpuRef>(); }

}  // namespace corrtrack
