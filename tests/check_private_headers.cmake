# ctest private_headers: nothing outside kernels/ includes the kernel library's private headers
# (kernels/cpu/*, kernels/cuda/*); the public ones are kernels/include/corrtrack/*. The library's
# white-box tests live inside it (kernels/tests/), so there are no exceptions.
# Run: cmake -DSOURCE_DIR=<repo> -P tests/check_private_headers.cmake
cmake_minimum_required(VERSION 3.20)
file(GLOB_RECURSE files RELATIVE "${SOURCE_DIR}"
  "${SOURCE_DIR}/app/*" "${SOURCE_DIR}/main/*" "${SOURCE_DIR}/render/*" "${SOURCE_DIR}/python/src/*"
  "${SOURCE_DIR}/tests/*" "${SOURCE_DIR}/fuzz/*" "${SOURCE_DIR}/examples/*")
set(bad "")
foreach(f IN LISTS files)
  if(NOT f MATCHES "\\.(c|cc|cpp|cu|h|hpp|cuh)$")
    continue()
  endif()
  file(STRINGS "${SOURCE_DIR}/${f}" hits REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<](kernels/)?(cpu|cuda)/")
  foreach(h IN LISTS hits)
    string(APPEND bad "  ${f}: ${h}\n")
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "private kernel headers included outside kernels/ (use corrtrack/*.h):\n${bad}")
endif()
