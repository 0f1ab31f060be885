# ctest install_consumer: `cmake --install --component dev` into a fresh prefix, then the
# installed tree is checked and used as a consumer would:
#   - include/corrtrack holds exactly the public headers (cmake/public_headers.cmake): none of
#     the kernel library's private cpu/ or cuda/ headers, nothing else of app/;
#   - examples/cpp configures with find_package(corrtrack) against the prefix alone, reports
#     the project's version, builds, and tracks the sample clip: a row per frame (120), and
#     per frame within a few pixels of `corrtrack track`'s boxes (the same tracker);
#   - pkg-config: corrtrack.pc gives the version, and the example built with its flags alone
#     prints the same rows.
# Run: cmake -DSOURCE_DIR= -DBUILD_DIR= -DWORK_DIR= -DVERSION= -DCLI= -DCXX= -DGENERATOR=
#      -DCUDA_ROOT= -P tests/check_install.cmake
cmake_minimum_required(VERSION 3.24)
include("${SOURCE_DIR}/cmake/public_headers.cmake")
set(prefix "${WORK_DIR}/prefix")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}" --component dev)

# The headers: exactly the public list, with its paths from the include roots.
set(want "")
foreach(h IN LISTS corrtrack_public_headers)
  string(REGEX REPLACE "^kernels/include/" "" h "${h}")
  list(APPEND want "${h}")
endforeach()
file(GLOB_RECURSE have RELATIVE "${prefix}/include/corrtrack" "${prefix}/include/corrtrack/*")
list(SORT want)
list(SORT have)
if(NOT have STREQUAL want)
  message(FATAL_ERROR "installed headers differ from the public list\n have: ${have}\n want: ${want}")
endif()
foreach(h IN LISTS have)
  if(h MATCHES "(^|/)(cpu|cuda)/")
    message(FATAL_ERROR "a private kernel header is installed: ${h}")
  endif()
endforeach()
foreach(lib corrtrack_kernels corrtrack_tracker corrtrack_io)
  file(GLOB found "${prefix}/lib*/lib${lib}.a" "${prefix}/lib*/*/lib${lib}.a")
  if(NOT found)
    message(FATAL_ERROR "lib${lib}.a is not installed")
  endif()
endforeach()

# find_package(corrtrack) from the prefix alone (no source or build tree on any path).
run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}/examples/cpp" -B "${WORK_DIR}/example" -G "${GENERATOR}"
  -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_CXX_COMPILER=${CXX}"
  "-DCUDAToolkit_ROOT=${CUDA_ROOT}")
if(NOT out MATCHES "corrtrack ${VERSION} from ${prefix}/lib[^\n]*/cmake/corrtrack")
  message(FATAL_ERROR "find_package(corrtrack) did not report version ${VERSION} from ${prefix}:\n${out}")
endif()
run("${CMAKE_COMMAND}" --build "${WORK_DIR}/example")

# "123.456" -> 12345 (hundredths, truncated): CMake's math has integers only.
function(to_centi value var)
  if(NOT value MATCHES "^(-?)([0-9]+)(\\.([0-9]*))?$")
    message(FATAL_ERROR "not a number: '${value}'")
  endif()
  string(SUBSTRING "${CMAKE_MATCH_4}00" 0 2 frac)
  math(EXPR v "${CMAKE_MATCH_2} * 100 + ${frac}")
  if(CMAKE_MATCH_1)
    math(EXPR v "-${v}")
  endif()
  set(${var} ${v} PARENT_SCOPE)
endfunction()

# The boxes `corrtrack track` gives on the sample (its default box, assets/sample.box).
set(sample "${SOURCE_DIR}/assets/sample.mp4")
file(STRINGS "${SOURCE_DIR}/assets/sample.box" box REGEX "^[0-9]")
run("${CLI}" track "${sample}" --box "${box}" --csv "${WORK_DIR}/cli.csv")
file(STRINGS "${WORK_DIR}/cli.csv" cli_rows REGEX "^[0-9]")

run("${WORK_DIR}/example/track_clip" "${sample}" "${box}")
set(example_out "${out}")
string(REGEX MATCHALL "[^\n]+" rows "${out}")
list(LENGTH rows n)
list(LENGTH cli_rows n_cli)
if(NOT n EQUAL 120 OR NOT n_cli EQUAL 120)
  message(FATAL_ERROR "expected 120 frames, the example printed ${n} and the CLI ${n_cli}:\n${out}")
endif()
math(EXPR last "${n} - 1")
set(worst 0)
foreach(i RANGE ${last})
  list(GET rows ${i} row)
  list(GET cli_rows ${i} cli_row)
  string(REPLACE " " ";" e "${row}")
  string(REPLACE "," ";" c "${cli_row}")
  list(GET e 0 frame)
  list(GET c 0 cli_frame)
  if(NOT frame EQUAL i OR NOT cli_frame EQUAL i)
    message(FATAL_ERROR "row ${i}: frame ${frame} (example), ${cli_frame} (CLI)")
  endif()
  # x, y, w, h: columns 1-4 of the example's rows and 3-6 of the CLI's CSV.
  foreach(k RANGE 1 4)
    math(EXPR kc "${k} + 2")
    list(GET e ${k} a)
    list(GET c ${kc} b)
    to_centi("${a}" ca)
    to_centi("${b}" cb)
    math(EXPR d "${ca} - ${cb}")
    if(d LESS 0)
      math(EXPR d "-${d}")
    endif()
    if(d GREATER worst)
      set(worst ${d})
    endif()
  endforeach()
endforeach()
# Two pixels: the example feeds the tracker as the CLI does, but the CLI's session may differ
# in details (on a GPU: where chroma comes from); on the CPU the rows are the same.
message(STATUS "example vs CLI: largest box difference ${worst}/100 px over ${n} frames")
if(worst GREATER 200)
  message(FATAL_ERROR "the example's boxes differ from the CLI's by ${worst}/100 px")
endif()

# pkg-config: the version, and the example built with the .pc file's flags alone.
file(GLOB pcdir "${prefix}/lib*/pkgconfig" "${prefix}/lib*/*/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "${pcdir}")
run(pkg-config --modversion corrtrack)
string(STRIP "${out}" pc_version)
if(NOT pc_version STREQUAL VERSION)
  message(FATAL_ERROR "corrtrack.pc says version ${pc_version}, the project ${VERSION}")
endif()
run(pkg-config --cflags --libs corrtrack)
string(STRIP "${out}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
run("${CXX}" -std=c++17 -O2 "${SOURCE_DIR}/examples/cpp/track_clip.cpp" -o "${WORK_DIR}/track_clip_pc" ${flags})
run("${WORK_DIR}/track_clip_pc" "${sample}" "${box}")
if(NOT out STREQUAL example_out)
  message(FATAL_ERROR "the example built through pkg-config printed other rows")
endif()
message(STATUS "install_consumer: ${n} frames tracked by the installed example (CMake and pkg-config)")
