# cmake -DEXE=<program> -DEXPECTED=<file> [-DWORKDIR=<dir>] [-DARGS=a;b] -P compare_output.cmake
# Runs the program in WORKDIR and fails unless its standard output equals EXPECTED exactly.
execute_process(COMMAND "${EXE}" ${ARGS} WORKING_DIRECTORY "${WORKDIR}"
                OUTPUT_VARIABLE actual RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${EXE} exited with ${rc}\n${actual}")
endif()
file(READ "${EXPECTED}" expected)
if(NOT actual STREQUAL expected)
  message(FATAL_ERROR "output of ${EXE} differs from ${EXPECTED}\n--- actual ---\n${actual}")
endif()
