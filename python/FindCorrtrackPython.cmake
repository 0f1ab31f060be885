# Finds the Python that builds the module (Python_EXECUTABLE picks one; scripts/setup.sh passes
# its .venv) and nanobind through it. Sets CORRTRACK_HAVE_PYTHON, and CORRTRACK_PYTHON_NOTE to
# what is missing or which Python it is.
set(corrtrack_python_components Interpreter Development.Module)
if(CORRTRACK_PYTHON_STABLE_ABI AND CMAKE_VERSION VERSION_GREATER_EQUAL 3.26)
  list(APPEND corrtrack_python_components Development.SABIModule)
endif()
find_package(Python 3.10 COMPONENTS ${corrtrack_python_components})
if(NOT Python_Interpreter_FOUND OR NOT Python_Development.Module_FOUND)
  set(CORRTRACK_PYTHON_NOTE "(no Python 3.10+ with its headers: the Python module is skipped)")
  return()
endif()
if(CORRTRACK_PYTHON_STABLE_ABI AND Python_VERSION VERSION_LESS 3.12)
  message(FATAL_ERROR "corrtrack: CORRTRACK_PYTHON_STABLE_ABI needs Python 3.12+ (found ${Python_VERSION} at ${Python_EXECUTABLE})")
endif()
if(CORRTRACK_PYTHON_STABLE_ABI AND NOT TARGET Python::SABIModule)
  # CMake before 3.26 (Debian 12 has 3.25) knows no Development.SABIModule; on Linux it is just
  # the headers, as Python::Module, which nanobind needs under this name to build for abi3.
  add_library(Python::SABIModule INTERFACE IMPORTED)
  set_target_properties(Python::SABIModule PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${Python_INCLUDE_DIRS}")
endif()
if(NOT nanobind_DIR)
  execute_process(COMMAND "${Python_EXECUTABLE}" -m nanobind --cmake_dir
                  OUTPUT_VARIABLE corrtrack_nanobind_dir OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_QUIET RESULT_VARIABLE corrtrack_nanobind_rc)
  if(corrtrack_nanobind_rc EQUAL 0)
    set(nanobind_DIR "${corrtrack_nanobind_dir}" CACHE PATH "nanobind's CMake package (python -m nanobind --cmake_dir)")
  endif()
endif()
find_package(nanobind CONFIG QUIET)
if(NOT nanobind_FOUND)
  set(CORRTRACK_PYTHON_NOTE "(no nanobind for ${Python_EXECUTABLE}: the Python module is skipped; scripts/setup.sh installs it)")
  return()
endif()
set(CORRTRACK_HAVE_PYTHON ON)
set(CORRTRACK_PYTHON_NOTE "(${Python_EXECUTABLE}, ${Python_VERSION}, nanobind ${nanobind_VERSION})")
