// SPDX-License-Identifier: Apache-2.0
// Main of the gpu tests: exit code 77 (ctest's SKIP_RETURN_CODE) when no CUDA device is
// visible, so CI without a GPU reports them as skipped instead of failed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <orch/cuda/version.hpp>

#include <doctest/doctest.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (orch::cuda::device_count() == 0) {
    std::puts("orch_tests_cuda_gpu: no CUDA device visible, skipping (exit 77)");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
