// SPDX-License-Identifier: Apache-2.0
/// The plan-hash agreement protocol: the words each rank contributes to ONE all-reduce (max of
/// every hash h and of ~h) and how the reduced words decide whether all ranks hold the same
/// plans, with the error every rank raises when they do not.
#pragma once

#include <orch/config.hpp>
#include <orch/transport/errors.hpp>
#include <orch/types.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace orch::transport {

/// Most hashes one agreement checks (a node-wise exchange needs 2; a step with every phase's
/// plans fits too).
inline constexpr std::size_t max_agreed_hashes = 8;

/// The 2·n words rank contributes for hashes h_0 .. h_{n-1}: words[i] = h_i and
/// words[n + i] = ~h_i. All-reduced with the unsigned 64-bit maximum (MPI_MAX on
/// MPI_UINT64_T, ncclMax on ncclUint64), word i becomes max_r h_i and word n + i becomes
/// max_r ~h_i = ~min_r h_i: one collective yields both the largest and the smallest hash, and
/// all ranks agree on h_i exactly when the two are equal.
struct agreement_words {
  std::array<std::uint64_t, 2 * max_agreed_hashes> words{};
  std::size_t hashes = 0; ///< n

  /// The words to all-reduce in place (2·n of them). Complexity: O(1).
  [[nodiscard]] std::span<std::uint64_t> span() noexcept { return {words.data(), 2 * hashes}; }
  /// Read-only view of the words. Complexity: O(1).
  [[nodiscard]] std::span<const std::uint64_t> span() const noexcept {
    return {words.data(), 2 * hashes};
  }
};

/// The agreement words of `hashes`.
/// Complexity: O(n). Throws: orch::invalid_argument (no hash, or more than max_agreed_hashes).
[[nodiscard]] inline agreement_words make_agreement_words(std::span<const std::uint64_t> hashes) {
  if (hashes.empty() || hashes.size() > max_agreed_hashes) {
    throw_invalid_argument("orch::transport::make_agreement_words: ", hashes.size(),
                           " hashes, between 1 and ", max_agreed_hashes);
  }
  agreement_words w;
  w.hashes = hashes.size();
  for (std::size_t i = 0; i < hashes.size(); ++i) {
    w.words[i] = hashes[i];
    w.words[hashes.size() + i] = ~hashes[i];
  }
  return w;
}

/// What the reduced words say: all ranks agree, or hash `first_mismatch` ranges over
/// [min, max] across the ranks.
struct agreement_verdict {
  bool agree = true;
  std::size_t first_mismatch = 0; ///< meaningful when !agree
  std::uint64_t min = 0;          ///< smallest hash any rank holds at first_mismatch
  std::uint64_t max = 0;          ///< largest hash any rank holds at first_mismatch
};

/// Decides agreement from the all-reduced words (2·n of them, reduced with the maximum).
/// Every rank reduces to the same words, so every rank reaches the same verdict.
/// Complexity: O(n). Throws: orch::invalid_argument (an odd or out-of-range word count).
[[nodiscard]] inline agreement_verdict decide_agreement(std::span<const std::uint64_t> reduced) {
  if (reduced.empty() || reduced.size() % 2 != 0 || reduced.size() > 2 * max_agreed_hashes) {
    throw_invalid_argument("orch::transport::decide_agreement: ", reduced.size(),
                           " reduced words, an even number between 2 and ", 2 * max_agreed_hashes);
  }
  const std::size_t n = reduced.size() / 2;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t max = reduced[i];
    const std::uint64_t min = ~reduced[n + i];
    if (max != min) {
      return {false, i, min, max};
    }
  }
  return {};
}

/// Throws plan_mismatch_error unless the reduced words say that every rank holds `mine`.
/// The message names `where`, the rank, its own hash and the smallest and largest hash of any
/// rank — with two distinct plans, both hashes.
/// Complexity: O(n).
/// Throws: plan_mismatch_error; orch::invalid_argument (word counts that do not match).
inline void check_agreement(std::span<const std::uint64_t> mine,
                            std::span<const std::uint64_t> reduced, rank_t rank,
                            const char* where) {
  if (reduced.size() != 2 * mine.size()) {
    throw_invalid_argument(where, ": ", mine.size(), " hashes but ", reduced.size(),
                           " reduced words");
  }
  const agreement_verdict v = decide_agreement(reduced);
  if (!v.agree) {
    throw plan_mismatch_error(orch::detail::message(
        where, ": rank ", rank, " holds plan hash ", mine[v.first_mismatch], " (hash ",
        v.first_mismatch, " of ", mine.size(), ") but the ranks' hashes range from ", v.min, " to ",
        v.max, ": the ranks built different plans; no payload was moved"));
  }
}

} // namespace orch::transport
