// SPDX-License-Identifier: Apache-2.0
/// Peer: verl's k-way Karmarkar–Karp (largest differencing), unequal and equal-count forms.
#pragma once

#include "peer_input.hpp"

#include <orch/config.hpp>
#include <orch/partition/result.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <queue>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace orch_bench::peers {

namespace detail {

/// One subset of a verl "State": its sum, its item count and its items as a linked list (the
/// list order is verl's insertion order; only its first item is ever compared).
struct kk_set {
  orch::cost_t sum = 0;
  std::int64_t count = 0;
  std::uint32_t head = 0;
  std::uint32_t tail = 0;
};

/// verl's `Set.__lt__`: sum, then item count, then the item lists compared lexicographically
/// as (index, value) tuples. Two sets of one run never share an item, so the lists differ in
/// their first index: comparing the heads decides exactly as Python's list comparison does.
[[nodiscard]] inline bool kk_set_less(const kk_set& a, const kk_set& b) noexcept {
  if (a.sum != b.sum) {
    return a.sum < b.sum;
  }
  if (a.count != b.count) {
    return a.count < b.count;
  }
  return a.head < b.head;
}

/// A verl "State": k subsets, kept in decreasing set order. Only the non-empty subsets are
/// stored; the k − size() empty ones are implicit and always sort last (an empty set has sum
/// 0 and count 0, below any non-empty set, even one of zero-cost items).
using kk_state = std::vector<kk_set>;

/// max − min of the state's subset sums (verl's `spread`).
[[nodiscard]] inline orch::cost_t kk_spread(const kk_state& s, std::size_t k) noexcept {
  const orch::cost_t smallest = s.size() == k ? s.back().sum : 0;
  return s.front().sum - smallest;
}

/// verl's merge: subset i of `a` absorbs subset k−1−i of `b` (largest with smallest), then the
/// subsets are re-sorted; `a`'s items stay first in each list. Only the positions where `b`
/// has a subset change: they are combined (or copied from `b`) into `scratch`, sorted, and
/// merged back into `a`'s untouched sorted prefix from the end, in place. O(nb log nb) plus
/// the number of `a`'s subsets that shift.
inline void kk_merge(kk_state& a, const kk_state& b, std::size_t k,
                     std::vector<std::uint32_t>& next, kk_state& scratch) {
  const std::size_t na = a.size();
  const std::size_t nb = b.size();
  const auto desc = [](const kk_set& x, const kk_set& y) { return kk_set_less(y, x); };
  // Positions [k − nb, na) hold a subset of both; after them only `b` has one (b[j] for
  // j < k − na); before them only `a`.
  const std::size_t keep = std::min(na, k - nb);
  scratch.clear();
  for (std::size_t i = keep; i < na; ++i) {
    kk_set s = a[i];
    const kk_set& t = b[k - 1 - i];
    s.sum += t.sum; // bounded by Σ costs, which the caller checked
    s.count += t.count;
    next[s.tail] = t.head;
    s.tail = t.tail;
    scratch.push_back(s);
  }
  for (std::size_t j = 0; j < std::min(nb, k - std::min(na, k)); ++j) {
    scratch.push_back(b[j]);
  }
  std::sort(scratch.begin(), scratch.end(), desc);
  a.resize(keep + scratch.size());
  std::size_t i = keep;
  std::size_t j = scratch.size();
  std::size_t w = a.size();
  while (j > 0) {
    // Fill from the smallest end; subsets never compare equal (distinct first items).
    if (i > 0 && kk_set_less(a[i - 1], scratch[j - 1])) {
      a[--w] = a[--i];
    } else {
      a[--w] = scratch[--j];
    }
  }
}

} // namespace detail

/// verl's `karmarkar_karp(seqlen_list, k_partitions, equal_size)` from
/// `verl/utils/seqlen_balancing.py` (volcengine/verl, the function behind
/// `get_seqlen_balanced_partitions`, used by `RayPPOTrainer._balance_batch` with
/// `equal_size=True` and by `rearrange_micro_batches` with `equal_size=False`), re-implemented
/// in our own C++ with the same decisions:
/// - items sorted by (cost, index) ascending;
/// - unequal: one state per item (that item in one subset, k−1 empty subsets);
///   equal: one state per run of k consecutive items of that order, one item per subset
///   (the balanced LDM; n must be a multiple of k, verl asserts it);
/// - repeatedly pop the two states of largest spread (ties: larger top subset first), merge
///   subset i of the first with subset k−1−i of the second, re-sort, push back;
/// - bin b is the b-th subset of the final state (subsets in decreasing order).
/// The heap order is total (top subsets of different states never compare equal), so the
/// result is the one verl's Python computes on the same costs, bit for bit.
/// Differences from verl: costs are taken as given (verl first maps lengths to tokens or to
/// its `24576·L + L²` workload); n < k returns empty bins where verl's wrapper asserts.
///
/// Complexity: O(n log n + Σ over merges of the subsets that move), at most O(n · k); memory
/// O(n + k · live states). The Python original re-sorts all k subsets per merge.
/// Guarantee: none stated by verl. Unequal form: LDM, worst case reported between
/// 4/3 − 1/(3(k−1)) and 4/3 − 1/(3k) of optimum (Michiels et al. 2003, not re-checked).
/// Equal form: balanced LDM, worst case 2 − 1/k (Michiels, Korst, Aarts, van Leeuwen,
/// STACS 2003).
/// Throws: orch::invalid_argument (k ≤ 0, a negative cost, equal form with n not a multiple
/// of k, more than 2^32 − 1 items), orch::overflow (Σ costs).
[[nodiscard]] inline orch::partition_result verl_kk(std::span<const orch::cost_t> costs,
                                                    orch::rank_t bins, bool equal_size) {
  const char* name = equal_size ? "verl_kk_equal" : "verl_kk";
  check_input(costs, bins, name);
  const std::size_t n = costs.size();
  const auto k = static_cast<std::size_t>(bins);
  if (n >= std::numeric_limits<std::uint32_t>::max()) {
    orch::throw_invalid_argument(name, ": ", n, " items exceed the limit of 2^32 - 1");
  }
  if (equal_size && n % k != 0) {
    orch::throw_invalid_argument(name, ": equal counts need n a multiple of k, got n = ", n,
                                 " items for k = ", bins, " bins");
  }
  std::vector<orch::rank_t> bin_of(n, 0);
  if (n == 0) {
    return orch::make_partition_result(costs, std::move(bin_of), bins, name);
  }
  std::vector<std::uint32_t> ascending(n);
  for (std::size_t i = 0; i < n; ++i) {
    ascending[i] = static_cast<std::uint32_t>(i);
  }
  std::sort(ascending.begin(), ascending.end(), [&](std::uint32_t a, std::uint32_t b) {
    return costs[a] != costs[b] ? costs[a] < costs[b] : a < b;
  });
  const auto single = [&](std::uint32_t item) {
    return detail::kk_set{costs[item], 1, item, item};
  };
  const auto desc = [](const detail::kk_set& x, const detail::kk_set& y) {
    return detail::kk_set_less(y, x);
  };

  std::vector<detail::kk_state> states;
  if (equal_size) {
    states.reserve(n / k);
    for (std::size_t offset = 0; offset < n; offset += k) {
      detail::kk_state s;
      s.reserve(k);
      for (std::size_t i = 0; i < k; ++i) {
        s.push_back(single(ascending[offset + i]));
      }
      std::sort(s.begin(), s.end(), desc);
      states.push_back(std::move(s));
    }
  } else {
    states.reserve(n);
    for (const std::uint32_t item : ascending) {
      states.push_back(detail::kk_state{single(item)});
    }
  }

  // Heap entries carry the state's key so comparisons never touch the states themselves.
  struct entry {
    orch::cost_t spread;
    detail::kk_set top;
    std::size_t state;
  };
  // std::priority_queue pops the largest: "larger" = larger spread, then larger top subset.
  const auto lower_priority = [](const entry& a, const entry& b) {
    if (a.spread != b.spread) {
      return a.spread < b.spread;
    }
    return detail::kk_set_less(a.top, b.top);
  };
  std::priority_queue<entry, std::vector<entry>, decltype(lower_priority)> heap(lower_priority);
  for (std::size_t s = 0; s < states.size(); ++s) {
    heap.push({detail::kk_spread(states[s], k), states[s].front(), s});
  }
  std::vector<std::uint32_t> next(n, 0); // linked lists of the subsets' items
  detail::kk_state scratch;
  while (heap.size() > 1) {
    const std::size_t first = heap.top().state;
    heap.pop();
    const std::size_t second = heap.top().state;
    heap.pop();
    detail::kk_merge(states[first], states[second], k, next, scratch);
    detail::kk_state().swap(states[second]);
    heap.push({detail::kk_spread(states[first], k), states[first].front(), first});
  }
  const detail::kk_state& final_state = states[heap.top().state];
  for (std::size_t b = 0; b < final_state.size(); ++b) {
    std::uint32_t item = final_state[b].head;
    for (std::int64_t c = 0; c < final_state[b].count; ++c) {
      bin_of[item] = static_cast<orch::rank_t>(b);
      item = next[item];
    }
  }
  return orch::make_partition_result(costs, std::move(bin_of), bins, name);
}

} // namespace orch_bench::peers
