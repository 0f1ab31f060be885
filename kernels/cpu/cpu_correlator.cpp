#include <cstring>

#include "cpu/cpu_kernels.h"

namespace corrtrack {

bool CpuCorrelator::supports(const NccProblem& p, std::string* why) const {
    const std::string err = validate_problem(p);
    if (why) *why = err;
    return err.empty();
}

void CpuCorrelator::copy_template(ImageView templ) {
    templ_.resize(static_cast<std::size_t>(templ.width) * templ.height);
    for (int y = 0; y < templ.height; ++y)
        std::memcpy(&templ_[static_cast<std::size_t>(y) * templ.width], templ.row(y), templ.width);
}

}  // namespace corrtrack
