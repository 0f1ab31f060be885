# `cmake --install build --prefix P --component dev`: the libraries for find_package(corrtrack)
# and pkg-config. P/include/corrtrack holds the public headers (cmake/public_headers.cmake),
# P/lib* the static libraries corrtrack_kernels, corrtrack_tracker and corrtrack_io,
# P/lib*/cmake/corrtrack the package (targets corrtrack::kernels, corrtrack::tracker,
# corrtrack::io) and P/lib*/pkgconfig/corrtrack.pc. The libraries are static and their CUDA
# runtime is too (CUDA::cudart_static), so a consumer finds their dependencies again:
# corrtrackConfig.cmake does (CUDA toolkit for cuFFT, FFmpeg and FFTW through pkg-config,
# OpenMP, Threads), and corrtrack.pc names them.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)
include(${CMAKE_CURRENT_LIST_DIR}/public_headers.cmake)

set(CORRTRACK_INSTALL_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}/corrtrack")
set(CORRTRACK_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/corrtrack")

foreach(_h IN LISTS corrtrack_public_headers)
  string(REGEX REPLACE "^kernels/include/" "" _rel "${_h}")
  get_filename_component(_dir "${_rel}" DIRECTORY)
  install(FILES "${PROJECT_SOURCE_DIR}/${_h}" DESTINATION "${CORRTRACK_INSTALL_INCLUDEDIR}/${_dir}" COMPONENT dev)
endforeach()

set_target_properties(corrtrack_kernels PROPERTIES EXPORT_NAME kernels)
set_target_properties(corrtrack_tracker PROPERTIES EXPORT_NAME tracker)
set_target_properties(corrtrack_io PROPERTIES EXPORT_NAME io)
set(_corrtrack_exported corrtrack_kernels corrtrack_tracker corrtrack_io)
if(TARGET corrtrack_opencv)
  # The cpu_opencv kernel's OpenCV libraries (Debian ships no CMake package for them): an
  # interface target with their paths, linked by corrtrack::kernels.
  set_target_properties(corrtrack_opencv PROPERTIES EXPORT_NAME opencv)
  list(APPEND _corrtrack_exported corrtrack_opencv)
endif()
install(TARGETS ${_corrtrack_exported} EXPORT corrtrackTargets
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT dev)
install(EXPORT corrtrackTargets NAMESPACE corrtrack:: DESTINATION "${CORRTRACK_INSTALL_CMAKEDIR}" COMPONENT dev)

configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/corrtrackConfig.cmake.in"
  "${CMAKE_BINARY_DIR}/corrtrackConfig.cmake" INSTALL_DESTINATION "${CORRTRACK_INSTALL_CMAKEDIR}")
# 0.x: a new minor version may break the API, so only the same minor one matches.
write_basic_package_version_file("${CMAKE_BINARY_DIR}/corrtrackConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_BINARY_DIR}/corrtrackConfig.cmake" "${CMAKE_BINARY_DIR}/corrtrackConfigVersion.cmake"
  DESTINATION "${CORRTRACK_INSTALL_CMAKEDIR}" COMPONENT dev)

# corrtrack.pc: relocatable (prefix from the file's own place); the libraries are static, so
# Libs names everything they need, the FFmpeg and FFTW packages through Requires.
file(RELATIVE_PATH _corrtrack_pc_up "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" _corrtrack_pc_up "${_corrtrack_pc_up}")
set(CORRTRACK_PC_PREFIX "\${pcfiledir}/${_corrtrack_pc_up}")
set(CORRTRACK_PC_OPENCV "")
if(TARGET corrtrack_opencv)
  set(CORRTRACK_PC_OPENCV "${OPENCV_IMGPROC_LIBRARY} ${OPENCV_CORE_LIBRARY}")
endif()
list(TRANSFORM CUDAToolkit_INCLUDE_DIRS PREPEND "-I" OUTPUT_VARIABLE _corrtrack_pc_cuda)
list(JOIN _corrtrack_pc_cuda " " CORRTRACK_PC_CUDA_CFLAGS)
configure_file("${CMAKE_CURRENT_LIST_DIR}/corrtrack.pc.in" "${CMAKE_BINARY_DIR}/corrtrack.pc" @ONLY)
install(FILES "${CMAKE_BINARY_DIR}/corrtrack.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig" COMPONENT dev)
