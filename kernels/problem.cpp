// Problem validation shared by all kernels.
#include "corrtrack/correlator.h"
#include "corrtrack/ncc_math.h"

namespace corrtrack {

std::string validate_problem(const NccProblem& p) {
    const auto sz = [](Size s) { return std::to_string(s.width) + "x" + std::to_string(s.height); };
    if (p.frame.width <= 0 || p.frame.height <= 0) return "empty frame";
    if (p.templ.width < 1 || p.templ.height < 1) return "empty template";
    if (p.templ.width > kMaxTemplateSide || p.templ.height > kMaxTemplateSide)
        return "template " + sz(p.templ) + " exceeds the supported " +
               std::to_string(kMaxTemplateSide) + "x" + std::to_string(kMaxTemplateSide);
    if (!p.roi.inside(p.frame)) return "search region lies outside the " + sz(p.frame) + " frame";
    if (p.templ.width > p.roi.width || p.templ.height > p.roi.height)
        return "template " + sz(p.templ) + " is larger than the search region " +
               sz({p.roi.width, p.roi.height});
    if (p.templates < 1) return "no templates";
    return {};
}

}  // namespace corrtrack
