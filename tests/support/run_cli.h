// Runs the corrtrack binary as a user would and captures its exit status and output.
// Thread rules: plain function.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace corrtrack::test {

struct CliResult {
    int exit_code = -1;     // the process's exit status
    bool signalled = false; // it died of a signal (a crash)
    std::string out, err;
};

inline std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// args are passed to the shell as written (quote them yourself where needed).
inline CliResult run_cli(const std::string& args, const std::string& scratch_dir) {
    const std::string out = scratch_dir + "/cli_stdout.txt", err = scratch_dir + "/cli_stderr.txt";
    const std::string cmd = std::string("timeout 600 ") + CORRTRACK_BINARY + " " + args + " >" + out + " 2>" + err + " </dev/null";
    const int status = std::system(cmd.c_str());
    CliResult r;
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    // timeout(1) reports a signal of its child as 128+N; treat those as crashes too.
    r.signalled = WIFSIGNALED(status) || (r.exit_code > 128 && r.exit_code < 160) || r.exit_code == 124;
    r.out = read_text(out);
    r.err = read_text(err);
    return r;
}

}  // namespace corrtrack::test
