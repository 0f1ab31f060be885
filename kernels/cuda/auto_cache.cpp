// auto's timing cache on disk (auto_cache.h).
#include "cuda/auto_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

namespace corrtrack {
namespace {

constexpr const char* kFormat = "corrtrack-auto-cache";
constexpr int kFormatVersion = 1;
constexpr std::size_t kMaxFileBytes = 1 << 20;  // a real file is a few kB: anything larger is not ours

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

int side_bucket(int v) {
    for (int b : {4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192})
        if (v <= b) return b;
    return 256;
}

int half_octave(double v) { return static_cast<int>(std::floor(2.0 * std::log2(std::max(1.0, v)))); }

// FNV-1a, 64 bits: enough to tell a damaged or hand-edited file, not a security measure.
std::uint64_t fnv1a(const std::string& s) {
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

std::string hex64(std::uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

nlohmann::json identity_json(const AutoCacheIdentity& id) {
    return {{"gpu_name", id.gpu_name},
            {"gpu_id", id.gpu_id},
            {"compute_capability", id.compute_capability},
            {"driver_version", id.driver_version},
            {"runtime_version", id.runtime_version},
            {"build_id", id.build_id}};
}

nlohmann::json entry_json(const AutoCacheEntry& e) {
    nlohmann::json times = nlohmann::json::array();
    for (const auto& [name, ms] : e.times_ms) times.push_back({name, ms});
    return {{"templ_w", e.templ_w},     {"templ_h", e.templ_h},       {"positions", e.positions},
            {"templates", e.templates}, {"shared_roi", e.shared_roi}, {"kernel", e.kernel},
            {"times_ms", times}};
}

// Throws (nlohmann's type errors) on a malformed entry: the caller ignores the whole file.
AutoCacheEntry entry_from(const nlohmann::json& j) {
    AutoCacheEntry e;
    e.templ_w = j.at("templ_w").get<int>();
    e.templ_h = j.at("templ_h").get<int>();
    e.positions = j.at("positions").get<int>();
    e.templates = j.at("templates").get<int>();
    e.shared_roi = j.at("shared_roi").get<int>();
    e.kernel = j.at("kernel").get<std::string>();
    for (const auto& t : j.at("times_ms")) e.times_ms.emplace_back(t.at(0).get<std::string>(), t.at(1).get<float>());
    // positions and templates are bucket indices: 0 is one template (or one position).
    if (e.kernel.empty() || e.templ_w <= 0 || e.templ_h <= 0 || e.positions < 0 || e.templates < 0)
        throw std::runtime_error("an entry without a kernel or with an empty shape");
    return e;
}

// The checksum covers the payload exactly as dumped (nlohmann sorts object keys, so the dump
// of the parsed payload is the dump that was written).
std::string checksum_of(const nlohmann::json& payload) { return hex64(fnv1a(payload.dump())); }

bool make_dirs(const std::string& dir, std::string* why) {
    std::string partial;
    std::stringstream parts(dir);
    std::string part;
    if (!dir.empty() && dir[0] == '/') partial = "/";
    while (std::getline(parts, part, '/')) {
        if (part.empty()) continue;
        partial += part;
        if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
            *why = "cannot create " + partial + ": " + std::strerror(errno);
            return false;
        }
        partial += "/";
    }
    return true;
}

}  // namespace

AutoCacheEntry auto_cache_bucket(int templ_w, int templ_h, double positions, int templates, bool shared_roi) {
    AutoCacheEntry e;
    e.templ_w = side_bucket(templ_w);
    e.templ_h = side_bucket(templ_h);
    e.positions = half_octave(positions);
    e.templates = half_octave(templates);
    e.shared_roi = shared_roi;
    return e;
}

bool AutoCacheIdentity::operator==(const AutoCacheIdentity& o) const {
    return gpu_name == o.gpu_name && gpu_id == o.gpu_id && compute_capability == o.compute_capability &&
           driver_version == o.driver_version && runtime_version == o.runtime_version && build_id == o.build_id;
}

AutoCacheSettings auto_cache_settings_from_env() {
    AutoCacheSettings s;
    const std::string off = env("CORRTRACK_NO_CACHE");
    if (!off.empty() && off != "0") return s;
    if (std::string dir = env("CORRTRACK_CACHE_DIR"); !dir.empty())
        s.dir = dir;
    else if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty())
        s.dir = xdg + "/corrtrack";
    else if (std::string home = env("HOME"); !home.empty())
        s.dir = home + "/.cache/corrtrack";
    s.enabled = !s.dir.empty();
    return s;
}

std::string auto_cache_path(const std::string& dir, const AutoCacheIdentity& id) {
    return dir + "/auto-" + hex64(fnv1a(identity_json(id).dump())) + ".json";
}

std::vector<AutoCacheEntry> load_auto_cache(const std::string& path, const AutoCacheIdentity& id,
                                            std::string* warning) {
    std::vector<AutoCacheEntry> entries;
    auto ignore = [&](const std::string& why) {
        if (warning) *warning = "auto's timing cache " + path + " is ignored (" + why + "); kernels are timed again";
        return std::vector<AutoCacheEntry>{};
    };
    if (warning) warning->clear();
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return entries;  // a cold start
        return ignore(std::string("cannot read it: ") + std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) return ignore("not a regular file");
    if (static_cast<std::size_t>(st.st_size) > kMaxFileBytes) return ignore("larger than any cache file");
    try {
        std::ifstream in(path, std::ios::binary);
        if (!in) return ignore(std::string("cannot open it: ") + std::strerror(errno));
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (in.bad()) return ignore("a read error");
        const nlohmann::json doc = nlohmann::json::parse(text);
        if (!doc.is_object() || doc.value("format", "") != kFormat) return ignore("not a corrtrack auto cache");
        if (doc.value("version", 0) != kFormatVersion)
            return ignore("format version " + std::to_string(doc.value("version", 0)) + ", this build reads " +
                          std::to_string(kFormatVersion));
        const nlohmann::json& payload = doc.at("payload");
        if (doc.at("checksum").get<std::string>() != checksum_of(payload)) return ignore("its checksum does not match");
        if (payload.at("identity") != identity_json(id)) return ignore("written for another GPU, driver or build");
        for (const auto& e : payload.at("entries")) entries.push_back(entry_from(e));
    } catch (const std::exception& ex) {  // a parse or type error, or a read that threw
        return ignore(std::string("damaged: ") + ex.what());
    }
    return entries;
}

bool store_auto_cache(const std::string& path, const AutoCacheIdentity& id, const std::vector<AutoCacheEntry>& entries,
                      std::size_t max_entries, std::string* warning) {
    if (warning) warning->clear();
    auto fail = [&](const std::string& why) {
        if (warning) *warning = "auto's timing cache " + path + " was not written (" + why + ")";
        return false;
    };
    const std::size_t slash = path.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
    if (std::string why; !make_dirs(dir, &why)) return fail(why);
    // What another process wrote since (a damaged or foreign file is replaced, not merged).
    std::string ignored;
    std::vector<AutoCacheEntry> merged = entries;
    for (const AutoCacheEntry& old : load_auto_cache(path, id, &ignored)) {
        bool replaced = false;
        for (const AutoCacheEntry& e : entries) replaced = replaced || e.same_bucket(old);
        if (!replaced && merged.size() < max_entries) merged.push_back(old);
    }
    if (merged.size() > max_entries) merged.resize(max_entries);
    nlohmann::json list = nlohmann::json::array();
    for (const AutoCacheEntry& e : merged) list.push_back(entry_json(e));
    const nlohmann::json payload = {{"identity", identity_json(id)}, {"entries", list}};
    const nlohmann::json doc = {
        {"format", kFormat}, {"version", kFormatVersion}, {"checksum", checksum_of(payload)}, {"payload", payload}};
    // A temp name no other writer uses (process, thread, a counter), then an atomic rename:
    // a reader sees the old file or the new one, never a part.
    static std::atomic<unsigned> counter{0};
    const std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." +
                            std::to_string(std::hash<std::thread::id>()(std::this_thread::get_id()) % 1000000) + "." +
                            std::to_string(counter++);
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) return fail(std::string("cannot create ") + tmp + ": " + std::strerror(errno));
        out << doc.dump(1) << '\n';
        out.flush();
        if (!out) {
            out.close();
            std::remove(tmp.c_str());
            return fail("a write error (disk full?)");
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        std::remove(tmp.c_str());
        return fail("cannot rename the temp file: " + why);
    }
    return true;
}

}  // namespace corrtrack
