# FindNCCL: locates NCCL (nccl.h, libnccl) and checks its version.
#
# Search order: NCCL_ROOT (CMake or environment variable) / NCCL_HOME, the CUDA toolkit's
# folders (CUDAToolkit_LIBRARY_ROOT, CUDAToolkit_INCLUDE_DIRS, /usr/local/cuda) and the system;
# then, if either part is still missing, the `nvidia-nccl-cu*` pip wheel of the Python
# interpreter on PATH (or Python3_EXECUTABLE / NCCL_PYTHON_EXECUTABLE): PyTorch installs NCCL
# only that way, as <site-packages>/nvidia/nccl/{include/nccl.h,lib/libnccl.so.2} (no
# unversioned libnccl.so, so libnccl.so.2 is searched by name too). Header and library always
# come from the same place.
# Input: the variables above, NCCL_FIND_VERSION (from find_package(NCCL <version>)).
# Output: NCCL_FOUND, NCCL_VERSION, NCCL_INCLUDE_DIR, NCCL_LIBRARY, NCCL_FROM_PYTHON_WHEEL
# and the imported target NCCL::nccl.
include(FindPackageHandleStandardArgs)

set(_orch_nccl_names nccl libnccl.so.2)
set(_orch_nccl_hints ${NCCL_ROOT} $ENV{NCCL_ROOT} $ENV{NCCL_HOME} ${CUDAToolkit_LIBRARY_ROOT}
    /usr/local/cuda)
find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${_orch_nccl_hints} ${CUDAToolkit_INCLUDE_DIRS}
          PATH_SUFFIXES include)
# NAMES_PER_DIR: the first folder holding either name wins (a wheel's libnccl.so.2 under
# NCCL_ROOT before a system libnccl.so found by the first name elsewhere).
find_library(NCCL_LIBRARY NAMES ${_orch_nccl_names} NAMES_PER_DIR HINTS ${_orch_nccl_hints}
             ${CUDAToolkit_LIBRARY_DIR} PATH_SUFFIXES lib64 lib lib/x86_64-linux-gnu)

set(NCCL_FROM_PYTHON_WHEEL OFF)
if(NOT NCCL_INCLUDE_DIR OR NOT NCCL_LIBRARY)
  if(NCCL_PYTHON_EXECUTABLE)
    set(_orch_nccl_python "${NCCL_PYTHON_EXECUTABLE}")
  elseif(Python3_EXECUTABLE)
    set(_orch_nccl_python "${Python3_EXECUTABLE}")
  else()
    find_program(_orch_nccl_python NAMES python3 python)
  endif()
  if(_orch_nccl_python)
    # nvidia.nccl is a namespace package (no __file__): its folder is __path__[0].
    execute_process(
      COMMAND "${_orch_nccl_python}" -c
              "import nvidia.nccl as m; print(list(m.__path__)[0])"
      OUTPUT_VARIABLE _orch_nccl_wheel OUTPUT_STRIP_TRAILING_WHITESPACE
      RESULT_VARIABLE _orch_nccl_python_rc ERROR_QUIET)
    if(_orch_nccl_python_rc EQUAL 0 AND EXISTS "${_orch_nccl_wheel}/include/nccl.h")
      # Both from the wheel, never a header from one install and the library from another.
      unset(NCCL_INCLUDE_DIR CACHE)
      unset(NCCL_LIBRARY CACHE)
      find_path(NCCL_INCLUDE_DIR nccl.h PATHS "${_orch_nccl_wheel}/include" NO_DEFAULT_PATH)
      find_library(NCCL_LIBRARY NAMES ${_orch_nccl_names} NAMES_PER_DIR PATHS "${_orch_nccl_wheel}/lib"
                   NO_DEFAULT_PATH)
      set(NCCL_FROM_PYTHON_WHEEL ON)
    endif()
  endif()
endif()

if(NCCL_INCLUDE_DIR AND EXISTS "${NCCL_INCLUDE_DIR}/nccl.h")
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _orch_nccl_lines
       REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) +[0-9]+")
  foreach(part MAJOR MINOR PATCH)
    string(REGEX REPLACE ".*#define NCCL_${part} +([0-9]+).*" "\\1" _orch_nccl_${part}
                         "${_orch_nccl_lines}")
  endforeach()
  set(NCCL_VERSION "${_orch_nccl_MAJOR}.${_orch_nccl_MINOR}.${_orch_nccl_PATCH}")
endif()

find_package_handle_standard_args(NCCL REQUIRED_VARS NCCL_LIBRARY NCCL_INCLUDE_DIR
                                  VERSION_VAR NCCL_VERSION)

if(NCCL_FOUND AND NOT TARGET NCCL::nccl)
  # SHARED (not UNKNOWN) so that CMake puts the library's folder on the build RPATH even for
  # a versioned file name such as the wheel's libnccl.so.2 outside the loader's paths.
  if(NCCL_LIBRARY MATCHES "\\.a$")
    add_library(NCCL::nccl STATIC IMPORTED)
  else()
    add_library(NCCL::nccl SHARED IMPORTED)
  endif()
  set_target_properties(NCCL::nccl PROPERTIES IMPORTED_LOCATION "${NCCL_LIBRARY}"
                                              INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
endif()
mark_as_advanced(NCCL_INCLUDE_DIR NCCL_LIBRARY)
