// SPDX-License-Identifier: Apache-2.0
/// Version, assertions and the orch::error hierarchy shared by every orch header.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#define ORCH_VERSION_MAJOR 0
#define ORCH_VERSION_MINOR 1
#define ORCH_VERSION_PATCH 0
/// Encoded as major * 10000 + minor * 100 + patch.
#define ORCH_VERSION (ORCH_VERSION_MAJOR * 10000 + ORCH_VERSION_MINOR * 100 + ORCH_VERSION_PATCH)

/// ORCH_ASSERT(cond) checks an internal invariant (a programmer error, never bad user input).
/// Active unless NDEBUG is defined or ORCH_DISABLE_ASSERT is; users may define their own
/// ORCH_ASSERT before including any orch header.
#ifndef ORCH_ASSERT
#if defined(NDEBUG) || defined(ORCH_DISABLE_ASSERT)
#define ORCH_ASSERT(cond) static_cast<void>(0)
#else
#include <cstdio>
#include <cstdlib>
#define ORCH_ASSERT(cond)                                                                          \
  ((cond) ? static_cast<void>(0)                                                                   \
          : (std::fprintf(stderr, "%s:%d: orch internal assertion failed: %s\n", __FILE__,         \
                          __LINE__, #cond),                                                        \
             std::abort()))
#endif
#endif

/// ORCH_COMPILED selects compiled mode; linking the CMake target orch::compiled defines it
/// (see docs/benchmarks.md, "Compile cost"). In that mode the headers only declare the heavy
/// non-template entry points (orch::orchestrate), which the orch_compiled library defines
/// once; without it (the default) orch is header-only and ORCH_INLINE makes those definitions
/// inline. The declaration is the same in both modes; define ORCH_COMPILED in every TU of a
/// program or in none.
#ifdef ORCH_COMPILED
#define ORCH_INLINE
#else
#define ORCH_INLINE inline
#endif

namespace orch {

/// Version of the headers in use, as major * 10000 + minor * 100 + patch.
inline constexpr int version = ORCH_VERSION;

/// Base of every exception orch throws. Catch `orch::error const&` for all of them; each
/// concrete type also derives from the fitting standard exception, so `std::exception` works.
class error {
public:
  virtual ~error() = default;
  /// The message: names the function, the item or rank, and the limit that was broken.
  [[nodiscard]] virtual const char* what() const noexcept = 0;

protected:
  error() = default;
  error(const error&) = default;
  error& operator=(const error&) = default;
};

/// An argument is malformed: negative length, zero ranks, mismatched sizes, bad slot.
class invalid_argument final : public std::invalid_argument, public error {
public:
  using std::invalid_argument::invalid_argument;
  [[nodiscard]] const char* what() const noexcept override { return std::invalid_argument::what(); }
};

/// Well-formed input that no assignment can satisfy (a capacity below the largest item, ...).
class infeasible final : public std::runtime_error, public error {
public:
  using std::runtime_error::runtime_error;
  [[nodiscard]] const char* what() const noexcept override { return std::runtime_error::what(); }
};

/// An integer quantity that decides a plan does not fit its type (cost, bytes, offsets).
class overflow final : public std::overflow_error, public error {
public:
  using std::overflow_error::overflow_error;
  [[nodiscard]] const char* what() const noexcept override { return std::overflow_error::what(); }
};

namespace detail {

/// Concatenates streamable parts into one message (no std::format in libstdc++ 12).
template <class... Parts>
[[nodiscard]] std::string message(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

} // namespace detail

/// Throws orch::invalid_argument with the concatenated message parts.
template <class... Parts>
[[noreturn]] void throw_invalid_argument(const Parts&... parts) {
  throw invalid_argument(detail::message(parts...));
}

/// Throws orch::infeasible with the concatenated message parts.
template <class... Parts>
[[noreturn]] void throw_infeasible(const Parts&... parts) {
  throw infeasible(detail::message(parts...));
}

/// Throws orch::overflow with the concatenated message parts.
template <class... Parts>
[[noreturn]] void throw_overflow(const Parts&... parts) {
  throw overflow(detail::message(parts...));
}

} // namespace orch
