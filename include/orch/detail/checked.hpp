// SPDX-License-Identifier: Apache-2.0
/// Overflow-checked 64-bit integer arithmetic for quantities that decide a plan.
#pragma once

#include <orch/config.hpp>

#include <cstdint>

namespace orch::detail {

/// 128-bit signed integer for products that can exceed 64 bits (l², a·l²). __extension__
/// keeps -Wpedantic quiet: GCC and Clang both provide the type on 64-bit targets.
__extension__ typedef __int128 int128;

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
