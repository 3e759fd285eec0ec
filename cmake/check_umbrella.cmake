# Fails unless include/orch/orch.hpp includes every public header of the core: every .hpp
# under include/orch/ except detail/, the umbrella itself, calibrate.hpp (which needs Eigen) and
# the forwarding headers left at old paths for one release.
# Run as: cmake -DROOT=<source dir> -P check_umbrella.cmake
file(READ "${ROOT}/include/orch/orch.hpp" umbrella)
file(GLOB_RECURSE headers RELATIVE "${ROOT}/include" "${ROOT}/include/orch/*.hpp")
set(missing "")
foreach(h IN LISTS headers)
  if(h MATCHES "^orch/detail/" OR h STREQUAL "orch/orch.hpp" OR h STREQUAL "orch/calibrate.hpp")
    continue()
  endif()
  file(READ "${ROOT}/include/${h}" text LIMIT 200)
  if(text MATCHES "Forwarding header \\(old path")
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
