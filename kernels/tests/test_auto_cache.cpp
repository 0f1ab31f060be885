// auto's timing cache on disk (cuda/auto_cache.h), without a GPU: a round trip, every kind of
// bad file ignored with a warning, an unwritable directory, two processes writing at once, and
// the environment that places or disables it.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cuda/auto_cache.h"

namespace corrtrack {
namespace {

namespace fs = std::filesystem;

AutoCacheIdentity identity() {
    AutoCacheIdentity id;
    id.gpu_name = "NVIDIA H200";
    id.gpu_id = "GPU-0123-4567";
    id.compute_capability = 90;
    id.driver_version = 13000;
    id.runtime_version = 13000;
    id.build_id = "abc123:kernels-9f";
    return id;
}

AutoCacheEntry entry(int templates, const std::string& kernel) {
    AutoCacheEntry e;
    e.templ_w = 48;
    e.templ_h = 48;
    e.positions = 30;
    e.templates = templates;
    e.kernel = kernel;
    e.times_ms = {{kernel, 0.125f}, {"cuda_dp4a_ilp", 0.5f}};
    return e;
}

struct TempDir {
    TempDir() {
        char name[] = "/tmp/corrtrack_auto_cache_XXXXXX";
        path = mkdtemp(name);
    }
    ~TempDir() { fs::remove_all(path); }
    std::string path;
};

std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
void write_text(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// A file written by store comes back entry for entry, times included.
TEST(AutoCache, RoundTrip) {
    TempDir dir;
    const std::string path = auto_cache_path(dir.path + "/sub/dir", identity());
    std::string warning;
    ASSERT_TRUE(
        store_auto_cache(path, identity(), {entry(16, "cuda_mma_fused_w4"), entry(1, "cuda_fft")}, 64, &warning))
        << warning;
    const std::vector<AutoCacheEntry> got = load_auto_cache(path, identity(), &warning);
    EXPECT_TRUE(warning.empty()) << warning;
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].kernel, "cuda_mma_fused_w4");
    EXPECT_EQ(got[0].templates, 16);
    EXPECT_EQ(got[1].kernel, "cuda_fft");
    ASSERT_EQ(got[0].times_ms.size(), 2u);
    EXPECT_FLOAT_EQ(got[0].times_ms[0].second, 0.125f);
    EXPECT_EQ(got[0].times_ms[1].first, "cuda_dp4a_ilp");
    for (const auto& f : fs::directory_iterator(dir.path + "/sub/dir"))  // no temp file left behind
        EXPECT_EQ(f.path().string(), path);
}

// Buckets are half-octave indices: one template is bucket 0, and a cache that holds it (every
// single-target run has one) is as valid as any other. It was once read back as "damaged"
// and dropped whole, so such runs never started warm.
TEST(AutoCache, OneTemplateBucketsComeBack) {
    const AutoCacheEntry one = auto_cache_bucket(32, 32, 49.0 * 49.0, 1, false);
    EXPECT_EQ(one.templates, 0);
    EXPECT_EQ(one.templ_w, 32);
    EXPECT_EQ(one.positions, 22);  // floor(2 log2 2401)
    const AutoCacheEntry stacked = auto_cache_bucket(40, 20, 49.0 * 49.0 * 256, 256, false);
    EXPECT_EQ(stacked.templates, 16);
    EXPECT_EQ(stacked.templ_w, 48);
    EXPECT_EQ(stacked.templ_h, 24);
    const AutoCacheEntry single_position = auto_cache_bucket(16, 16, 1.0, 1, false);
    EXPECT_EQ(single_position.positions, 0);

    TempDir dir;
    const std::string path = auto_cache_path(dir.path, identity());
    std::vector<AutoCacheEntry> entries{one, stacked, single_position};
    for (AutoCacheEntry& e : entries) e.kernel = "cuda_mma_fused";
    entries[2].kernel = "cuda_shared";
    std::string warning;
    ASSERT_TRUE(store_auto_cache(path, identity(), entries, 64, &warning)) << warning;
    const std::vector<AutoCacheEntry> got = load_auto_cache(path, identity(), &warning);
    EXPECT_TRUE(warning.empty()) << warning;
    ASSERT_EQ(got.size(), 3u);
    for (std::size_t i = 0; i < got.size(); ++i) {
        EXPECT_TRUE(got[i].same_bucket(entries[i])) << i;
        EXPECT_EQ(got[i].kernel, entries[i].kernel) << i;
    }
}

TEST(AutoCache, MissingFileIsAColdStartWithoutWarning) {
    TempDir dir;
    std::string warning = "x";
    EXPECT_TRUE(load_auto_cache(auto_cache_path(dir.path, identity()), identity(), &warning).empty());
    EXPECT_TRUE(warning.empty()) << warning;
}

// Another GPU, driver or build gets its own file name, and a file copied under another's name
// is refused by the identity inside it.
TEST(AutoCache, KeyedByGpuDriverAndBuild) {
    TempDir dir;
    AutoCacheIdentity other_gpu = identity(), other_build = identity(), other_driver = identity();
    other_gpu.gpu_id = "GPU-ffff";
    other_build.build_id = "def456:kernels-9f";
    other_driver.driver_version = 13010;
    const std::string path = auto_cache_path(dir.path, identity());
    for (const AutoCacheIdentity& o : {other_gpu, other_build, other_driver})
        EXPECT_NE(auto_cache_path(dir.path, o), path);
    std::string warning;
    ASSERT_TRUE(store_auto_cache(path, identity(), {entry(16, "cuda_mma_fused_w4")}, 64, &warning)) << warning;
    for (const AutoCacheIdentity& o : {other_gpu, other_build, other_driver}) {
        EXPECT_TRUE(load_auto_cache(path, o, &warning).empty());
        EXPECT_NE(warning.find("another GPU, driver or build"), std::string::npos) << warning;
    }
}

// Damaged files of every kind: nothing is trusted, one warning says why.
TEST(AutoCache, BadFilesIgnoredWithAWarning) {
    TempDir dir;
    const std::string path = auto_cache_path(dir.path, identity());
    std::string warning;
    ASSERT_TRUE(store_auto_cache(path, identity(), {entry(16, "cuda_mma_fused_w4")}, 64, &warning)) << warning;
    const std::string good = read_text(path);
    std::string edited = good;
    edited.replace(edited.find("cuda_mma_fused_w4"), 17, "cuda_mma_fused_w8");  // the checksum no longer matches
    std::string version = good;
    version.replace(version.find("\"version\": 1"), 12, "\"version\": 9");
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"truncated", good.substr(0, good.size() / 2)},
        {"garbage", std::string("\x7f"
                                "ELF\x01\x02\0\0garbage",
                                16)},
        {"empty", ""},
        {"edited", edited},
        {"version", version},
        {"other json", "{\"format\": \"something else\"}"},
        {"array", "[1, 2, 3]"},
    };
    for (const auto& [what, text] : bad) {
        write_text(path, text);
        warning.clear();
        EXPECT_TRUE(load_auto_cache(path, identity(), &warning).empty()) << what;
        EXPECT_NE(warning.find("is ignored"), std::string::npos) << what << ": " << warning;
    }
    // A directory where the file should be: unreadable, ignored, no crash.
    fs::remove(path);
    fs::create_directory(path);
    EXPECT_TRUE(load_auto_cache(path, identity(), &warning).empty());
    EXPECT_FALSE(warning.empty());
    fs::remove(path);
    // A store over a damaged file replaces it with a good one.
    write_text(path, good.substr(0, 10));
    ASSERT_TRUE(store_auto_cache(path, identity(), {entry(1, "cuda_fft")}, 64, &warning)) << warning;
    const auto got = load_auto_cache(path, identity(), &warning);
    EXPECT_TRUE(warning.empty()) << warning;
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].kernel, "cuda_fft");
}

// A directory that cannot be made or written: a warning and false, never a throw.
TEST(AutoCache, UnwritableDirectoryIsAWarning) {
    TempDir dir;
    write_text(dir.path + "/a_file", "x");  // a path through a regular file fails even for root
    const std::string path = auto_cache_path(dir.path + "/a_file/cache", identity());
    std::string warning;
    EXPECT_FALSE(store_auto_cache(path, identity(), {entry(16, "cuda_mma_fused_w4")}, 64, &warning));
    EXPECT_NE(warning.find("was not written"), std::string::npos) << warning;
}

// Stores merge with what is there (a bucket measured again replaces its entry) and keep the
// newest entries within the bound.
TEST(AutoCache, StoresMergeAndStayBounded) {
    TempDir dir;
    const std::string path = auto_cache_path(dir.path, identity());
    std::string warning;
    ASSERT_TRUE(store_auto_cache(path, identity(), {entry(16, "cuda_mma_fused_w4")}, 64, &warning));
    ASSERT_TRUE(store_auto_cache(path, identity(), {entry(1, "cuda_fft")}, 64, &warning));
    ASSERT_TRUE(store_auto_cache(path, identity(), {entry(16, "cuda_dp4a_ilp")}, 64, &warning));
    auto got = load_auto_cache(path, identity(), &warning);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].kernel, "cuda_dp4a_ilp");  // the newest first, the replaced one gone
    EXPECT_EQ(got[1].kernel, "cuda_fft");
    for (int k = 2; k < 10; ++k) ASSERT_TRUE(store_auto_cache(path, identity(), {entry(k, "cuda_fft")}, 4, &warning));
    got = load_auto_cache(path, identity(), &warning);
    ASSERT_EQ(got.size(), 4u);
    EXPECT_EQ(got[0].templates, 9);
}

// Two processes storing at once, a third reading all along: every read sees a whole file
// (atomic rename), and the file is good at the end.
TEST(AutoCache, ConcurrentWritersNeverLeaveADamagedFile) {
    TempDir dir;
    const std::string path = auto_cache_path(dir.path, identity());
    std::vector<pid_t> writers;
    for (int w = 0; w < 2; ++w) {
        const pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            bool ok = true;
            for (int k = 0; k < 200; ++k) {
                std::string warning;
                ok = store_auto_cache(path, identity(), {entry(1 + (k % 8) + 8 * w, w ? "cuda_fft" : "cuda_mma")}, 64,
                                      &warning) &&
                     ok;
            }
            _exit(ok ? 0 : 1);
        }
        writers.push_back(pid);
    }
    int bad_reads = 0;
    for (int k = 0; k < 400; ++k) {
        std::string warning;
        load_auto_cache(path, identity(), &warning);
        if (!warning.empty()) ++bad_reads;
    }
    for (pid_t pid : writers) {
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    EXPECT_EQ(bad_reads, 0);
    std::string warning;
    const auto got = load_auto_cache(path, identity(), &warning);
    EXPECT_TRUE(warning.empty()) << warning;
    EXPECT_GE(got.size(), 8u);  // at least the last writer's 8 buckets
    for (const auto& f : fs::directory_iterator(dir.path)) EXPECT_EQ(f.path().string(), path);
}

// Environment variables restored after each case.
struct EnvGuard {
    explicit EnvGuard(std::vector<std::string> names) : names_(std::move(names)) {
        for (const std::string& n : names_) {
            const char* v = std::getenv(n.c_str());
            saved_.emplace_back(v != nullptr, v ? v : "");
            unsetenv(n.c_str());
        }
    }
    ~EnvGuard() {
        for (std::size_t i = 0; i < names_.size(); ++i)
            saved_[i].first ? setenv(names_[i].c_str(), saved_[i].second.c_str(), 1) : unsetenv(names_[i].c_str());
    }
    std::vector<std::string> names_;
    std::vector<std::pair<bool, std::string>> saved_;
};

TEST(AutoCache, PlacedAndDisabledByTheEnvironment) {
    EnvGuard guard({"CORRTRACK_NO_CACHE", "CORRTRACK_CACHE_DIR", "XDG_CACHE_HOME", "HOME"});
    setenv("HOME", "/home/u", 1);
    AutoCacheSettings s = auto_cache_settings_from_env();
    EXPECT_TRUE(s.enabled);
    EXPECT_EQ(s.dir, "/home/u/.cache/corrtrack");
    setenv("XDG_CACHE_HOME", "/xdg", 1);
    EXPECT_EQ(auto_cache_settings_from_env().dir, "/xdg/corrtrack");
    setenv("CORRTRACK_CACHE_DIR", "/mine", 1);
    EXPECT_EQ(auto_cache_settings_from_env().dir, "/mine");
    setenv("CORRTRACK_NO_CACHE", "0", 1);
    EXPECT_TRUE(auto_cache_settings_from_env().enabled);
    setenv("CORRTRACK_NO_CACHE", "1", 1);  // what --no-cache sets
    EXPECT_FALSE(auto_cache_settings_from_env().enabled);
    unsetenv("CORRTRACK_NO_CACHE");
    unsetenv("CORRTRACK_CACHE_DIR");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    EXPECT_FALSE(auto_cache_settings_from_env().enabled);  // nowhere to put it
}

}  // namespace
}  // namespace corrtrack
