// SPDX-License-Identifier: Apache-2.0
// The error catalogue's triggers for placement, quality, cost and calibration (E10xx),
// from_node_of_rank's rank limit and pack_items' overrun of an edited view (E720): each call
// must throw its docs/errors.md entry; test_errors.cpp raises them and checks type and message.
#include "triggers.hpp"

#include <orch/orch.hpp>

// orch/calibrate.hpp needs Eigen, which tests/CMakeLists.txt links when it finds it; without
// it the calibration entries have no trigger and "every C++ catalogue entry has a trigger"
// names them.
#if __has_include(<Eigen/Dense>)
#include <orch/calibrate.hpp>
#define ORCH_ERRORS_CALIBRATION 1
#endif

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace {

using orch::bytes_t;
using orch::cost_t;
using orch::index_t;
using orch::length_t;
using orch::rank_t;

/// Four ranks on two nodes: ranks 0, 1 on node 0 and 2, 3 on node 1.
orch::topology four_ranks() {
  return orch::topology::uniform(4, 2);
}

/// 2^62: two of them overflow a sum of int64.
constexpr std::int64_t half = std::numeric_limits<std::int64_t>::max() / 2 + 1;

const std::vector<cost_t> two_costs{1, 2};
const std::vector<rank_t> two_ranks{0, 1};
const std::vector<bytes_t> two_sizes{1, 1};

const orch_errors::registration placement_entries{{
    // ---- placement (orch/placement/*, detail/placement/locality_input.hpp)
    {"E1001",
     [] {
       static_cast<void>(
           orch::rearrange_bins(two_ranks, two_ranks, std::vector<bytes_t>{1}, four_ranks()));
     }},
    {"E1002",
     [] {
       static_cast<void>(orch::inter_node_lower_bound(two_costs, std::vector<rank_t>{0, 4},
                                                      two_sizes, four_ranks(), 5));
     }},
    {"E1003",
     [] {
       static_cast<void>(
           orch::place(two_costs, two_ranks, std::vector<bytes_t>{1, -3}, four_ranks()));
     }},
    {"E1004",
     [] {
       static_cast<void>(orch::locality_balance(std::vector<cost_t>{1}, two_ranks, two_sizes,
                                                four_ranks(), std::vector<rank_t>{0, 1}));
     }},
    {"E1005",
     [] {
       static_cast<void>(
           orch::place(std::vector<cost_t>{1, -2}, two_ranks, two_sizes, four_ranks()));
     }},
    {"E1006",
     [] {
       // Each bin's load fits, their total does not.
       static_cast<void>(orch::measure(std::vector<cost_t>{half, half}, two_ranks, 2));
     }},
    {"E1007",
     [] {
       static_cast<void>(
           orch::inter_node_lower_bound(two_costs, two_ranks, two_sizes, four_ranks(), -1));
     }},
    {"E1008",
     [] {
       static_cast<void>(orch::follow_parent_inter_node_lower_bound(
           std::vector<cost_t>{1}, std::vector<index_t>{0}, two_ranks, two_sizes, four_ranks(), 1));
     }},
    {"E1009",
     [] {
       static_cast<void>(orch::follow_parent_inter_node_lower_bound(
           std::vector<cost_t>{1, -1}, std::vector<index_t>{0, 1}, two_ranks, two_sizes,
           four_ranks(), 1));
     }},
    {"E1010",
     [] {
       static_cast<void>(orch::follow_parent_inter_node_lower_bound(
           two_costs, std::vector<index_t>{0, 2}, two_ranks, two_sizes, four_ranks(), 1));
     }},
    {"E1011",
     [] {
       // One parent of cost 2^62 with bytes on both nodes counts 2^63.
       static_cast<void>(orch::follow_parent_inter_node_lower_bound(
           std::vector<cost_t>{half}, std::vector<index_t>{0, 0}, std::vector<rank_t>{0, 2},
           two_sizes, four_ranks(), 0));
     }},
    {"E1012",
     [] {
       static_cast<void>(orch::locality_balance(two_costs, two_ranks, two_sizes, four_ranks(),
                                                two_ranks, orch::locality_options{-1}));
     }},
    {"E1013",
     [] {
       orch::place_options o;
       o.threads = 0;
       static_cast<void>(orch::place(two_costs, two_ranks, two_sizes, four_ranks(), o));
     }},
    {"E1014",
     [] {
       const std::vector<rank_t> bins{0};
       orch::place_options o;
       o.reference_bin_of = bins;
       static_cast<void>(orch::place(two_costs, two_ranks, two_sizes, four_ranks(), o));
     }},
    {"E1015",
     [] {
       static_cast<void>(orch::locality_balance(two_costs, two_ranks, two_sizes, four_ranks(),
                                                std::vector<rank_t>{0, 7}));
     }},
    {"E1037",
     [] {
       // A slack of 10^7 × 10^18 / 10^6 = 10^19 cost units.
       const std::vector<rank_t> zero{0};
       static_cast<void>(orch::locality_balance(std::vector<cost_t>{10'000'000}, zero,
                                                std::vector<bytes_t>{1}, four_ranks(), zero,
                                                orch::locality_options{1'000'000'000'000'000'000}));
     }},
    {"E1016",
     [] {
       static_cast<void>(
           orch::rearrange_bins(std::vector<rank_t>{0}, two_ranks, two_sizes, four_ranks()));
     }},
    {"E1017",
     [] {
       static_cast<void>(
           orch::rearrange_bins(std::vector<rank_t>{0, 4}, two_ranks, two_sizes, four_ranks()));
     }},
    {"E1018",
     [] {
       const auto r = orch::rearrange_bins(two_ranks, two_ranks, two_sizes, four_ranks());
       static_cast<void>(r.rank_of_items(std::vector<rank_t>{0, 9}));
     }},
    {"E1019",
     [] {
       static_cast<void>(
           orch::measure_traffic(two_ranks, std::vector<rank_t>{0}, two_sizes, four_ranks()));
     }},
    {"E1020",
     [] {
       static_cast<void>(
           orch::measure_traffic(two_ranks, std::vector<rank_t>{0, 5}, two_sizes, four_ranks()));
     }},
    // ---- quality (orch/quality.hpp)
    {"E1021", [] { static_cast<void>(orch::lower_bound(two_costs, 0)); }},
    {"E1022", [] { static_cast<void>(orch::bin_loads(two_costs, std::vector<rank_t>{0}, 2)); }},
    {"E1023",
     [] {
       static_cast<void>(orch::measure(two_costs, std::vector<rank_t>{0, 3}, 2));
     }},
    {"E1024", [] { static_cast<void>(orch::measure_loads(std::vector<cost_t>{})); }},
    {"E1025",
     [] {
       static_cast<void>(orch::measure_loads(std::vector<cost_t>{3, -1}));
     }},
    // ---- cost models (orch/cost.hpp, detail/primitives/checked.hpp)
    {"E1026", [] { static_cast<void>(orch::linear_cost{}(-1)); }},
    {"E1027",
     [] {
       static_cast<void>(orch::attention_cost{1, -1, 0}(5));
     }},
    {"E1028",
     [] {
       static_cast<void>(orch::attention_cost{0, 2, 0}(length_t{1} << 31));
     }},
    {"E1029",
     [] {
       static_cast<void>(orch::linear_cost{2, 0}(half));
     }},
    {"E1030",
     [] {
       static_cast<void>(orch::compute_costs(orch::linear_cost{}, std::vector<length_t>{1, -2}));
     }},
    {"E1031",
     [] {
       static_cast<void>(orch::compute_costs(orch::attention_cost{0, 2, 0},
                                             std::vector<length_t>{1, length_t{1} << 31}));
     }},
#ifdef ORCH_ERRORS_CALIBRATION
    // ---- calibration (orch/calibrate.hpp)
    {"E1032",
     [] {
       const std::vector<orch::calibration_sample> s{{{1}, 1.0}, {{2}, 2.0}};
       static_cast<void>(orch::calibrate_attention_cost(s));
     }},
    {"E1033",
     [] {
       const std::vector<orch::calibration_sample> s{{{1}, 1.0}, {{2}, -1.0}, {{3}, 3.0}};
       static_cast<void>(orch::calibrate_attention_cost(s));
     }},
    {"E1034",
     [] {
       const std::vector<orch::calibration_sample> s{{{1}, 1.0}, {{2}, 2.0}, {{4, -1}, 3.0}};
       static_cast<void>(orch::calibrate_attention_cost(s));
     }},
    {"E1035", [] { static_cast<void>(orch::to_cost_units(orch::calibration_fit{}, 0.0)); }},
    {"E1036",
     [] {
       orch::calibration_fit fit;
       fit.linear = 1.0;
       static_cast<void>(orch::to_cost_units(fit, 1e-30));
     }},
#endif
    // ---- payload helpers (orch/exchange/payload.hpp)
    {"E720",
     [] {
       // A view edited by hand: item 0's 4 bytes packed at byte 2 of a 4-byte send buffer.
       const std::vector<rank_t> on{0};
       const auto l = orch::layout::from_assignment(on, 1);
       auto view = orch::make_plan(l, l, std::vector<bytes_t>{4}).view(0);
       view.send_packed_offsets[0] = 2;
       const std::vector<std::byte> item(4);
       std::vector<std::byte> send(4);
       orch::pack_items(
           view, [&](index_t) { return std::span<const std::byte>(item); }, send);
     }},
}};

} // namespace
