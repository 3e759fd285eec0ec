// SPDX-License-Identifier: Apache-2.0
/// Karmarkar–Karp k-way largest differencing: the method of choice for few items per bin.
#pragma once

#include <orch/config.hpp>
#include <orch/detail/primitives/checked.hpp>
#include <orch/partition/budget.hpp>
#include <orch/partition/lpt.hpp>
#include <orch/partition/order.hpp>
#include <orch/partition/result.hpp>
#include <orch/quality.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <queue>
#include <span>
#include <vector>

namespace orch {

namespace detail {

/// k-way largest differencing over validated input, items given in `order` (cost
/// descending, index ascending).
///
/// Representation: a *partial partition* is up to k subsets with loads relative to its
/// lightest subset; subsets are linked lists of items (next[]), so merging two subsets is
/// O(1). Only non-empty subsets are stored: a partial partition of s subsets stands for s
/// loads plus k − s empty ones, so an item starts as a single entry and memory stays O(n)
/// rather than the O(n·k) of a dense k-tuple per item. Merging A and B (both by load
/// descending) pairs A's i-th heaviest with B's i-th lightest over all k slots, then sorts
/// and normalises by the lightest load when all k slots are used.
/// A max-heap on the spread (heaviest − lightest) picks the two partial partitions to merge,
/// ties by creation order, so the result is fully determined by the input.
class differencing {
public:
  differencing(std::span<const cost_t> costs, std::span<const std::uint32_t> order, rank_t bins)
      : costs_(costs), k_(static_cast<std::size_t>(bins)), next_(costs.size(), none) {
    parts_.reserve(order.size());
    for (const std::uint32_t i : order) {
      part p;
      p.subsets.push_back({costs[i], i, i});
      p.id = static_cast<std::uint64_t>(parts_.size());
      parts_.push_back(std::move(p));
      heap_.push(key_of(parts_.size() - 1));
    }
  }

  /// Runs to completion; false if the meter ran out first (the result is then unusable).
  bool run(work_meter& meter) {
    while (heap_.size() > 1) {
      const std::size_t a = heap_.top().index;
      heap_.pop();
      const std::size_t b = heap_.top().index;
      heap_.pop();
      if (!meter.spend(
              static_cast<std::int64_t>(parts_[a].subsets.size() + parts_[b].subsets.size()))) {
        return false;
      }
      merge(a, b);
      heap_.push(key_of(a));
    }
    return true;
  }

  /// The bin of every item: subset j of the last partial partition becomes bin j.
  [[nodiscard]] std::vector<rank_t> assignment() const {
    std::vector<rank_t> bin_of(costs_.size(), 0);
    if (heap_.empty()) {
      return bin_of;
    }
    const part& last = parts_[heap_.top().index];
    for (std::size_t j = 0; j < last.subsets.size(); ++j) {
      for (std::uint32_t i = last.subsets[j].head; i != none; i = next_[i]) {
        bin_of[i] = static_cast<rank_t>(j);
      }
    }
    return bin_of;
  }

private:
  static constexpr std::uint32_t none = 0xffffffffu;

  struct subset {
    cost_t load; // relative to the lightest subset of the partial partition
    std::uint32_t head;
    std::uint32_t tail;
  };

  struct part {
    std::vector<subset> subsets; // non-empty ones, by load descending, ties by head item
    std::uint64_t id = 0;        // creation order, the heap's tie-break
  };

  struct heap_key {
    cost_t spread;
    std::uint64_t id;
    std::size_t index;
    // std::priority_queue pops the largest: largest spread first, then the oldest part.
    bool operator<(const heap_key& o) const noexcept {
      return spread < o.spread || (spread == o.spread && id > o.id);
    }
  };

  [[nodiscard]] heap_key key_of(std::size_t index) const {
    const part& p = parts_[index];
    const cost_t heaviest = p.subsets.front().load;
    const cost_t lightest = p.subsets.size() < k_ ? 0 : p.subsets.back().load;
    return {heaviest - lightest, p.id, index};
  }

  /// Merges part b into part a (a keeps the result, b is emptied).
  void merge(std::size_t a, std::size_t b) {
    auto& x = parts_[a].subsets;
    auto& y = parts_[b].subsets;
    const std::size_t nx = x.size();
    const std::size_t ny = y.size();
    merged_.clear();
    // Slot i of x (heaviest first; slots ≥ nx are empty) meets slot k−1−i of y: only the
    // non-empty slots are visited, so a merge costs O(nx + ny), not O(k).
    for (std::size_t i = 0; i < nx; ++i) {
      const std::size_t j = k_ - 1 - i;
      subset s = x[i];
      if (j < ny) {
        s.load += y[j].load;
        next_[s.tail] = y[j].head;
        s.tail = y[j].tail;
      }
      merged_.push_back(s);
    }
    for (std::size_t j = 0; j < ny; ++j) {
      if (k_ - 1 - j >= nx) {
        merged_.push_back(y[j]); // meets an empty slot of x
      }
    }
    std::sort(merged_.begin(), merged_.end(), [](const subset& u, const subset& v) {
      return u.load > v.load || (u.load == v.load && u.head < v.head);
    });
    if (merged_.size() == k_) {
      const cost_t lightest = merged_.back().load;
      for (auto& s : merged_) {
        s.load -= lightest;
      }
    }
    x.swap(merged_);
    y.clear();
    y.shrink_to_fit();
    parts_[a].id = next_id_++;
  }

  std::span<const cost_t> costs_;
  std::size_t k_;
  std::vector<std::uint32_t> next_;
  std::vector<part> parts_;
  std::vector<subset> merged_;
  std::priority_queue<heap_key> heap_;
  std::uint64_t next_id_ = 1ull << 40; // merged parts are younger than every input part
};

} // namespace detail

/// Options of karmarkar_karp.
struct kk_options {
  /// Work units (one per subset touched by a merge); when spent, LPT's answer is returned
  /// (algorithm "lpt").
  std::int64_t work_budget = 50'000'000;
};

/// Karmarkar–Karp k-way largest differencing method (LDM): repeatedly merges the two partial
/// partitions with the largest spread, heaviest subset of one with the lightest of the other.
/// Strong when bins get few items (n/k ≲ 5): it balances combinations of items where greedy
/// assigns them one by one.
///
/// Complexity: O(n log n + Σ merge sizes · log k) ⊆ O(n·k log k); for n ≤ k it is O(n log n).
/// Guarantee: max load ≤ (4/3 − 1/(3k)) · OPT (Michiels, Korst, Aarts, van Leeuwen and
/// Spieksma, Discrete Optimization 2012, prove the ratio lies between 4/3 − 1/(3(k−1)) and
/// 4/3 − 1/(3k)); optimal when n ≤ k.
/// Determinism: ties by creation order and item index.
/// Throws: orch::invalid_argument (k ≤ 0, negative cost), orch::overflow (Σ costs).
[[nodiscard]] inline partition_result karmarkar_karp(std::span<const cost_t> costs, rank_t bins,
                                                     const kk_options& options = {}) {
  detail::check_bins(bins, "karmarkar_karp");
  static_cast<void>(detail::total_cost(costs, "karmarkar_karp"));
  const auto order = detail::order_desc(costs);
  detail::differencing kk(costs, order, bins);
  work_meter meter(options.work_budget);
  if (!kk.run(meter)) {
    auto r = lpt(costs, bins);
    r.work = meter.used();
    return r;
  }
  auto r = detail::make_result(costs, kk.assignment(), bins, "kk");
  r.work = meter.used();
  return r;
}

} // namespace orch
