// `corrtrack --version`: the CMake project's version (passed in as CORRTRACK_PROJECT_VERSION,
// the same project(VERSION) the binary was built with), the git revision, the CUDA line and
// exactly the registry kernels that are available on this machine.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "corrtrack/correlator.h"
#include "tests/support/run_cli.h"
#include "tests/support/synthetic_clip.h"

namespace corrtrack {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
}

TEST(CliVersion, PrintsProjectVersionRevisionCudaAndAvailableKernels) {
    TempDir dir("cli_version");
    const auto r = test::run_cli("--version", dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;  // not a usage error, though no subcommand is given
    EXPECT_EQ(r.err, "");
    const auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), 4u) << r.out;
    EXPECT_EQ(lines[0], std::string("corrtrack ") + CORRTRACK_PROJECT_VERSION);
    // A short hash inside a git checkout (the tests run from one), else "unknown".
    EXPECT_TRUE(std::regex_match(lines[1], std::regex("revision: ([0-9a-f]{7,40}|unknown)"))) << lines[1];
    if (cuda_available())
        EXPECT_EQ(lines[2].rfind("cuda: runtime ", 0), 0u) << lines[2];
    else
        EXPECT_EQ(lines[2].rfind("cuda: no CUDA runtime/GPU", 0), 0u) << lines[2];
    std::string kernels = "kernels:";
    for (const KernelEntry& e : kernel_registry())
        if (e.available()) kernels += std::string(" ") + e.name;
    EXPECT_EQ(lines[3], kernels);
    EXPECT_NE(lines[3].find(" cpu_ref"), std::string::npos);  // the oracle runs everywhere
}

}  // namespace
}  // namespace corrtrack
