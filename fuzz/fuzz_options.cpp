// Fuzz target: the command line. The bytes are NUL-separated arguments for
// `corrtrack ...`; they go through CLI11, every option check, box parsing, box files and the
// output-path checks, then stop before anything is opened or written (dry run). Every outcome
// is one of the documented exit codes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "app/cli/commands.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::string> args{"corrtrack"};
    std::string cur;
    for (std::size_t i = 0; i < size && args.size() < 40; ++i) {
        if (data[i] == 0) {
            args.push_back(cur);
            cur.clear();
        } else if (cur.size() < 512) {
            cur += static_cast<char>(data[i]);
        }
    }
    if (!cur.empty() && args.size() < 40) args.push_back(cur);
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    const int rc = corrtrack::run_command_line(static_cast<int>(argv.size()), argv.data(), true);
    if (rc != 0 && rc != 1 && rc != 2) std::abort();
    return 0;
}
