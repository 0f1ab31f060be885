// CORRTRACK_CLONES: a hot loop of the tracker compiled twice, with an AVX2 clone picked at load
// time where the CPU has one (no FMA, so the same floats) and a portable default. Called
// through the clones' resolver, so never inlined (clang refuses noinline with it); the file
// also needs -O3 to vectorize (app/CMakeLists.txt). No clones under the sanitizers: their
// ifunc resolver runs before the sanitizer's runtime is up (TSan's test binaries crashed at
// start).
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CORRTRACK_NO_CLONES 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define CORRTRACK_NO_CLONES 1
#endif
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(CORRTRACK_NO_CLONES)
#define CORRTRACK_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CORRTRACK_CLONES __attribute__((noinline))
#endif

// Hand-written AVX2 paths (intrinsics in a target("avx2") function, picked at run time with
// __builtin_cpu_supports): for loops the compiler will not vectorize, such as gathers.
#if defined(__x86_64__) && defined(__GNUC__)
#define CORRTRACK_HAVE_AVX2_PATH 1
#else
#define CORRTRACK_HAVE_AVX2_PATH 0
#endif
