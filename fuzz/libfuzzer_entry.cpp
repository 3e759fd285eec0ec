// SPDX-License-Identifier: Apache-2.0
// libFuzzer's entry point for one target: CMake defines ORCH_FUZZ_FUNCTION (orch_fuzz_<name>).
#include <cstddef>
#include <cstdint>

int ORCH_FUZZ_FUNCTION(const std::uint8_t* data, std::size_t size);

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ORCH_FUZZ_FUNCTION(data, size);
}
