# cmake -DORCH_SOURCE_DIR=<repo> -DWORK_DIR=<scratch> [-DGENERATOR=<name>] -P check_wheel.cmake
# Checks that cmake/FindNCCL.cmake finds NCCL installed only as a pip wheel (the
# nvidia-nccl-cu13 layout: <site>/nvidia/nccl/{include/nccl.h,lib/libnccl.so.2}, no
# libnccl.so), as on a GPU machine whose NCCL came with PyTorch: a fake wheel made of links to
# this machine's NCCL, the system's NCCL hidden with CMAKE_IGNORE_PREFIX_PATH, python3 told
# about the wheel by PYTHONPATH. The probe must be found there, link, and load libnccl.so.2
# from the wheel's folder at run time (the build RPATH), not from the loader's default paths.
cmake_minimum_required(VERSION 3.25)
foreach(v ORCH_SOURCE_DIR WORK_DIR)
  if(NOT ${v})
    message(FATAL_ERROR "check_wheel.cmake: -D${v}=... is required")
  endif()
endforeach()

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

# Hide every place the system NCCL could be found from (its header and library folders, and
# the prefixes above them).
set(_hidden "")
foreach(p "${_header_dir}" "${_library}" "${_library_real}")
  get_filename_component(_dir "${p}" DIRECTORY)
  if(p STREQUAL _header_dir)
    set(_dir "${p}")
  endif()
  get_filename_component(_parent "${_dir}" DIRECTORY)
  list(APPEND _hidden "${_dir}" "${_parent}")
endforeach()
list(APPEND _hidden /usr/local/cuda /usr/local/include /usr/local/lib /usr/local /usr/include
     /usr/lib /usr/lib/x86_64-linux-gnu /usr)
list(REMOVE_DUPLICATES _hidden)
# The consumer includes this file after finding the CUDA toolkit (whose folders hold the
# system NCCL too) and before finding NCCL. A file, because a list does not survive a -D.
file(WRITE "${WORK_DIR}/hide-system-nccl.cmake"
     "set(CMAKE_IGNORE_PATH \"${_hidden}\")\n"
     "set(CMAKE_IGNORE_PREFIX_PATH \"${_hidden}\")\n")

set(ENV{PYTHONPATH} "${WORK_DIR}/site")
unset(ENV{NCCL_ROOT})
unset(ENV{NCCL_HOME})
set(_generator "")
if(GENERATOR)
  set(_generator -G "${GENERATOR}")
endif()
execute_process(
  COMMAND "${CMAKE_COMMAND}" ${_generator} -S "${ORCH_SOURCE_DIR}/tests/cuda/find_nccl" -B "${WORK_DIR}/build"
          "-DORCH_CMAKE_DIR=${ORCH_SOURCE_DIR}/cmake" "-DORCH_HIDE_FILE=${WORK_DIR}/hide-system-nccl.cmake"
  OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "configure failed:\n${_out}\n${_err}")
endif()
foreach(want "NCCL_INCLUDE_DIR=${_wheel}/include" "NCCL_LIBRARY=${_wheel}/lib/libnccl.so.2"
             "NCCL_FROM_PYTHON_WHEEL=ON")
  string(FIND "${_out}" "probe: ${want}" _at)
  if(_at EQUAL -1)
    message(FATAL_ERROR "FindNCCL did not find the wheel: expected '${want}' in\n${_out}")
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
