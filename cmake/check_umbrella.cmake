# Fails unless include/orch/orch.hpp includes every public header of the core: every .hpp
# under include/orch/ except detail/, the umbrella itself and calibrate.hpp (which needs Eigen).
# Run as: cmake -DROOT=<source dir> -P check_umbrella.cmake
file(READ "${ROOT}/include/orch/orch.hpp" umbrella)
file(GLOB_RECURSE headers RELATIVE "${ROOT}/include" "${ROOT}/include/orch/*.hpp")
set(missing "")
foreach(h IN LISTS headers)
  if(h MATCHES "^orch/detail/" OR h STREQUAL "orch/orch.hpp" OR h STREQUAL "orch/calibrate.hpp")
    continue()
  endif()
  string(FIND "${umbrella}" "#include <${h}>" at)
  if(at EQUAL -1)
    list(APPEND missing "${h}")
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "orch/orch.hpp does not include: ${missing}")
endif()
message(STATUS "orch/orch.hpp includes every public core header")
