# cmake -DORCH_SOURCE_DIR=<repo> -DWORK_DIR=<scratch> [-DGENERATOR=<name>] -P check_wheel.cmake
# Checks that cmake/FindNCCL.cmake finds NCCL installed only as a pip wheel (the
# nvidia-nccl-cu13 layout: <site>/nvidia/nccl/{include/nccl.h,lib/libnccl.so.2}, no
# libnccl.so), as on a GPU machine whose NCCL came with PyTorch: a fake wheel made of links to
# this machine's NCCL, the system's NCCL hidden with CMAKE_IGNORE_PREFIX_PATH (and any other
# NCCL the probe still finds, hidden in turn), python3 told about the wheel by PYTHONPATH. The
# probe must be found there, link, and load libnccl.so.2 from the wheel's folder at run time
# (the build RPATH), not from the loader's default paths.
cmake_minimum_required(VERSION 3.25)
foreach(v ORCH_SOURCE_DIR WORK_DIR)
  if(NOT ${v})
    message(FATAL_ERROR "check_wheel.cmake: -D${v}=... is required")
  endif()
endforeach()

# FindNCCL asks the Python interpreter on PATH where the wheel is; without one there is
# nothing to check (the test's SKIP_REGULAR_EXPRESSION matches this line).
find_program(_python NAMES python3 python)
if(NOT _python)
  message(STATUS "check_wheel: SKIP, no python3 or python on PATH")
  return()
endif()

# The system NCCL to imitate.
find_path(_header_dir nccl.h HINTS /usr/local/cuda/include PATH_SUFFIXES include)
find_library(_library NAMES libnccl.so.2 nccl HINTS /usr/local/cuda/lib64 /usr/local/cuda/lib)
if(NOT _header_dir OR NOT _library)
  message(FATAL_ERROR "check_wheel.cmake: no system NCCL to build the fake wheel from")
endif()
get_filename_component(_library_real "${_library}" REALPATH)

file(REMOVE_RECURSE "${WORK_DIR}")
set(_wheel "${WORK_DIR}/site/nvidia/nccl")
file(MAKE_DIRECTORY "${_wheel}/include" "${_wheel}/lib")
file(CREATE_LINK "${_header_dir}/nccl.h" "${_wheel}/include/nccl.h" SYMBOLIC)
file(CREATE_LINK "${_library_real}" "${_wheel}/lib/libnccl.so.2" SYMBOLIC)

# Hide every place the system NCCL could be found from: its header and library folders and
# the prefixes above them, each as found and with links resolved (a layout of links, such as
# /usr/local/cuda -> cuda-13.0 or /usr/local/lib64 -> cuda's lib, reaches one folder by
# several names, and CMAKE_IGNORE_PATH compares names).
function(_orch_hide_folders out)
  set(_list ${${out}})
  foreach(p IN LISTS ARGN)
    get_filename_component(_real "${p}" REALPATH)
    foreach(d "${p}" "${_real}")
      get_filename_component(_parent "${d}" DIRECTORY)
      list(APPEND _list "${d}" "${_parent}")
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES _list)
  set(${out} "${_list}" PARENT_SCOPE)
endfunction()
# The files' own links too (/usr/local/include/nccl.h may be a link into the toolkit's folder).
get_filename_component(_header_real_dir "${_header_dir}/nccl.h" REALPATH)
get_filename_component(_header_real_dir "${_header_real_dir}" DIRECTORY)
get_filename_component(_library_dir "${_library}" DIRECTORY)
get_filename_component(_library_real_dir "${_library_real}" DIRECTORY)
set(_hidden "")
_orch_hide_folders(_hidden "${_header_dir}" "${_header_real_dir}" "${_library_dir}" "${_library_real_dir}"
                   /usr/local/cuda/include /usr/local/cuda/lib64 /usr/local/cuda/lib
                   /usr/local/include /usr/local/lib /usr/local/lib64 /usr/include /usr/lib
                   /usr/lib64 /usr/lib/x86_64-linux-gnu)

set(ENV{PYTHONPATH} "${WORK_DIR}/site")
unset(ENV{NCCL_ROOT})
unset(ENV{NCCL_HOME})
set(_generator "")
if(GENERATOR)
  set(_generator -G "${GENERATOR}")
endif()

# Configure the probe; whatever NCCL it finds outside the wheel (a machine may hold NCCL in
# places the list above does not name) is hidden too and the probe configured again, a few
# times at most. The probe prints its findings as "probe: NAME=value" lines.
set(_found_wheel OFF)
set(_tries "")
foreach(_try RANGE 1 6)
  # The consumer includes this file after finding the CUDA toolkit (whose folders hold the
  # system NCCL too) and before finding NCCL. A file, because a list does not survive a -D.
  file(WRITE "${WORK_DIR}/hide-system-nccl.cmake"
       "set(CMAKE_IGNORE_PATH \"${_hidden}\")\n"
       "set(CMAKE_IGNORE_PREFIX_PATH \"${_hidden}\")\n")
  file(REMOVE_RECURSE "${WORK_DIR}/build")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" ${_generator} -S "${ORCH_SOURCE_DIR}/tests/cuda/find_nccl"
            -B "${WORK_DIR}/build" "-DORCH_CMAKE_DIR=${ORCH_SOURCE_DIR}/cmake"
            "-DORCH_HIDE_FILE=${WORK_DIR}/hide-system-nccl.cmake"
    OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "configure failed:\n${_out}\n${_err}")
  endif()
  string(REGEX MATCHALL "probe: [A-Za-z_0-9]+=[^\n]*" _findings "${_out}")
  string(REPLACE ";" "\n  " _findings_text "${_findings}")
  string(APPEND _tries "try ${_try}:\n  ${_findings_text}\n")
  set(_include "")
  set(_lib "")
  foreach(f IN LISTS _findings)
    if(f MATCHES "^probe: NCCL_INCLUDE_DIR=(.+)$")
      set(_include "${CMAKE_MATCH_1}")
    elseif(f MATCHES "^probe: NCCL_LIBRARY=(.+)$")
      set(_lib "${CMAKE_MATCH_1}")
    elseif(f STREQUAL "probe: NCCL_FROM_PYTHON_WHEEL=ON")
      set(_found_wheel ON)
    endif()
  endforeach()
  if(_found_wheel)
    break()
  endif()
  set(_more "")
  foreach(p "${_include}" "${_lib}")
    if(p AND NOT p MATCHES "-NOTFOUND$")
      if(p STREQUAL _lib)
        get_filename_component(p "${p}" DIRECTORY)
      endif()
      list(APPEND _more "${p}")
    endif()
  endforeach()
  list(LENGTH _hidden _before)
  _orch_hide_folders(_hidden ${_more})
  list(LENGTH _hidden _after)
  if(_after EQUAL _before)
    break() # nothing new to hide: the findings below say why the wheel was not taken
  endif()
endforeach()
# The findings come first in every message: a CI log may keep only the start of a long one.
foreach(want "NCCL_INCLUDE_DIR=${_wheel}/include" "NCCL_LIBRARY=${_wheel}/lib/libnccl.so.2"
             "NCCL_FROM_PYTHON_WHEEL=ON")
  string(FIND "${_out}" "probe: ${want}" _at)
  if(_at EQUAL -1)
    message(FATAL_ERROR "FindNCCL did not find the wheel: expected 'probe: ${want}'; found\n"
                        "${_tries}hidden: ${_hidden}\nconfigure output:\n${_out}")
  endif()
endforeach()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}/build"
                OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "build failed:\n${_out}\n${_err}")
endif()
# Run with the loader's default paths only: the wheel's folder must come from the RPATH.
unset(ENV{LD_LIBRARY_PATH})
execute_process(COMMAND "${WORK_DIR}/build/probe" OUTPUT_VARIABLE _out ERROR_VARIABLE _err
                RESULT_VARIABLE _rc)
message(STATUS "probe: ${_out}")
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "probe failed (exit ${_rc}):\n${_out}\n${_err}")
endif()
string(FIND "${_out}" "loaded ${_wheel}/lib/libnccl.so.2" _at)
if(_at EQUAL -1)
  message(FATAL_ERROR "the probe did not load libnccl.so.2 from the wheel's folder: ${_out}")
endif()
message(STATUS "FindNCCL found, linked and loaded the pip wheel's NCCL")
