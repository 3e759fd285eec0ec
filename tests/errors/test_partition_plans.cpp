// SPDX-License-Identifier: Apache-2.0
// The error catalogue's triggers for partition with groups, the partition variants
// (constrained_lpt, split_microbatches, local_search, exact, lpt_speeds) and plan building:
// docs/errors.md E429–E447 and E540–E544.

#include "triggers.hpp"

#include <orch/orch.hpp>

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

namespace {

using orch::bytes_t;
using orch::cost_t;
using orch::index_t;
using orch::rank_t;

/// 2^32 costs that are never read: a reserved, inaccessible range (PROT_NONE, no memory
/// behind it), so a check that reads an item faults instead of passing silently.
std::span<const cost_t> unreadable_costs() {
  constexpr std::size_t n = std::size_t{1} << 32;
  static void* const base = ::mmap(nullptr, n * sizeof(cost_t), PROT_NONE,
                                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    throw std::runtime_error("test_partition_plans: cannot reserve 32 GiB of address space");
  }
  return {static_cast<const cost_t*>(base), n};
}

/// Six items of second resource 4, 4, 3, 3, 3, 3 (20 in total) in 2 bins of capacity 10:
/// only {4, 3, 3} twice fits, and every greedy pass (all costs 0: first-fit in index order,
/// then by resource) puts both 4s into bin 0 and strands the last 3.
const std::vector<cost_t> zero_costs(6, 0);
const std::vector<cost_t> tight_resource{4, 4, 3, 3, 3, 3};

/// A layout from the rank of each item.
orch::layout on_ranks(std::vector<rank_t> ranks, rank_t world) {
  return orch::layout::from_assignment(ranks, world);
}

constexpr bytes_t half_of_max = bytes_t{1} << 62; // two of them pass 2^63 - 1

const orch_errors::registration partition_plan_entries{{
    // ---- partition with groups
    {"E429",
     [] {
       const std::vector<index_t> groups{0, 0};
       const std::vector<cost_t> second{3, 3};
       orch::partition_options o;
       o.groups = groups;
       o.second_resource = second;
       o.second_capacity = 5;
       static_cast<void>(orch::partition(std::vector<cost_t>{1, 2}, 2, o));
     }},
    {"E430",
     [] {
       const std::vector<index_t> groups{0, 0, 1, 1, 2, 2};
       orch::partition_options o;
       o.groups = groups;
       o.max_items_per_bin = 3;
       static_cast<void>(orch::partition(std::vector<cost_t>{1, 2, 3, 4, 5, 6}, 2, o));
     }},
    {"E431",
     [] {
       const std::vector<index_t> groups{0, 0, orch::no_group};
       const std::vector<cost_t> second{1, 1, 1};
       orch::partition_options o;
       o.groups = groups;
       o.second_resource = second;
       o.second_capacity = 5;
       o.max_items_per_bin = 2;
       static_cast<void>(orch::partition(std::vector<cost_t>{1, 2, 3}, 2, o));
     }},
    {"E432",
     [] {
       const std::vector<cost_t> costs{1, 2};
       const std::vector<index_t> groups{0, 0};
       const std::vector<rank_t> bins{0, 1};
       static_cast<void>(orch::contract_groups(costs, groups).expand(bins));
     }},
    {"E433", [] { static_cast<void>(orch::partition(unreadable_costs(), 2)); }},
    {"E434",
     [] {
       const std::vector<cost_t> costs{1, -2};
       const std::vector<index_t> groups{0, 0};
       static_cast<void>(orch::contract_groups(costs, groups));
     }},
    {"E435",
     [] {
       orch::partition_options o;
       o.algorithm = static_cast<orch::partition_algorithm>(42);
       static_cast<void>(orch::partition(std::vector<cost_t>{1, 2}, 2, o));
     }},
    {"E436",
     [] {
       orch::partition_options o;
       o.work_budget = -1;
       static_cast<void>(orch::partition(std::vector<cost_t>{1, 2}, 2, o));
     }},
    {"E437",
     [] {
       orch::partition_options o;
       o.second_resource = tight_resource;
       o.second_capacity = 10;
       static_cast<void>(orch::partition(zero_costs, 2, o));
     }},
    {"E438",
     [] {
       const std::vector<index_t> groups{0, 0, orch::no_group, orch::no_group};
       const std::vector<cost_t> second{2, 2, 4, 4};
       orch::partition_options o;
       o.groups = groups;
       o.second_resource = second;
       o.second_capacity = 5;
       static_cast<void>(orch::partition(std::vector<cost_t>{1, 2, 3, 4}, 2, o));
     }},
    {"E439",
     [] {
       // Group 0 (items 0 and 1) needs 4: the super-items are tight_resource again.
       const std::vector<index_t> groups{0, 0, -1, -1, -1, -1, -1};
       const std::vector<cost_t> second{2, 2, 4, 3, 3, 3, 3};
       orch::partition_options o;
       o.groups = groups;
       o.second_resource = second;
       o.second_capacity = 10;
       static_cast<void>(orch::partition(std::vector<cost_t>(7, 0), 2, o));
     }},
    {"E440",
     [] {
       // Four groups of 2 and one of 1 in 3 bins of 3 items: no bin holds two pairs.
       const std::vector<index_t> groups{0, 0, 1, 1, 2, 2, 3, 3, 4};
       orch::partition_options o;
       o.groups = groups;
       o.max_items_per_bin = 3;
       static_cast<void>(orch::partition(std::vector<cost_t>{5, 5, 4, 4, 3, 3, 2, 2, 1}, 3, o));
     }},
    // ---- the other partition entry points
    {"E441",
     [] {
       const orch::bin_constraints c{0, false, tight_resource, 10};
       static_cast<void>(orch::constrained_lpt(zero_costs, 2, c));
     }},
    {"E442",
     [] {
       const std::vector<cost_t> tokens{6, 6, 6};
       static_cast<void>(orch::split_microbatches(tokens, tokens, 8, 2));
     }},
    {"E443",
     [] { static_cast<void>(orch::split_microbatches(zero_costs, tight_resource, 10, 2)); }},
    {"E444",
     [] {
       const std::vector<rank_t> start{0};
       static_cast<void>(orch::local_search(std::vector<cost_t>{1, 2}, 2, start));
     }},
    {"E445",
     [] {
       const std::vector<rank_t> start{0, 2};
       static_cast<void>(orch::local_search(std::vector<cost_t>{1, 2}, 2, start));
     }},
    {"E446",
     [] {
       const std::vector<rank_t> start{0, 1, 0};
       orch::exact_options o;
       o.start = start;
       static_cast<void>(orch::exact(std::vector<cost_t>{1, 2}, 2, o));
     }},
    {"E447",
     [] {
       static_cast<void>(orch::lpt_speeds(std::vector<cost_t>{1, 2}, {}));
     }},
    {"E448",
     [] {
       static_cast<void>(orch::make_partition_result(std::vector<cost_t>{1, 2},
                                                     std::vector<rank_t>{0, 3}, 2, ""));
     }},
    {"E449",
     [] {
       static_cast<void>(orch::order_by_cost_desc(std::vector<cost_t>{3, -1, 2}));
     }},
    // ---- plan building
    {"E540",
     [] {
       const std::vector<bytes_t> b{half_of_max, half_of_max};
       static_cast<void>(orch::make_plan(on_ranks({0, 1}, 2), on_ranks({0, 0}, 2), b));
     }},
    {"E541",
     [] {
       const std::vector<bytes_t> b{half_of_max, half_of_max};
       static_cast<void>(orch::make_plan(on_ranks({0, 0}, 2), on_ranks({0, 1}, 2), b));
     }},
    {"E542",
     [] {
       const std::vector<bytes_t> b{half_of_max, half_of_max};
       static_cast<void>(orch::make_plan(on_ranks({0, 1}, 2), on_ranks({0, 1}, 2), b));
     }},
    {"E543",
     [] {
       const std::vector<bytes_t> b{1, 1};
       static_cast<void>(orch::make_plan(on_ranks({0, 1}, 2), on_ranks({0, 1, 1}, 2), b));
     }},
    {"E544",
     [] {
       const std::vector<bytes_t> b{1, 1};
       static_cast<void>(orch::make_plan(on_ranks({0, 1}, 2), on_ranks({0, 1}, 3), b));
     }},
}};

} // namespace
