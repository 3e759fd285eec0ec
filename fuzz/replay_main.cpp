// SPDX-License-Identifier: Apache-2.0
// orch_fuzz_replay TARGET PATH...: feeds every file under PATH (files or directories, sorted)
// to fuzz target TARGET, as libFuzzer would, so that ordinary builds (gcc included) run the
// seed corpora and every regression input. Exit 0 when every input ran; a broken invariant
// aborts.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#define ORCH_FUZZ_DECLARE(name) int orch_fuzz_##name(const std::uint8_t*, std::size_t);
#include "targets.def"
#undef ORCH_FUZZ_DECLARE

namespace {

using target_fn = int (*)(const std::uint8_t*, std::size_t);

struct target {
  std::string_view name;
  target_fn run;
};

#define ORCH_FUZZ_DECLARE(name) {#name, &orch_fuzz_##name},
const target targets[] = {
#include "targets.def"
};
#undef ORCH_FUZZ_DECLARE

} // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: orch_fuzz_replay TARGET PATH...\n");
    return 2;
  }
  target_fn run = nullptr;
  for (const auto& t : targets) {
    if (t.name == argv[1]) {
      run = t.run;
    }
  }
  if (run == nullptr) {
    std::fprintf(stderr, "orch_fuzz_replay: unknown target '%s'\n", argv[1]);
    return 2;
  }
  std::vector<std::filesystem::path> files;
  for (int a = 2; a < argc; ++a) {
    const std::filesystem::path p = argv[a];
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(p)) {
        if (e.is_regular_file()) {
          files.push_back(e.path());
        }
      }
    } else {
      files.push_back(p);
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "orch_fuzz_replay: no input under the given paths\n");
    return 1;
  }
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
    run(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("orch_fuzz_replay %s: %zu inputs ran clean\n", argv[1], files.size());
  return 0;
}
