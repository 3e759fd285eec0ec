// SPDX-License-Identifier: Apache-2.0
/// A platform-independent 64-bit hash over a sequence of 64-bit words (plan agreement checks).
#pragma once

#include <cstdint>

namespace orch::detail {

/// Streaming hash of 64-bit words; the value depends only on the sequence of words, never on
/// the platform, compiler or byte order (it works on integer values, which is the same as
/// reading their little-endian serialisation word by word).
///
/// Algorithm (documented in docs/plans.md so other implementations can reproduce it):
///   state  h0 = 0x243F6A8885A308D3 (the first 64 fraction bits of pi)
///   absorb h  = rotl64(h ^ (w · 0x9E3779B97F4A7C15), 29) · 0xC2B2AE3D27D4EB4F  (mod 2^64)
///   final  x  = h ^ n  (n = number of words absorbed), then the splitmix64 finaliser:
///          x ^= x >> 30; x ·= 0xBF58476D1CE4E5B9; x ^= x >> 27; x ·= 0x94D049BB133111EB;
///          x ^= x >> 31.
/// Both multipliers are odd, so every absorb step is a bijection of the state for a fixed word:
/// two sequences that differ in one word always reach different states at that point.
/// Not cryptographic: it detects disagreement, it does not resist an adversary.
class word_hash {
public:
  static constexpr std::uint64_t initial = 0x243F6A8885A308D3ULL;
  /// The absorb step on a bare state (for callers that run several chains side by side and
  /// count the words themselves).
  [[nodiscard]] static constexpr std::uint64_t absorb(std::uint64_t h,
                                                      std::uint64_t word) noexcept {
    return absorb_spread(h, spread(word));
  }
  /// The absorb step in two halves, for a word that several chains absorb: spread it once.
  [[nodiscard]] static constexpr std::uint64_t spread(std::uint64_t word) noexcept {
    return word * 0x9E3779B97F4A7C15ULL;
  }
  [[nodiscard]] static constexpr std::uint64_t absorb_spread(std::uint64_t h,
                                                             std::uint64_t spread_word) noexcept {
    const std::uint64_t x = h ^ spread_word;
    return ((x << 29) | (x >> 35)) * 0xC2B2AE3D27D4EB4FULL;
  }
  /// The final step on a bare state after `n` words.
  [[nodiscard]] static constexpr std::uint64_t finish(std::uint64_t h, std::uint64_t n) noexcept {
    std::uint64_t x = h ^ n;
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ULL;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBULL;
    x ^= x >> 31;
    return x;
  }

  /// Absorbs one word (signed values are taken modulo 2^64, i.e. two's complement).
  constexpr void add(std::uint64_t word) noexcept {
    h_ = absorb(h_, word);
    ++n_;
  }
  /// Absorbs a signed value as its two's complement 64-bit pattern.
  constexpr void add_signed(std::int64_t value) noexcept { add(static_cast<std::uint64_t>(value)); }

  /// The hash of everything absorbed so far (the state is not changed).
  [[nodiscard]] constexpr std::uint64_t value() const noexcept { return finish(h_, n_); }

private:
  std::uint64_t h_ = initial;
  std::uint64_t n_ = 0;
};

} // namespace orch::detail
