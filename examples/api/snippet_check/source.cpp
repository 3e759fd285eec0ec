// Fixture of the doc-snippet checker's own tests (not built): one region, quoted by the pages
// next to it with the faults the checker must report.
#include <cstdio>

int main() {
  // [doc:greet]
  std::printf("hello\n");

  std::printf("[x]; done\n");
  // [/doc:greet]
  return 0;
}
