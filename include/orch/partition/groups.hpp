// SPDX-License-Identifier: Apache-2.0
/// Keep-together groups: items sharing a group id contracted into one super-item and back.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace orch {

/// The group id of an item that belongs to no group (it is a super-item of its own).
inline constexpr index_t no_group = -1;

/// Items contracted into keep-together groups. Super-item j is the j-th group (or lone item)
/// in order of first appearance: the group whose first item comes first is super-item 0.
struct item_groups {
  std::vector<std::uint32_t> super_of;   ///< super-item of every item
  std::vector<cost_t> cost;              ///< Σ costs of each super-item's items
  std::vector<index_t> size;             ///< items per super-item
  std::vector<index_t> id;               ///< group id per super-item (no_group: a lone item)
  std::vector<std::uint32_t> first_item; ///< first (lowest-index) item of each super-item
  std::vector<cost_t> resource;          ///< Σ second resource per super-item (empty: none)

  /// Number of super-items.
  [[nodiscard]] std::size_t count() const noexcept { return cost.size(); }

  /// True when every super-item holds the same number of items (or there are none).
  [[nodiscard]] bool equal_sizes() const noexcept {
    return std::adjacent_find(size.begin(), size.end(), std::not_equal_to<>()) == size.end();
  }

  /// "group <id>", or "item <i>" for a lone item: how messages name super-item j.
  [[nodiscard]] std::string name(std::size_t j) const {
    return id[j] == no_group ? detail::message("item ", first_item[j])
                             : detail::message("group ", id[j]);
  }

  /// The bin of every item, given the bin of every super-item. Complexity: O(items).
  /// Throws: orch::invalid_argument (super_bin_of.size() != count()).
  [[nodiscard]] std::vector<rank_t> expand(std::span<const rank_t> super_bin_of) const {
    if (super_bin_of.size() != count()) {
      throw_invalid_argument("item_groups::expand: ", super_bin_of.size(), " bins for ", count(),
                             " super-items");
    }
    std::vector<rank_t> out(super_of.size());
    for (std::size_t i = 0; i < super_of.size(); ++i) {
      out[i] = super_bin_of[super_of[i]];
    }
    return out;
  }
};

/// Contracts items into super-items: items with the same group id ≥ 0 form one super-item
/// (its cost and second resource the sums over its items); an item with id no_group (−1)
/// stays alone. Super-items are numbered by first appearance, so the result depends only on
/// the input order, never on the id values' magnitude, and all-distinct ids give the items
/// themselves in their order.
/// Complexity: O(n) when ids are below 4n + 64, else O(n log n).
/// Throws: orch::invalid_argument (groups.size() or a non-empty second_resource.size() not
/// costs.size(), a negative cost or second resource, an id below −1 — naming the item),
/// orch::overflow (a group's sums).
[[nodiscard]] inline item_groups contract_groups(std::span<const cost_t> costs,
                                                 std::span<const index_t> groups,
                                                 std::span<const cost_t> second_resource = {},
                                                 const char* where = "contract_groups") {
  const std::size_t n = costs.size();
  if (groups.size() != n) {
    throw_invalid_argument(where, ": groups has ", groups.size(), " entries for ", n, " items");
  }
  if (!second_resource.empty() && second_resource.size() != n) {
    throw_invalid_argument(where, ": second_resource has ", second_resource.size(), " entries for ",
                           n, " items");
  }
  if (n >= (std::size_t{1} << 32)) {
    throw_invalid_argument(where, ": at most 2^32 − 1 items, got ", n);
  }
  index_t top = -1;
  for (std::size_t i = 0; i < n; ++i) {
    if (groups[i] < no_group) {
      throw_invalid_argument(where, ": item ", i, " has group id ", groups[i],
                             " (must be ≥ 0, or −1 for an item alone)");
    }
    if (costs[i] < 0) {
      throw_invalid_argument(where, ": item ", i, " has negative cost ", costs[i]);
    }
    if (!second_resource.empty() && second_resource[i] < 0) {
      throw_invalid_argument(where, ": item ", i, " has negative second resource ",
                             second_resource[i]);
    }
    top = std::max(top, groups[i]);
  }
  // leader[i]: the first item with i's group id (i itself for a first or lone item).
  std::vector<std::uint32_t> leader(n);
  if (top < static_cast<index_t>(4 * n + 64)) {
    std::vector<std::uint32_t> first(static_cast<std::size_t>(top + 1), UINT32_MAX);
    for (std::size_t i = 0; i < n; ++i) {
      leader[i] = static_cast<std::uint32_t>(i);
      if (groups[i] != no_group) {
        auto& f = first[static_cast<std::size_t>(groups[i])];
        f = f == UINT32_MAX ? static_cast<std::uint32_t>(i) : f;
        leader[i] = f;
      }
    }
  } else {
    // Sparse ids (hashes, sample uids): sort (id, item); a run's first entry is its leader.
    std::vector<std::pair<index_t, std::uint32_t>> keyed;
    for (std::size_t i = 0; i < n; ++i) {
      leader[i] = static_cast<std::uint32_t>(i);
      if (groups[i] != no_group) {
        keyed.emplace_back(groups[i], static_cast<std::uint32_t>(i));
      }
    }
    std::sort(keyed.begin(), keyed.end());
    for (std::size_t t = 1; t < keyed.size(); ++t) {
      if (keyed[t].first == keyed[t - 1].first) {
        leader[keyed[t].second] = leader[keyed[t - 1].second];
      }
    }
  }
  item_groups g;
  g.super_of.resize(n);
  if (!second_resource.empty()) {
    g.resource.reserve(n);
  }
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t j = 0;
    if (leader[i] == i) {
      j = g.cost.size();
      g.cost.push_back(0);
      g.size.push_back(0);
      g.id.push_back(groups[i]);
      g.first_item.push_back(static_cast<std::uint32_t>(i));
      if (!second_resource.empty()) {
        g.resource.push_back(0);
      }
    } else {
      j = g.super_of[leader[i]];
    }
    g.super_of[i] = static_cast<std::uint32_t>(j);
    g.cost[j] = detail::checked_add(g.cost[j], costs[i], where);
    ++g.size[j];
    if (!second_resource.empty()) {
      g.resource[j] = detail::checked_add(g.resource[j], second_resource[i], where);
    }
  }
  return g;
}

namespace detail {

/// The per-bin limits of a partition over super-items that mean the item-level limits.
struct group_limits {
  index_t max_items = 0;     ///< in super-items
  bool equal_counts = false; ///< in super-items
  /// Unequal group sizes under max_items_per_bin: the item counts as a second resource
  /// (capacity max_items_per_bin), since counts of super-items cannot express it.
  std::vector<cost_t> count_resource;
};

/// Translates max_items_per_bin (counting items), equal_counts (item counts differing by at
/// most one) and the second capacity into limits on the super-items of `g`, or throws.
/// Throws: orch::infeasible (a group above a limit, naming it; the items cannot fit; equal
/// counts impossible with groups of s > 1 items whose number is no multiple of k),
/// orch::invalid_argument (equal_counts with unequal group sizes; max_items_per_bin with a
/// second resource and unequal group sizes; second_capacity without a second resource).
[[nodiscard]] inline group_limits limits_for_groups(const item_groups& g, rank_t bins,
                                                    index_t max_items, bool equal_counts,
                                                    cost_t second_capacity, const char* where) {
  group_limits out;
  out.max_items = max_items;
  out.equal_counts = equal_counts;
  const auto n = static_cast<index_t>(g.super_of.size());
  const auto count = static_cast<index_t>(g.count());
  const auto k = static_cast<index_t>(bins);
  if (g.resource.empty() && second_capacity != 0 && n > 0) {
    throw_invalid_argument(where, ": second_capacity = ", second_capacity,
                           " given without second_resource");
  }
  const auto largest = std::max_element(g.size.begin(), g.size.end());
  // The first super-item whose size differs from the first one's (for messages).
  const auto other =
      std::find_if(g.size.begin(), g.size.end(), [&](index_t s) { return s != g.size.front(); });
  const auto unequal = [&] {
    const auto j = static_cast<std::size_t>(other - g.size.begin());
    return message(" (", g.name(0), " has ", g.size.front(),
                   g.size.front() == 1 ? " item, " : " items, ", g.name(j), " has ", g.size[j],
                   g.size[j] == 1 ? " item)" : " items)");
  };
  if (!g.resource.empty() && second_capacity > 0) {
    const auto heavy = std::max_element(g.resource.begin(), g.resource.end());
    if (*heavy > second_capacity) {
      throw_infeasible(where, ": ", g.name(static_cast<std::size_t>(heavy - g.resource.begin())),
                       " needs ", *heavy,
                       " of the second resource, above second_capacity = ", second_capacity);
    }
  }
  if (max_items > 0 && count > 0) {
    if (*largest > max_items) {
      throw_infeasible(where, ": ", g.name(static_cast<std::size_t>(largest - g.size.begin())),
                       " has ", *largest, " items, above max_items_per_bin = ", max_items);
    }
    if (static_cast<int128>(max_items) * k < n) {
      throw_infeasible(where, ": ", n, " items do not fit in ", k,
                       " bins of at most max_items_per_bin = ", max_items, " items");
    }
    if (g.equal_sizes()) {
      // Every bin holds a multiple of s items: at most ⌊max/s⌋ groups, exactly.
      out.max_items = max_items / g.size.front();
      if (static_cast<int128>(out.max_items) * k < count) {
        throw_infeasible(where, ": ", count, " groups of ", g.size.front(), " items do not fit in ",
                         k, " bins of at most max_items_per_bin = ", max_items, " items (",
                         out.max_items, " groups per bin)");
      }
    } else if (!g.resource.empty()) {
      throw_invalid_argument(where,
                             ": max_items_per_bin with groups of unequal sizes cannot be "
                             "combined with second_resource",
                             unequal());
    } else {
      out.max_items = 0;
      out.count_resource.assign(g.size.begin(), g.size.end());
    }
  }
  if (equal_counts && count > 0 && *largest > 1) {
    if (!g.equal_sizes()) {
      throw_invalid_argument(where, ": equal_counts needs groups of equal sizes", unequal());
    }
    // Bins then hold multiples of s > 1 items: counts within one of each other are equal.
    if (count % k != 0) {
      throw_infeasible(where, ": equal_counts with groups of ", g.size.front(), " items needs ",
                       "the number of groups (", count, ") to be a multiple of the bins (", k, ")");
    }
  }
  return out;
}

} // namespace detail

} // namespace orch
