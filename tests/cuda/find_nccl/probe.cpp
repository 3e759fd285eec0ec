// SPDX-License-Identifier: Apache-2.0
// Prints the NCCL version of the header and of the loaded library, and the file the dynamic
// loader took libnccl from (dladdr on ncclGetVersion); fails unless the two versions agree
// (a header from one NCCL and a library from another). No GPU needed.
#include <nccl.h>

#include <dlfcn.h>

#include <cstdio>

int main() {
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess) {
    return 1;
  }
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&ncclGetVersion), &info) == 0 || info.dli_fname == nullptr) {
    return 2;
  }
  std::printf("header %d library %d loaded %s\n", NCCL_VERSION_CODE, version, info.dli_fname);
  return version == NCCL_VERSION_CODE ? 0 : 3;
}
