#include "app/bench/problem_space.h"

#include <algorithm>
#include <iterator>

namespace corrtrack::bench {

std::vector<KernelCase> Plan::cases() const {
    std::vector<KernelCase> out;
    for (Size s : sizes)
        for (Size t : templates)
            for (Mode m : modes) out.push_back(KernelCase{s, t, m});
    return out;
}

namespace {

bool plan_kernels(const BenchOptions& o, Plan* plan, std::string* error) {
    if (o.kernels.empty()) {
        for (const KernelEntry& e : kernel_registry())
            if (std::string(e.name) != "auto" && e.available()) plan->kernels.push_back(&e);
    } else {
        const std::vector<std::string> names = split_list(o.kernels);
        for (const std::string& name : names) {
            if (!find_kernel(name)) {
                *error = unknown_kernel_message(name, "--kernels");
                return false;
            }
        }
        for (const auto* list : {&kernel_registry(), &kernel_variants()})
            for (const KernelEntry& e : *list)
                if (std::find(names.begin(), names.end(), e.name) != names.end()) plan->kernels.push_back(&e);
    }
    if (o.variants)
        for (const KernelEntry& e : kernel_variants())
            if (e.available() && std::find(plan->kernels.begin(), plan->kernels.end(), &e) == plan->kernels.end())
                plan->kernels.push_back(&e);
    if (plan->kernels.empty()) {
        *error = "--kernels: no kernel to run";
        return false;
    }
    return true;
}

bool plan_grid(const BenchOptions& o, Plan* plan, std::string* error) {
    for (const std::string& s : split_list(o.sizes)) {
        Size size;
        if (!parse_size(s, false, &size)) {
            *error = "--sizes: malformed frame size '" + s + "' (expected WIDTHxHEIGHT, e.g. 1920x1080)";
            return false;
        }
        if (size.width > kMaxFrameSide || size.height > kMaxFrameSide || size.area() > kMaxFrameArea) {
            *error = "--sizes: frame size '" + s + "' is too large (at most " + std::to_string(kMaxFrameSide) +
                     " a side and " + std::to_string(kMaxFrameArea) + " pixels)";
            return false;
        }
        plan->sizes.push_back(size);
    }
    for (const std::string& s : split_list(o.templates)) {
        Size size;
        if (!parse_size(s, true, &size)) {
            *error = "--templates: malformed template size '" + s + "' (expected N or WIDTHxHEIGHT, e.g. 32 or 48x24)";
            return false;
        }
        if (size.width > kMaxFrameSide || size.height > kMaxFrameSide) {
            *error = "--templates: template size '" + s + "' is too large (at most " + std::to_string(kMaxFrameSide) +
                     " a side)";
            return false;
        }
        plan->templates.push_back(size);
    }
    for (const std::string& s : split_list(o.modes)) {
        if (s != "full" && s != "window") {
            *error = "--modes: unknown mode '" + s + "' (expected full and/or window)";
            return false;
        }
        const Mode m = s == "full" ? Mode::kFull : Mode::kWindow;
        if (std::find(plan->modes.begin(), plan->modes.end(), m) == plan->modes.end()) plan->modes.push_back(m);
    }
    if (plan->sizes.empty() || plan->templates.empty() || plan->modes.empty()) {
        *error = "--sizes, --templates and --modes each need at least one entry";
        return false;
    }
    return true;
}

}  // namespace

bool make_plan(const BenchOptions& o, Plan* plan, std::string* error) {
    if (!plan_kernels(o, plan, error) || !plan_grid(o, plan, error)) return false;
    for (const std::string& name : o.ratio_to) {
        if (!find_kernel(name)) {
            *error = unknown_kernel_message(name, "--ratio-to");
            return false;
        }
        if (std::find(plan->ratio_to.begin(), plan->ratio_to.end(), name) == plan->ratio_to.end() &&
            std::find(std::begin(kBaselines), std::end(kBaselines), name) == std::end(kBaselines))
            plan->ratio_to.push_back(name);
    }
    const auto by_area = [](Size a, Size b) { return a.area() < b.area(); };
    const auto dedupe = [](std::vector<Size>& v) {
        std::vector<Size> u;
        for (Size s : v)
            if (std::find(u.begin(), u.end(), s) == u.end()) u.push_back(s);
        v = u;
    };
    dedupe(plan->sizes);
    dedupe(plan->templates);
    std::stable_sort(plan->sizes.begin(), plan->sizes.end(), by_area);
    std::stable_sort(plan->templates.begin(), plan->templates.end(), by_area);
    if (o.batch < 0 || o.batch > kMaxBatch) {
        *error = "--batch must be between 0 (off) and " + std::to_string(kMaxBatch);
        return false;
    }
    if (o.runs < 1 || o.warmup < 0 || !(o.max_seconds > 0) || o.max_total_seconds < 0 || o.hang_seconds < 0 ||
        o.peak_gmacs < 0) {
        *error =
            "--runs must be >= 1, --warmup >= 0, --max-seconds > 0; --max-total-seconds, --hang-seconds "
            "and --peak-gmacs >= 0";
        return false;
    }
    return true;
}

}  // namespace corrtrack::bench
