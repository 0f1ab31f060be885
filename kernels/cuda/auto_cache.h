// auto's timing cache on disk (as cuBLASLt, cuDNN and TensorRT keep theirs): the winner of
// each bucket of problem shapes, with its measured times, so that a second run on the same
// machine starts warm instead of timing again. Plain C++ (no CUDA): the GPU side
// (auto_select.cu) fills in the identity and calls load/store; everything here is unit-tested
// without a GPU (kernels/tests/test_auto_cache.cpp).
//
// One file per identity (GPU, driver, runtime, build): <dir>/auto-<hash of the identity>.json,
// written atomically (a unique temp file in the same directory, then rename), with a format
// version and a checksum of its payload. A file that is missing is a cold start; one that is
// unreadable, truncated, corrupt, of another format or version, of another identity, or whose
// checksum does not match is ignored with a warning and never trusted. A directory that cannot
// be written is a warning, never an error: the run goes on with what it measured.
// Thread rules: the free functions are reentrant; callers serialize their own state.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace corrtrack {

// What a cached choice is only valid for. Every field takes part in the file name's hash and
// is checked again inside the file.
struct AutoCacheIdentity {
    std::string gpu_name;        // cudaDeviceProp::name
    std::string gpu_id;          // the GPU's UUID (or its PCI id where there is none)
    int compute_capability = 0;  // major * 10 + minor
    int driver_version = 0;      // cudaDriverGetVersion
    int runtime_version = 0;     // cudaRuntimeGetVersion
    std::string build_id;        // the library's revision and kernel set
    bool operator==(const AutoCacheIdentity& o) const;
    bool operator!=(const AutoCacheIdentity& o) const { return !(*this == o); }
};

// A bucket of problem shapes (auto_select.cu's ShapeKey less the device) and its winner.
// templ_w, templ_h: the template's sides rounded up to a few sizes; positions, templates:
// half-octave indices of the output positions (times the templates) and of the template
// count, floor(2 log2 n), so one template is bucket 0 (auto_cache_bucket).
struct AutoCacheEntry {
    int templ_w = 0, templ_h = 0, positions = 0, templates = 0, shared_roi = 0;
    std::string kernel;
    std::vector<std::pair<std::string, float>> times_ms;  // every candidate timed, fastest first
    bool same_bucket(const AutoCacheEntry& o) const {
        return templ_w == o.templ_w && templ_h == o.templ_h && positions == o.positions && templates == o.templates &&
               shared_roi == o.shared_roi;
    }
};

// The bucket of a problem: templ_w x templ_h templates, `positions` output positions in all,
// `templates` of them stacked (shared_roi: all read one region). Problems of one bucket take
// the same winner; auto_select.cu keys its choices by it, in memory and on disk.
AutoCacheEntry auto_cache_bucket(int templ_w, int templ_h, double positions, int templates, bool shared_roi);

// Where the cache lives and whether it is used: CORRTRACK_NO_CACHE=1 (or `--no-cache`, which
// sets it) turns it off; CORRTRACK_CACHE_DIR, else $XDG_CACHE_HOME/corrtrack, else
// $HOME/.cache/corrtrack. Disabled (with an empty dir) when none of them gives a directory.
struct AutoCacheSettings {
    bool enabled = false;
    std::string dir;
};
AutoCacheSettings auto_cache_settings_from_env();

// The file of this identity in `dir`.
std::string auto_cache_path(const std::string& dir, const AutoCacheIdentity& id);

// The entries of the file at `path` for `id`. A missing file: empty, no warning. Any other
// failure: empty, and *warning says what was wrong and that the file is ignored.
std::vector<AutoCacheEntry> load_auto_cache(const std::string& path, const AutoCacheIdentity& id, std::string* warning);

// Merges `entries` into the file at `path` (what is there for `id` and is valid stays, the
// same bucket is replaced) and writes it atomically, creating the directory if needed. At most
// `max_entries` are kept (the given ones first). False, with *warning, where it cannot write.
bool store_auto_cache(const std::string& path, const AutoCacheIdentity& id, const std::vector<AutoCacheEntry>& entries,
                      std::size_t max_entries, std::string* warning);

}  // namespace corrtrack
