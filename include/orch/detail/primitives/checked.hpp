// SPDX-License-Identifier: Apache-2.0
/// Overflow-checked 64-bit integer arithmetic for quantities that decide a plan.
#pragma once

#include <orch/config.hpp>

#include <cstdint>
#include <string>

namespace orch::detail {

/// 128-bit signed integer for products that can exceed 64 bits (l², a·l²). __extension__
/// keeps -Wpedantic quiet: GCC and Clang both provide the type on 64-bit targets.
__extension__ typedef __int128 int128;

/// The decimal digits of a 128-bit integer, for messages (streams cannot print __int128, and
/// a cast to a floating type would print 1e+05 for an integer).
[[nodiscard]] inline std::string int128_string(int128 v) {
  if (v == 0) {
    return "0";
  }
  const bool negative = v < 0;
  // The magnitude as unsigned, correct even for the most negative value.
  __extension__ unsigned __int128 m =
      negative ? static_cast<unsigned __int128>(-(v + 1)) + 1 : static_cast<unsigned __int128>(v);
  std::string digits;
  while (m > 0) {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(m % 10)));
    m /= 10;
  }
  return negative ? "-" + digits : digits;
}

/// a + b, or throws orch::overflow naming `what`.
[[nodiscard]] inline std::int64_t checked_add(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) {
    throw_overflow(what, ": ", a, " + ", b, " overflows int64");
  }
  return r;
}

/// a * b, or throws orch::overflow naming `what`.
[[nodiscard]] inline std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) {
    throw_overflow(what, ": ", a, " * ", b, " overflows int64");
  }
  return r;
}

/// ceil(a / b) for a >= 0, b > 0.
[[nodiscard]] constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) noexcept {
  return a / b + (a % b != 0 ? 1 : 0);
}

} // namespace orch::detail
