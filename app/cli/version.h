// The one version of corrtrack: CMake's project(VERSION) and the git revision at configure
// time, compiled into version.cpp only (app/CMakeLists.txt), shared by the CLI and Python.
#pragma once

#include <string>

namespace corrtrack {

const char* corrtrack_version();   // "0.1.0"
const char* corrtrack_revision();  // short git hash, "unknown" when built outside git
// `corrtrack --version`: version, revision, CUDA runtime/GPU and the kernels usable here.
std::string version_text();

}  // namespace corrtrack
