// SPDX-License-Identifier: Apache-2.0
/// A std::vector whose resize leaves trivial elements uninitialised, for arrays that are
/// written in full right after (counting sorts, scatters).
#pragma once

#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace orch::detail {

/// std::allocator, except that value-initialisation (vector::resize, vector(n)) leaves
/// trivial elements uninitialised: for arrays that are written in full right after, by a
/// counting sort or another scatter, where zero-filling first would write every page twice.
template <class T>
struct uninit_allocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = uninit_allocator<U>;
  };
  uninit_allocator() = default;
  template <class U>
  uninit_allocator(const uninit_allocator<U>&) noexcept {} // NOLINT: converting, like std's
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U; // default-initialisation: nothing for trivial U
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

/// A vector whose resize does not zero-fill (see uninit_allocator).
template <class T>
using uninit_vector = std::vector<T, uninit_allocator<T>>;

} // namespace orch::detail
