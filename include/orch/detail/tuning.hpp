// SPDX-License-Identifier: Apache-2.0
/// The tuning constants of the partitioner and the placement engine, in one place, each with
/// why it has its value. Budgets count work (items visited, moves tried), never time, so a
/// plan does not depend on the machine. Changing one changes plans: the golden hashes
/// (tests/determinism/golden.txt, python/tests) and docs/benchmarks.md must follow.
#pragma once

#include <orch/types.hpp>

#include <cstddef>
#include <cstdint>

// Thresholds that change only speed, never a result, stay beside the code they tune (each with
// its reason there): partition/order.hpp (visit_desc_sort_max, radix_digit_bits),
// partition/improver_lists.hpp (sort_lists_max, replace_max, insert_max),
// partition/bin_order.hpp (block_size), detail/orchestrate/step_inputs.hpp
// (examples_per_range). Changing them leaves every plan and golden hash as it is.

namespace orch::detail {

// ---- partition (orch/partition/partition.hpp) ----

/// n/k at or above which bins count as holding many items: LPT is then within a few small
/// items of the bound and local search closes most of the rest.
inline constexpr std::size_t many_items_per_bin = 8;
/// n/k up to which local search also tries pair operations in the many-items regime (above,
/// single moves and swaps already reach the bound and pairs only cost time).
inline constexpr std::size_t pair_moves_items_per_bin = 16;
/// Largest instance the exact stage is tried on (its search nodes cost O(n) each, so larger
/// instances spend the budget on few nodes).
inline constexpr std::size_t exact_max_items = 2048;
/// Bins above which each critical bin tries only its least-loaded partners (at thousands of
/// bins the least-loaded few hold the moves that help; trying all is quadratic).
inline constexpr rank_t wide_bins = 64;

// ---- placement engine (orch/placement/engine.hpp and its detail headers) ----

/// settle (local search across all ranks): partners per critical rank. At thousands of ranks
/// the least-loaded few hold the good moves;
inline constexpr rank_t settle_partners = 64;
/// settle's work budget: settle_work_per_item · n + settle_work_base. Linear in n so that
/// larger steps get proportionally more search; the base lets small instances search fully.
inline constexpr std::int64_t settle_work_per_item = 16;
inline constexpr std::int64_t settle_work_base = 200'000;
/// node_first's search inside one node: node_work_per_item · m + node_work_base for a node of
/// m items. A node is small (8 ranks, a few hundred items), so a generous multiple of m is
/// cheap and rarely exhausted.
inline constexpr std::int64_t node_work_per_item = 64;
inline constexpr std::int64_t node_work_base = 20'000;
/// shed_cover sorts this many items of a node first in shed order: a node sheds only a few
/// items (its excess is a small part of its load), so they are almost always among these;
/// later takes are found by scans, then (after shed_scans of them) by sorting the rest.
inline constexpr std::size_t shed_head = 16;
inline constexpr int shed_scans = 8;
/// repair's budget inside a node of m items: repair_work_per_item · m + repair_work_base,
/// counted as if every try scanned the whole node: about 16 tries, enough for the few items
/// a fragmented node cannot place.
inline constexpr std::size_t repair_work_per_item = 16;
inline constexpr std::size_t repair_work_base = 1024;
/// Up to this many ranks a node's best fit scans them; beyond, an ordered set is cheaper
/// (a scan of 32 loads is a few cache lines).
inline constexpr std::size_t linear_fit_ranks = 32;
/// pull_home (items of a placement against reference bins brought back to their node): at
/// most this many passes over the items still away (a pass that moves nothing ends it; a
/// move or swap can open room for an item an earlier pass could not place), and the swap
/// searches' budget, pull_home_work_per_item · n candidates looked at in all. A swap search
/// looks at every item on one node, so without the budget the work would grow with the node
/// sizes; with it, it stays O(n).
inline constexpr int pull_home_passes = 3;
inline constexpr std::int64_t pull_home_work_per_item = 128;
/// cheapest_cover's histogram of bytes per cost has at most this many buckets (16 per octave:
/// 256 octaves of ratio); wider ranges fall back to ordering the whole node.
inline constexpr std::size_t cover_max_buckets = 4096;
/// shed_and_fill (detail/placement/shed_fill.hpp): a shed item tries at most shed_fill_tries
/// nodes, roomiest first, stopping at the first without room for it. Whether a node packs an
/// item depends on its items' sizes, not only its room: on the bundled trace's vision inputs
/// 4 tries left 27-48 ranks above the target in the steps looked at, and at 2,560 ranks the
/// 64 roomiest of 320 nodes stranded enough items to cost 1.33x the bound instead of 1.15x
/// (docs/benchmarks.md, "Shed and fill"). 512 covers every node up to 4,096 ranks of 8 and
/// bounds the work beyond. An eviction checks at most shed_fill_evictions candidates per node,
/// and all evictions together stay under shed_fill_eviction_factor · the items shed (each
/// check is one partition of a node's items; raising either placed no further item there).
inline constexpr std::size_t shed_fill_tries = 512;
inline constexpr std::size_t shed_fill_evictions = 8;
inline constexpr std::size_t shed_fill_eviction_factor = 4;
/// shed_and_fill's second look at what a node sheds: at most shed_trade_checks packing checks
/// per node, of which at most shed_trade_partners per shed item try it in place of a kept
/// item. On the bundled trace (512 ranks × 16, seeds 1 and 2) 12 checks per node take the
/// input and text exchanges from 1.15-1.18x their bound to 1.09-1.10x; without a cap
/// (1.09x too) some steps at 2,560 ranks changed what the fill strands and planned 3.6x
/// slower (docs/benchmarks.md, "Trading what a node sheds").
inline constexpr std::size_t shed_trade_checks = 12;
inline constexpr std::size_t shed_trade_partners = 8;

} // namespace orch::detail
