// The registry is the one place a kernel's name, device and summary are written: each kernel's
// own info() must report exactly the registry's line, availability comes with a reason, and
// "auto" resolves by one rule.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "corrtrack/correlator.h"

namespace corrtrack {
namespace {

TEST(KernelRegistry, EveryKernelsInfoIsItsRegistryLine) {
    int checked = 0;
    for (const auto* list : {&kernel_registry(), &kernel_variants()})
        for (const KernelEntry& e : *list) {
            if (!e.available()) continue;  // CUDA kernels are built only where a GPU is
            const auto k = e.create();
            ASSERT_NE(k, nullptr) << e.name;
            EXPECT_EQ(k->info().name, e.name);
            EXPECT_EQ(k->info().device, e.device) << e.name;
            // auto's summary turns into "auto -> <choice>" once it has run; before, it is the line.
            EXPECT_EQ(k->info().summary, e.summary) << e.name;
            ++checked;
        }
    EXPECT_GE(checked, 2);  // cpu_ref and cpu_fast run everywhere
}

TEST(KernelRegistry, RegistryInfoFindsVariantsAndRefusesUnknownNames) {
    const KernelInfo v = registry_info("cuda_dp4a_ilp_c8");
    EXPECT_EQ(v.name, "cuda_dp4a_ilp_c8");
    EXPECT_EQ(v.device, Device::kCuda);
    EXPECT_EQ(v.summary, find_kernel("cuda_dp4a_ilp_c8")->summary);
    EXPECT_THROW(registry_info("cuda_nonesuch"), std::logic_error);
}

TEST(KernelRegistry, UnavailableKernelsSayWhy) {
    for (const auto* list : {&kernel_registry(), &kernel_variants()})
        for (const KernelEntry& e : *list) {
            const std::string reason = unavailable_reason(e);
            EXPECT_EQ(reason.empty(), e.available()) << e.name << ": " << reason;
            if (e.device == Device::kCuda && !cuda_available()) EXPECT_EQ(reason, "no usable CUDA GPU") << e.name;
            if (e.device == Device::kCpu) EXPECT_EQ(reason.find("CUDA"), std::string::npos) << e.name << ": " << reason;
            if (!e.available()) {
                std::string why;
                EXPECT_EQ(make_correlator(e.name, &why), nullptr);
                EXPECT_NE(why.find(reason), std::string::npos) << why;
            }
        }
}

TEST(KernelRegistry, AutoResolvesByOneRule) {
    EXPECT_EQ(resolve_kernel("auto", false), "cpu_fast");
    EXPECT_EQ(resolve_kernel("auto", true), cuda_available() ? "auto" : "cpu_fast");
    EXPECT_EQ(resolve_kernel("cpu_ref", false), "cpu_ref");
    EXPECT_EQ(resolve_kernel("cuda_tex", false), "cuda_tex");  // only "auto" is rewritten
}

}  // namespace
}  // namespace corrtrack
