# Finds the Python that builds the module (Python_EXECUTABLE picks one; scripts/setup.sh passes
# its .venv) and nanobind through it. Sets CORRTRACK_HAVE_PYTHON, and CORRTRACK_PYTHON_NOTE to
# what is missing or which Python it is.
set(corrtrack_python_components Interpreter Development.Module)
find_package(Python 3.10 COMPONENTS ${corrtrack_python_components})
if(NOT Python_Interpreter_FOUND OR NOT Python_Development.Module_FOUND)
  set(CORRTRACK_PYTHON_NOTE "(no Python 3.10+ with its headers: the Python module is skipped)")
  return()
endif()
if(CORRTRACK_PYTHON_STABLE_ABI AND Python_VERSION VERSION_LESS 3.12)
  message(FATAL_ERROR "corrtrack: CORRTRACK_PYTHON_STABLE_ABI needs Python 3.12+ (found ${Python_VERSION} at ${Python_EXECUTABLE})")
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
