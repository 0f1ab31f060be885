// Runs the corrtrack binary as a user would and captures its exit status and output; or
// starts it in the background for tests that signal it.
// $CORRTRACK_TEST_BINARY replaces the binary under test (e.g. an older build, to show that a
// regression test fails there).
// Thread rules: plain functions.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace corrtrack::test {

struct CliResult {
    int exit_code = -1;      // the process's exit status
    bool signalled = false;  // it died of a signal (a crash) or hung
    std::string out, err;
};

inline std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline std::string binary_under_test() {
    const char* env = std::getenv("CORRTRACK_TEST_BINARY");
    return env && *env ? env : CORRTRACK_BINARY;
}

// args are passed to the shell as written (quote them yourself where needed).
inline CliResult run_cli(const std::string& args, const std::string& scratch_dir) {
    const std::string out = scratch_dir + "/cli_stdout.txt", err = scratch_dir + "/cli_stderr.txt";
    const std::string cmd =
        "timeout 600 " + binary_under_test() + " " + args + " >" + out + " 2>" + err + " </dev/null";
    const int status = std::system(cmd.c_str());
    CliResult r;
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    // timeout(1) reports a signal of its child as 128+N; treat those as crashes too.
    r.signalled = WIFSIGNALED(status) || (r.exit_code > 128 && r.exit_code < 160) || r.exit_code == 124;
    r.out = read_text(out);
    r.err = read_text(err);
    return r;
}

// A corrtrack process in the background: stdout and stderr go to files in scratch_dir,
// standard input is stdin_fd (-1: /dev/null).
struct Spawned {
    pid_t pid = -1;
    std::string out, err;
};

inline Spawned spawn_cli(const std::vector<std::string>& args, const std::string& scratch_dir,
                         const std::string& tag = "bg", int stdin_fd = -1) {
    Spawned s;
    s.out = scratch_dir + "/" + tag + "_stdout.txt";
    s.err = scratch_dir + "/" + tag + "_stderr.txt";
    const std::string binary = binary_under_test();
    std::vector<std::string> argv_store{binary};
    argv_store.insert(argv_store.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : argv_store) argv.push_back(a.data());
    argv.push_back(nullptr);
    s.pid = fork();
    if (s.pid == 0) {
        const int in = stdin_fd >= 0 ? stdin_fd : open("/dev/null", O_RDONLY);
        const int out = open(s.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = open(s.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0 || err < 0) _exit(127);
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        // The parent's handlers and mask must not leak into the child.
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        execv(binary.c_str(), argv.data());
        _exit(127);
    }
    return s;
}

// Waits up to timeout_s for the process; a process still running then is killed and reported
// as hung (signalled, exit_code -1).
inline CliResult wait_cli(const Spawned& s, double timeout_s) {
    CliResult r;
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    int status = 0;
    for (;;) {
        const pid_t done = waitpid(s.pid, &status, WNOHANG);
        if (done == s.pid) break;
        if (done < 0 || std::chrono::steady_clock::now() > until) {
            kill(s.pid, SIGKILL);
            waitpid(s.pid, &status, 0);
            r.signalled = true;
            r.out = read_text(s.out);
            r.err = read_text(s.err);
            return r;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    r.signalled = WIFSIGNALED(status);
    r.out = read_text(s.out);
    r.err = read_text(s.err);
    return r;
}

}  // namespace corrtrack::test
