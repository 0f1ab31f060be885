// Problem validation shared by all kernels.
#include "corrtrack/correlator.h"
#include "corrtrack/ncc_math.h"

namespace corrtrack {

std::string validate_problem(const NccProblem& p) {
    const auto sz = [](Size s) { return std::to_string(s.width) + "x" + std::to_string(s.height); };
    if (p.frame.width <= 0 || p.frame.height <= 0) return "empty frame";
    if (p.templ.width < 1 || p.templ.height < 1) return "empty template";
    if (p.templ.width > kMaxTemplateSide || p.templ.height > kMaxTemplateSide)
        return "template " + sz(p.templ) + " exceeds the supported " + std::to_string(kMaxTemplateSide) + "x" +
               std::to_string(kMaxTemplateSide);
    if (!p.roi.inside(p.frame)) return "search region lies outside the " + sz(p.frame) + " frame";
    if (p.templ.width > p.roi.width || p.templ.height > p.roi.height)
        return "template " + sz(p.templ) + " is larger than the search region " + sz({p.roi.width, p.roi.height});
    if (p.templates < 1) return "no templates";
    if (p.template_roi_step < 0) return "template_roi_step " + std::to_string(p.template_roi_step) + " is negative";
    const long long last_bottom =
        static_cast<long long>(p.roi.y) + static_cast<long long>(p.templates - 1) * p.template_roi_step + p.roi.height;
    if (last_bottom > p.frame.height)
        return "the search region of template " + std::to_string(p.templates - 1) + " (rows " +
               std::to_string(last_bottom - p.roi.height) + ".." + std::to_string(last_bottom - 1) +
               ", template_roi_step " + std::to_string(p.template_roi_step) + ") runs past the " + sz(p.frame) +
               " frame";
    return {};
}

}  // namespace corrtrack
