// SPDX-License-Identifier: Apache-2.0
/// Grouping items by a small integer key: the stable counting sort every stage uses (items by
/// rank, by node, by bin, by parent, by receiver).
#pragma once

#include <orch/detail/primitives/uninit_vector.hpp>
#include <orch/types.hpp>

#include <cstddef>
#include <span>
#include <vector>

namespace orch::detail {

/// Items grouped by a key in [0, keys): order[first[k]..first[k+1]) lists, in increasing
/// index, the items with key k.
struct grouping {
  std::vector<index_t> first;   // keys + 1 entries
  uninit_vector<index_t> order; // a permutation of the items: every entry written once

  /// The items with key k, in increasing index.
  [[nodiscard]] std::span<const index_t> group(std::size_t k) const noexcept {
    const auto from = static_cast<std::size_t>(first[k]);
    return {order.data() + from, static_cast<std::size_t>(first[k + 1]) - from};
  }
};

/// Groups items 0..n-1 by key_of(i) in [0, keys) (the caller guarantees the range): a stable
/// counting sort. Complexity: O(n + keys), two passes over the keys.
template <class KeyOf>
[[nodiscard]] grouping group_by(std::size_t n, std::size_t keys, KeyOf key_of) {
  grouping g;
  g.first.assign(keys + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    ++g.first[static_cast<std::size_t>(key_of(i)) + 1];
  }
  for (std::size_t k = 0; k < keys; ++k) {
    g.first[k + 1] += g.first[k];
  }
  g.order.resize(n);
  std::vector<index_t> next(g.first.begin(), g.first.end() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    g.order[static_cast<std::size_t>(next[static_cast<std::size_t>(key_of(i))]++)] =
        static_cast<index_t>(i);
  }
  return g;
}

/// group_by over an array of keys.
template <class Key>
[[nodiscard]] grouping group_by_key(std::span<const Key> key, std::size_t keys) {
  return group_by(key.size(), keys, [key](std::size_t i) { return key[i]; });
}

} // namespace orch::detail
