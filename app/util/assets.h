// Where the binary finds its data files (the bundled sample and its box), with no path of the
// source tree compiled in: next to the executable, in <exe_dir>/<bin-to-data> as installed by
// `cmake --install` (by default <prefix>/bin/corrtrack and <prefix>/share/corrtrack/), and in
// <exe_dir>/../share/corrtrack, where the build copies them (build/app/corrtrack and
// build/share/corrtrack/).
// Thread rules: stateless.
#pragma once

#include <string>

namespace corrtrack {

// The directory of the running executable ("" when /proc/self/exe cannot be read).
std::string executable_dir();
// The full path of data file `name` in the first of those directories that holds it, else "".
std::string find_asset(const std::string& name);
// Every directory find_asset looks in, in order (for messages).
std::string asset_search_path();

}  // namespace corrtrack
