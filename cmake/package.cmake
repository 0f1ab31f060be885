# The desktop integration and the Debian package (`cpack -G DEB` in the build directory, or
# `cmake --build build --target package`): corrtrack_<version>_amd64.deb with /usr/bin/corrtrack,
# the sample in /usr/share/corrtrack, the menu entry (packaging/corrtrack.desktop), the icon
# (packaging/corrtrack.svg and PNG sizes rendered from it), and the man page made from the
# CLI's --help by help2man (cmake/man_page.cmake). Only component "app" goes in; its Depends
# are Debian's runtime libraries, worked out by dpkg-shlibdeps.
#
# The CUDA runtime is linked statically (CUDA::cudart_static: the binary needs no CUDA package
# and, without a driver or GPU, runs the CPU path); cuFFT (the cuda_fft kernel) is a shared
# library of the CUDA toolkit, which Debian 12 does not carry for CUDA 13, so it is installed
# beside the binary in <prefix>/lib/corrtrack (CORRTRACK_BUNDLE_CUFFT), found through the
# binary's RPATH $ORIGIN/../lib/corrtrack. NVIDIA's CUDA EULA lists cuFFT as redistributable.
include(GNUInstallDirs)

set(CORRTRACK_PRIVATE_LIBDIR "lib/corrtrack")
option(CORRTRACK_BUNDLE_CUFFT "Install the CUDA toolkit's cuFFT with the binary (for the .deb)" ON)
if(CORRTRACK_BUNDLE_CUFFT)
  set_target_properties(corrtrack PROPERTIES INSTALL_RPATH "$ORIGIN/../${CORRTRACK_PRIVATE_LIBDIR}")
  install(RUNTIME_DEPENDENCY_SET corrtrack_runtime_libs
    PRE_INCLUDE_REGEXES "^libcufft\\.so"
    PRE_EXCLUDE_REGEXES ".*"
    DIRECTORIES "${CUDAToolkit_LIBRARY_DIR}"
    LIBRARY DESTINATION "${CORRTRACK_PRIVATE_LIBDIR}" COMPONENT app)
endif()

# The menu entry and its icon: with the GUI only (the entry opens `corrtrack gui FILE`).
if(CORRTRACK_HAVE_GUI)
  install(FILES "${PROJECT_SOURCE_DIR}/packaging/corrtrack.desktop"
    DESTINATION "${CMAKE_INSTALL_DATADIR}/applications" COMPONENT app)
  install(FILES "${PROJECT_SOURCE_DIR}/packaging/corrtrack.svg"
    DESTINATION "${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps" COMPONENT app)
  find_program(CORRTRACK_RSVG_CONVERT rsvg-convert)
  if(CORRTRACK_RSVG_CONVERT)
    set(_icons "")
    foreach(_size 16 24 32 48 64 128 256)
      set(_png "${CMAKE_BINARY_DIR}/packaging/icons/${_size}x${_size}/corrtrack.png")
      add_custom_command(OUTPUT "${_png}"
        COMMAND "${CMAKE_COMMAND}" -E make_directory "${CMAKE_BINARY_DIR}/packaging/icons/${_size}x${_size}"
        COMMAND "${CORRTRACK_RSVG_CONVERT}" -w ${_size} -h ${_size} -o "${_png}" "${PROJECT_SOURCE_DIR}/packaging/corrtrack.svg"
        DEPENDS "${PROJECT_SOURCE_DIR}/packaging/corrtrack.svg" VERBATIM)
      install(FILES "${_png}" DESTINATION "${CMAKE_INSTALL_DATADIR}/icons/hicolor/${_size}x${_size}/apps" COMPONENT app)
      list(APPEND _icons "${_png}")
    endforeach()
    add_custom_target(corrtrack_icons ALL DEPENDS ${_icons})
  else()
    message(STATUS "corrtrack: no rsvg-convert (librsvg2-bin), so no PNG icons; the SVG installs alone")
  endif()
endif()

# The man page, from the built binary's --help and each subcommand's (help2man). Not in the
# sanitizer and fuzzing builds, whose binary is not the one to document (nor to run at build
# time: a leak report would fail the build).
find_program(CORRTRACK_HELP2MAN help2man)
find_program(CORRTRACK_GZIP gzip)
if(NOT CORRTRACK_SANITIZE STREQUAL "" OR CORRTRACK_FUZZ)
  message(STATUS "corrtrack: no man page in a sanitizer or fuzzing build")
elseif(CORRTRACK_HELP2MAN AND CORRTRACK_GZIP)
  set(_man "${CMAKE_BINARY_DIR}/packaging/corrtrack.1")
  add_custom_command(OUTPUT "${_man}.gz"
    COMMAND "${CMAKE_COMMAND}" -DCLI=$<TARGET_FILE:corrtrack> -DHELP2MAN=${CORRTRACK_HELP2MAN}
      -DVERSION=${PROJECT_VERSION} -DOUT=${_man} -P "${PROJECT_SOURCE_DIR}/cmake/man_page.cmake"
    COMMAND "${CORRTRACK_GZIP}" -9nf "${_man}"
    DEPENDS corrtrack "${PROJECT_SOURCE_DIR}/cmake/man_page.cmake" VERBATIM)
  add_custom_target(corrtrack_man ALL DEPENDS "${_man}.gz")
  install(FILES "${_man}.gz" DESTINATION "${CMAKE_INSTALL_MANDIR}/man1" COMPONENT app)
else()
  message(STATUS "corrtrack: no help2man, so no man page")
endif()

set(CPACK_PACKAGE_NAME corrtrack)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_VENDOR "corrtrack")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "real-time object tracking in video by normalized cross-correlation")
set(CPACK_PACKAGE_DESCRIPTION
  "corrtrack tracks objects in video (files, image sequences, V4L2 cameras, URLs) by normalized cross-correlation (OpenCV's TM_CCOEFF_NORMED), with CUDA kernels on an NVIDIA GPU and CPU kernels everywhere else. One command: corrtrack track | eval | bench | kernels | cameras | gui. A sample clip is in /usr/share/corrtrack.")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_COMPONENTS_ALL app)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)  # one package of the components listed
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # corrtrack_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "corrtrack developers <corrtrack@example.invalid>")
set(CPACK_DEBIAN_PACKAGE_SECTION video)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${CORRTRACK_PRIVATE_LIBDIR}")
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
include(CPack)
