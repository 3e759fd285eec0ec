// SPDX-License-Identifier: Apache-2.0
// The C++ side of bench_plan_python.py: reads the step's columns that the Python script wrote
// (int64 words: examples, media items, then owner, local index, text, media example, field,
// length, position), and times item_table::from_columns + orchestrate, as the Python side
// times ItemTable.from_arrays + orch.orchestrate. Prints one wall time per repetition (ms).
#include <orch/orch.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

/// The model of bench/bench_orchestrate.cpp.
orch::model_description bench_model() {
  orch::model_description m;
  m.encoders.push_back(
      {"vision", {"image", "video"}, {1300, 2, 0}, 4, 0, 0, 14 * 14 * 3 * 2, 3584 * 2});
  m.encoders.push_back({"audio", {"audio"}, {1300, 1, 0}, 4, 0, 0, 128 * 2, 3584 * 2});
  m.llm.cost = {15000, 1, 0};
  m.llm.text_bytes_per_token = 8;
  return m;
}

template <class T>
std::vector<T> read_column(std::ifstream& in, std::int64_t n) {
  std::vector<std::int64_t> words(static_cast<std::size_t>(n));
  in.read(reinterpret_cast<char*>(words.data()), static_cast<std::streamsize>(8 * n));
  return std::vector<T>(words.begin(), words.end());
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s columns.bin ranks ranks_per_node repetitions\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::int64_t header[2] = {0, 0};
  in.read(reinterpret_cast<char*>(header), sizeof header);
  const std::int64_t n = header[0];
  const std::int64_t media = header[1];
  const auto owner = read_column<orch::rank_t>(in, n);
  const auto local = read_column<orch::index_t>(in, n);
  const auto text = read_column<orch::length_t>(in, n);
  const auto media_example = read_column<orch::index_t>(in, media);
  const auto media_field = read_column<std::int32_t>(in, media);
  const auto media_length = read_column<orch::length_t>(in, media);
  const auto media_position = read_column<orch::length_t>(in, media);
  if (!in) {
    throw std::runtime_error("short columns file");
  }
  const std::vector<std::string> names{"image", "audio"};
  const orch::item_columns columns{owner,       local,        text,          media_example,
                                   media_field, media_length, media_position};
  const auto model = bench_model();
  const auto topo = orch::topology::uniform(std::stoi(argv[2]), std::stoi(argv[3]));
  const int reps = std::stoi(argv[4]);
  std::uint64_t hash = 0;
  for (int r = -1; r < reps; ++r) { // r = -1: warm-up, not printed
    const auto start = std::chrono::steady_clock::now();
    const auto table = orch::item_table::from_columns(columns, names);
    const auto plan = orch::orchestrate(table, model, topo, {});
    const auto stop = std::chrono::steady_clock::now();
    hash = plan.hash;
    if (r >= 0) {
      std::printf("%.4f\n", std::chrono::duration<double, std::milli>(stop - start).count());
    }
  }
  std::printf("hash %llu\n", static_cast<unsigned long long>(hash));
  return 0;
}
