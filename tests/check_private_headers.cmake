# ctest private_headers: nothing outside kernels/ includes the kernel library's private headers
# (kernels/cpu/*, kernels/cuda/*); the public ones are kernels/include/corrtrack/*. The white-box
# tests of the library's internals are the named exceptions (their target carries the private
# include path).
# Run: cmake -DSOURCE_DIR=<repo> -P tests/check_private_headers.cmake
cmake_minimum_required(VERSION 3.20)
set(allowed
  tests/test_cpu_kernels.cpp    # white-box: cpu/integral.h, cpu/cpu_kernels.h
  tests/test_cuda_integral.cpp  # white-box: cuda/integral.cuh
  tests/test_safe_io.cpp)       # white-box: FftNumerator, AutoSelect
file(GLOB_RECURSE files RELATIVE "${SOURCE_DIR}"
  "${SOURCE_DIR}/app/*" "${SOURCE_DIR}/render/*" "${SOURCE_DIR}/python/src/*"
  "${SOURCE_DIR}/tests/*" "${SOURCE_DIR}/fuzz/*" "${SOURCE_DIR}/examples/*")
set(bad "")
foreach(f IN LISTS files)
  if(NOT f MATCHES "\\.(c|cc|cpp|cu|h|hpp|cuh)$" OR f IN_LIST allowed)
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
