# ctest include_layers: the layers include only downwards, so no include cycle can form:
# kernels/ (the library) < app/ (corrtrack_app) < render/ (the GUI) < main/ (the executable).
# The kernel library's own tests (kernels/tests/) may use the shared test helpers in tests/.
# Run: cmake -DSOURCE_DIR=<repo> -P tests/check_include_layers.cmake
cmake_minimum_required(VERSION 3.20)
# What each layer must not include (quoted include paths, from the repository root).
set(forbidden_in_kernels "^(app|render|main|tests)/")
set(forbidden_in_app "^(render|main)/")
set(forbidden_in_render "^main/")
set(bad "")
foreach(layer kernels app render)
  file(GLOB_RECURSE files RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/${layer}/*")
  foreach(f IN LISTS files)
    if(NOT f MATCHES "\\.(c|cc|cpp|cu|h|hpp|cuh)$" OR f MATCHES "^kernels/tests/")
      continue()
    endif()
    file(STRINGS "${SOURCE_DIR}/${f}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]*)\".*" "\\1" path "${line}")
      if(path MATCHES "${forbidden_in_${layer}}")
        string(APPEND bad "  ${f}: ${line}\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "includes against the layers (kernels < app < render < main):\n${bad}")
endif()
