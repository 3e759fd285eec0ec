// SPDX-License-Identifier: Apache-2.0
// What every fuzz target shares: a reader that turns the fuzzer's bytes into bounded integers
// (so a target explores shapes, not parse failures of its own encoding), and ORCH_FUZZ_CHECK,
// which reports a broken invariant and aborts (libFuzzer records the input as a crash; the
// corpus replay test fails).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>

namespace orch::fuzz {

/// Reads integers from the front of the input; once the bytes run out every read returns the
/// low end of its range, so every input is valid and short inputs mean small cases.
class input {
public:
  input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  [[nodiscard]] bool empty() const noexcept { return pos_ >= size_; }
  [[nodiscard]] std::size_t remaining() const noexcept { return empty() ? 0 : size_ - pos_; }

  /// The next `bytes` bytes (≤ 8) as a little-endian unsigned integer.
  std::uint64_t raw(int bytes) {
    std::uint64_t v = 0;
    for (int b = 0; b < bytes && pos_ < size_; ++b) {
      v |= std::uint64_t{data_[pos_++]} << (8 * b);
    }
    return v;
  }
  /// An integer in [lo, hi] from as few bytes as the range needs.
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
    const auto span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
    int bytes = 1;
    while (bytes < 8 && (span >> (8 * bytes)) != 0) {
      ++bytes;
    }
    const std::uint64_t r = raw(bytes);
    const std::uint64_t v = span == ~std::uint64_t{0} ? r : r % (span + 1);
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + v);
  }
  bool boolean() { return (raw(1) & 1U) != 0; }
  /// A value that is usually small but sometimes huge or at a type's edge: what overflow and
  /// allocation checks must survive.
  std::int64_t length(std::int64_t small_max) {
    switch (uniform(0, 15)) {
    case 0:
      return 0;
    case 1:
      return std::int64_t{1} << uniform(20, 62);
    case 2:
      return -uniform(1, 3);
    default:
      return uniform(0, small_max);
    }
  }
  /// The rest of the input.
  std::string_view rest() {
    const std::string_view out(reinterpret_cast<const char*>(data_) + pos_, remaining());
    pos_ = size_;
    return out;
  }

private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

[[noreturn]] inline void fail(const char* target, const char* file, int line, const char* what) {
  std::fprintf(stderr, "%s:%d: fuzz target %s: invariant broken: %s\n", file, line, target, what);
  std::abort();
}

} // namespace orch::fuzz

/// Checks an invariant of a fuzz target (never compiled out: fuzzers run with NDEBUG too).
#define ORCH_FUZZ_CHECK(cond)                                                                      \
  ((cond) ? static_cast<void>(0) : ::orch::fuzz::fail(ORCH_FUZZ_NAME, __FILE__, __LINE__, #cond))
