// SPDX-License-Identifier: Apache-2.0
// Cost models, orch::partition, quality metrics, micro-batches and padded batches as docs/api
// quotes them: 12 sequence lengths balanced over 4 ranks.
#include <orch/cost.hpp>
#include <orch/partition/microbatch.hpp>
#include <orch/partition/padded.hpp>
#include <orch/partition/partition.hpp>
#include <orch/quality.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

// [doc:print]
void print_result(const char* what, const orch::partition_result& r) {
  std::printf("%-10s %-12s max %lld, bound %lld, ratio %.4f%s, bins", what, r.algorithm.c_str(),
              static_cast<long long>(r.max_load), static_cast<long long>(r.lower_bound),
              r.ratio_to_lower_bound(), r.proven_optimal ? " (optimal)" : "");
  for (const orch::rank_t b : r.bin_of) {
    std::printf(" %d", b);
  }
  std::printf("\n");
}
// [/doc:print]

} // namespace

int main() {
  const std::vector<orch::length_t> lengths{1945, 1859, 1468, 1363, 1349, 1348,
                                            591,  532,  441,  413,  239,  224};

  // [doc:costs]
  const orch::attention_cost attention{.linear = 64, .quadratic = 1, .per_item = 0};
  const std::vector<orch::cost_t> costs = orch::compute_costs(attention, lengths);
  const auto tokens = orch::compute_costs(orch::linear_cost{.per_unit = 1, .per_item = 0}, lengths);
  const auto memory = orch::memory_cost{.bytes_per_unit = 2048, .bytes_per_item = 0};
  std::printf("cost of 1945 tokens: %lld units, %lld tokens, %lld activation bytes\n",
              static_cast<long long>(costs[0]), static_cast<long long>(tokens[0]),
              static_cast<long long>(memory(lengths[0])));
  try {
    static_cast<void>(orch::attention_cost{.linear = 1, .quadratic = 1 << 30, .per_item = 0}(
        orch::length_t{1} << 20));
  } catch (const orch::overflow& e) {
    std::printf("%s\n", e.what());
  }
  // [/doc:costs]

  // [doc:partition]
  const orch::partition_result r = orch::partition(costs, /*bins=*/4);
  print_result("default", r);
  // [/doc:partition]

  // [doc:algorithms]
  for (const char* name : {"lpt", "kk", "multifit"}) {
    orch::partition_options options;
    options.algorithm = orch::parse_partition_algorithm(name);
    print_result(name, orch::partition(costs, 4, options));
  }
  // [/doc:algorithms]

  // [doc:constraints]
  orch::partition_options limited;
  limited.max_items_per_bin = 3;
  limited.second_resource = tokens; // at most 3,200 tokens per rank
  limited.second_capacity = 3'200;
  print_result("limited", orch::partition(costs, 4, limited));
  limited.second_capacity = 2'900; // 4 × 2,900 < 11,772 tokens in all
  try {
    static_cast<void>(orch::partition(costs, 4, limited));
  } catch (const orch::infeasible& e) {
    std::printf("%s\n", e.what());
  }
  // [/doc:constraints]

  // [doc:groups]
  // Keep-together groups: items 2k and 2k + 1 (e.g. two responses to one prompt) share a bin;
  // the last two items stay alone (orch::no_group).
  const std::vector<orch::index_t> prompt{
      0, 0, 1, 1, 2, 2, 3, 3, 4, 4, orch::no_group, orch::no_group};
  orch::partition_options grouped;
  grouped.groups = prompt;
  print_result("grouped", orch::partition(costs, 4, grouped));
  // [/doc:groups]

  // [doc:quality]
  const orch::cost_t bound = orch::lower_bound(costs, 4); // max(ceil(Σc / 4), max c)
  const std::vector<orch::cost_t> loads = orch::bin_loads(costs, r.bin_of, 4);
  const orch::balance_metrics m = orch::measure_loads(loads, bound);
  std::printf("bound %lld, max %lld, max/mean %.4f, idle %.2f %%\n", static_cast<long long>(bound),
              static_cast<long long>(m.max_load), m.max_over_mean, 100.0 * m.idle_fraction);
  // [/doc:quality]

  // [doc:microbatch]
  // One rank's items in micro-batches of at most 4,000 tokens, balancing attention cost; the
  // ranks agree on the count first (an all-reduce max of their minima).
  const orch::index_t mine = orch::min_microbatches(tokens, 4'000);
  const std::vector<orch::index_t> all_ranks{mine, 2, 3, 1};
  const orch::index_t count = orch::common_microbatches(all_ranks);
  const orch::partition_result mb = orch::split_microbatches(costs, tokens, 4'000, count);
  std::printf("%lld micro-batches (this rank needs %lld):", static_cast<long long>(count),
              static_cast<long long>(mine));
  for (const orch::cost_t load :
       orch::bin_loads(tokens, mb.bin_of, static_cast<orch::rank_t>(count))) {
    std::printf(" %lld", static_cast<long long>(load));
  }
  std::printf(" tokens\n");
  // [/doc:microbatch]

  // [doc:padded]
  // Padded batches: a bin of c items whose longest is L costs c · L.
  const orch::padded_result p = orch::padded_partition(lengths, 4);
  std::printf("padded: largest bin %lld (counts", static_cast<long long>(p.max_padded));
  for (const orch::index_t c : p.counts) {
    std::printf(" %lld", static_cast<long long>(c));
  }
  std::printf(")\n");
  // [/doc:padded]
  return 0;
}
