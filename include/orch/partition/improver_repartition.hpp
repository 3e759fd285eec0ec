// SPDX-License-Identifier: Apache-2.0
/// The local search's last resort: the best split of two bins' items, over every subset.
#pragma once

#include <orch/detail/primitives/checked.hpp>
#include <orch/partition/budget.hpp>
#include <orch/partition/improver_state.hpp>
#include <orch/partition/improver_steps.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace orch::detail {

/// Level 3 of the search: the best split of M's and b's items together, over every subset
/// (Gray code order, one work unit each). It covers every k-for-l swap between the two bins,
/// so it runs only once moves and pair swaps found nothing, and only when the two bins hold
/// few items together (2^m subsets). Owned by the improver so that its scratch is reused.
class improver_repartition {
public:
  /// Applies the best split of the pair under `steps` (its window and the state's limits)
  /// when it improves; true when it did. Pairs of more than `max_items` (or 24) items are
  /// skipped. Spends one unit of `meter` per subset and stops when it runs out.
  bool run(improver_steps& steps, int max_items, work_meter& meter) {
    improver_state& st = steps.state();
    const transfer_window& w = steps.window();
    const bin_rules& rules = st.rules();
    const auto mi = st.items(w.m);
    const auto bi = st.items(w.b);
    const std::size_t np = mi.size() + bi.size();
    if (np > static_cast<std::size_t>(max_items) || np > 24) {
      return false;
    }
    pool_.clear();
    for (const auto& e : mi) {
      pool_.push_back(e);
    }
    for (const auto& e : bi) {
      pool_.push_back(e);
    }
    const cost_t load_m = st.load(w.m);
    const cost_t load_b = st.load(w.b);
    const cost_t both_res = st.resource(w.m) + st.resource(w.b);
    // Start from "everything in b" and flip items in Gray-code order.
    cost_t sum = 0;
    cost_t res = 0;
    index_t cnt = 0;
    std::uint32_t mask = 0;
    std::uint32_t current = 0; // M's present members as a mask
    for (std::size_t t = 0; t < mi.size(); ++t) {
      current |= 1u << t;
    }
    bool found = false;
    int128 best_score = 0;
    std::uint32_t best_mask = current;
    const std::uint32_t count = 1u << np;
    for (std::uint32_t g = 1; g < count; ++g) {
      const auto bit = static_cast<std::size_t>(__builtin_ctz(g));
      mask ^= 1u << bit;
      const bool now_in = (mask >> bit) & 1u;
      sum += now_in ? pool_[bit].c : -pool_[bit].c;
      res += now_in ? rules.res(pool_[bit].id) : -rules.res(pool_[bit].id);
      cnt += now_in ? 1 : -1;
      if (!meter.spend()) {
        break;
      }
      const cost_t d = load_m - sum;
      if (d < 1 || d > w.dmax || mask == current) {
        continue;
      }
      if (rules.has_counts() &&
          (!rules.count_ok(cnt) || !rules.count_ok(static_cast<index_t>(np) - cnt))) {
        continue;
      }
      if (rules.has_resource() &&
          (res > rules.resource_capacity || both_res - res > rules.resource_capacity)) {
        continue;
      }
      if (d >= w.good_lo && d <= w.good_hi) {
        best_mask = mask; // reaches the target: nothing scores better
        found = true;
        break;
      }
      int128 score = 0;
      if (rules.has_speeds()) {
        const int128 a = static_cast<int128>(sum) * rules.speed(w.b);
        const int128 c = static_cast<int128>(load_b + d) * rules.speed(w.m);
        score = a > c ? a : c;
      } else {
        score = std::max(sum, load_b + d);
      }
      if (!found || score < best_score) {
        found = true;
        best_score = score;
        best_mask = mask;
      }
    }
    if (!found) {
      return false;
    }
    for (std::size_t t = 0; t < np; ++t) {
      const bool was_m = (current >> t) & 1u;
      const bool to_m = (best_mask >> t) & 1u;
      if (was_m && !to_m) {
        st.move_item(pool_[t].id, w.m, w.b);
      } else if (!was_m && to_m) {
        st.move_item(pool_[t].id, w.b, w.m);
      }
    }
    steps.settle();
    return true;
  }

private:
  std::vector<improver_state::entry> pool_; // both bins' items, M's first
};

} // namespace orch::detail
