// LD_PRELOAD helper: on SIGSEGV print the native backtrace to stderr (addresses to resolve
// with addr2line against the same binary), then die as before.
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <unistd.h>
static void on_segv(int sig) {
  void* frames[64];
  int n = backtrace(frames, 64);
  backtrace_symbols_fd(frames, n, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}
__attribute__((constructor)) static void install(void) { signal(SIGSEGV, on_segv); }
