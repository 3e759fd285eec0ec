// SPDX-License-Identifier: Apache-2.0
// The item table and chunked media as docs/api quotes them: building a table (open, or made
// for a model), the order contract, column views, validation errors, and how media_chunks
// cuts long items into encoder windows.
#include <orch/orchestrate/item_table.hpp>
#include <orch/orchestrate/media_chunks.hpp>
#include <orch/orchestrate/model.hpp>

#include <cstdio>
#include <vector>

int main() {
  const orch::model_description model{
      .encoders = {{.name = "vision", .fields = {"image"}, .cost = {.linear = 40}},
                   {.name = "audio", .fields = {{"audio", 3000}}, .cost = {.linear = 9}}},
      .llm = {}};

  // [doc:build]
  orch::item_table table(model); // field ids in model order: image 0, audio 1
  // Rank 0 sampled two examples, rank 1 one: added rank by rank, in local-index order.
  const std::vector<orch::media_spec> first{{"image", 576, 0}, {"audio", 7000, 12}};
  table.add_example(/*owner=*/0, /*local_index=*/0, /*text_tokens=*/40, first);
  table.add_example(0, 1, 25);
  const std::vector<orch::media_spec> third{{"audio", 2400, 0}};
  const orch::index_t x = table.add_example(1, 0, 60, third);
  table.validate(/*ranks=*/2);
  std::printf(
      "example %lld: rank %d, local index %lld, %lld text tokens, media [%lld, %lld)\n",
      static_cast<long long>(x), table.owner(x), static_cast<long long>(table.local_index(x)),
      static_cast<long long>(table.text_tokens(x)), static_cast<long long>(table.media_begin(x)),
      static_cast<long long>(table.media_end(x)));
  // [/doc:build]

  // [doc:columns]
  for (orch::index_t m = 0; m < table.media_items(); ++m) {
    const auto field = static_cast<std::size_t>(table.media_fields()[static_cast<std::size_t>(m)]);
    std::printf("media item %lld: example %lld, '%s', length %lld, after %lld text tokens\n",
                static_cast<long long>(m), static_cast<long long>(table.media_example(m)),
                table.field_names()[field].c_str(), static_cast<long long>(table.media_length(m)),
                static_cast<long long>(table.media_text_position(m)));
  }
  // [/doc:columns]

  // [doc:errors]
  const std::vector<orch::media_spec> video{{"video", 4096, 0}};
  try {
    table.add_example(1, 1, 10, video); // the model has no video encoder
  } catch (const orch::invalid_argument& e) {
    std::printf("%s\n", e.what());
  }
  orch::item_table open; // any field; orchestrate reports one no encoder consumes
  open.add_example(0, 0, 10, video);
  open.add_example(0, 0, 20); // the same local index twice
  try {
    open.validate(1);
  } catch (const orch::invalid_argument& e) {
    std::printf("%s\n", e.what());
  }
  // [/doc:errors]

  // [doc:chunks]
  const orch::media_chunks chunks = orch::media_chunks::make(table, model);
  std::printf("%lld media items, %lld chunks\n", static_cast<long long>(table.media_items()),
              static_cast<long long>(chunks.chunks(table.media_items())));
  for (orch::index_t m = 0; m < table.media_items(); ++m) {
    for (orch::index_t c = chunks.first_chunk(m); c < chunks.first_chunk(m) + chunks.chunk_count(m);
         ++c) {
      std::printf("  chunk %lld: media item %lld, units [%lld, +%lld)\n", static_cast<long long>(c),
                  static_cast<long long>(chunks.media_of(c)),
                  static_cast<long long>(chunks.offset(c)),
                  static_cast<long long>(chunks.length(c, table)));
    }
  }
  // The table orchestrate plans: one media item per chunk.
  const orch::item_table planned = chunks.apply(table);
  std::printf("planned table: %lld media items\n", static_cast<long long>(planned.media_items()));
  // [/doc:chunks]
  return 0;
}
