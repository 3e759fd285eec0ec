# orch_set_warnings(<target>): warnings for orch's own tests, benchmarks and examples only.
# Never applied to consumers of orch::orch.
function(orch_set_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion
                                -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Wnull-dereference
                                -Wimplicit-fallthrough>)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
      # GCC 12 at -O2/-O3 reports a false -Wrestrict inside std::string for `"lit" + str`
      # (GCC bug 105329, fixed in GCC 13): keep the warning from failing Release builds.
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
    endif()
    if(ORCH_WARNINGS_AS_ERRORS)
      target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
    endif()
  endif()
endfunction()
