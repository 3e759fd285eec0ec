# FindNCCL: locates NCCL (nccl.h, libnccl) and checks its version.
#
# Input: NCCL_ROOT (or the environment variable NCCL_ROOT / NCCL_HOME), CUDAToolkit_LIBRARY_ROOT
# and CUDAToolkit_INCLUDE_DIRS (NCCL often lives next to the CUDA toolkit), NCCL_FIND_VERSION
# (from find_package(NCCL <version>)).
# Output: NCCL_FOUND, NCCL_VERSION, NCCL_INCLUDE_DIR, NCCL_LIBRARY and the imported target
# NCCL::nccl.
include(FindPackageHandleStandardArgs)

set(_orch_nccl_hints ${NCCL_ROOT} $ENV{NCCL_ROOT} $ENV{NCCL_HOME} ${CUDAToolkit_LIBRARY_ROOT}
    /usr/local/cuda)
find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${_orch_nccl_hints} ${CUDAToolkit_INCLUDE_DIRS}
          PATH_SUFFIXES include)
find_library(NCCL_LIBRARY NAMES nccl HINTS ${_orch_nccl_hints} ${CUDAToolkit_LIBRARY_DIR}
             PATH_SUFFIXES lib64 lib lib/x86_64-linux-gnu)

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
  add_library(NCCL::nccl UNKNOWN IMPORTED)
  set_target_properties(NCCL::nccl PROPERTIES IMPORTED_LOCATION "${NCCL_LIBRARY}"
                                              INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
endif()
mark_as_advanced(NCCL_INCLUDE_DIR NCCL_LIBRARY)
