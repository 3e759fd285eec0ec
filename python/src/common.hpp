// SPDX-License-Identifier: Apache-2.0
// Glue shared by the binding files: numpy arrays in (checked and converted once) and out
// (owning their memory, or read-only views kept alive by the object that holds the data).
#pragma once

#include <orch/config.hpp>
#include <orch/orchestrate/strategy.hpp>
#include <orch/partition/algorithm.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace orch::python {

namespace nb = nanobind;
using namespace nanobind::literals;

/// A Python argument passed through as the object it is (converted by the binding), whose
/// type in the signature and the stubs is `Tag::name` (e.g. numpy.typing.ArrayLike).
template <class Tag>
struct py_arg {
  nb::object obj;
  [[nodiscard]] bool is_none() const { return obj.is_none(); }
  operator nb::handle() const { return obj; } // NOLINT(google-explicit-constructor)
};

struct array_tag {
  static constexpr auto name = nb::detail::const_name("numpy.typing.ArrayLike");
};
struct arrays_tag {
  static constexpr auto name =
      nb::detail::const_name("collections.abc.Sequence[numpy.typing.ArrayLike]");
};
struct names_tag {
  static constexpr auto name = nb::detail::const_name("collections.abc.Sequence[str]");
};
struct fields_tag {
  static constexpr auto name =
      nb::detail::const_name("collections.abc.Sequence[str | tuple[str, int]]");
};
struct media_tag {
  static constexpr auto name =
      nb::detail::const_name("collections.abc.Sequence[tuple[str, int, int]]");
};
struct algorithm_tag {
  static constexpr auto name = nb::detail::const_name("PartitionAlgorithm | str");
};
struct strategy_tag {
  static constexpr auto name = nb::detail::const_name("Strategy | str");
};
/// An integer array-like (converted by to_array).
using array_like = py_arg<array_tag>;
using arrays_like = py_arg<arrays_tag>;
using names_like = py_arg<names_tag>;
using fields_like = py_arg<fields_tag>;
using media_like = py_arg<media_tag>;
using algorithm_like = py_arg<algorithm_tag>;
using strategy_like = py_arg<strategy_tag>;

/// A 1-D numpy array returned to Python.
template <class T>
using array_out = nb::ndarray<nb::numpy, T, nb::ndim<1>>;
/// A read-only 1-D numpy array returned to Python (a view of C++ data kept alive by `owner`).
template <class T>
using array_view = nb::ndarray<nb::numpy, const T, nb::ndim<1>>;

/// An input converted once to a contiguous 1-D array of T; `keep` holds the converted array
/// (the caller's own array when it already was one: no copy), `span` its elements.
template <class T>
struct array_in {
  nb::object keep;
  std::span<const T> span;
};

/// numpy's asarray / ascontiguousarray with the contract's checks: an integer array-like of
/// one dimension (an empty sequence of any dtype counts as empty integers), values that fit
/// T. Anything else raises ValueError naming `name`, the function and the argument
/// ("partition: costs", "table_from_metadata: buffers[2]").
template <class T>
[[nodiscard]] array_in<T> to_array(nb::handle obj, const char* name) {
  static_assert(std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::int32_t>);
  const nb::module_ np = nb::module_::import_("numpy");
  nb::object a = np.attr("asarray")(obj);
  const auto ndim = nb::cast<int>(a.attr("ndim"));
  if (ndim != 1) {
    throw nb::value_error(
        (std::string(name) + ": expected a 1-D integer array, got " + std::to_string(ndim) + "-D")
            .c_str());
  }
  const auto size = nb::cast<std::size_t>(a.attr("size"));
  const nb::object dtype = a.attr("dtype");
  const auto kind = nb::cast<std::string>(dtype.attr("kind"));
  const auto itemsize = nb::cast<int>(dtype.attr("itemsize"));
  if (kind != "i" && kind != "u" && size > 0) {
    throw nb::value_error((std::string(name) + ": expected an integer array, got dtype " +
                           nb::cast<std::string>(nb::str(dtype)))
                              .c_str());
  }
  const bool exact = size == 0 || (kind == "i" && itemsize == static_cast<int>(sizeof(T)));
  const bool fits = exact || (kind == "i" && itemsize < static_cast<int>(sizeof(T))) ||
                    (kind == "u" && itemsize < static_cast<int>(sizeof(T)));
  if (!fits) {
    // Values must survive the conversion: compare the extremes with T's range.
    const nb::object to_int = nb::module_::import_("builtins").attr("int");
    const auto lo = nb::borrow<nb::int_>(to_int(a.attr("min")()));
    const auto hi = nb::borrow<nb::int_>(to_int(a.attr("max")()));
    const bool below = lo < nb::int_(std::numeric_limits<T>::min());
    const bool above = hi > nb::int_(std::numeric_limits<T>::max());
    if (below || above) {
      throw nb::value_error((std::string(name) + ": value " +
                             nb::cast<std::string>(nb::str(below ? lo : hi)) + " does not fit int" +
                             std::to_string(8 * sizeof(T)))
                                .c_str());
    }
  }
  if (!exact || !nb::cast<bool>(a.attr("flags")["C_CONTIGUOUS"])) {
    a = np.attr("ascontiguousarray")(
        a, "dtype"_a = std::is_same_v<T, std::int64_t> ? np.attr("int64") : np.attr("int32"));
  } else if (size == 0) {
    a = np.attr("empty")(0, "dtype"_a = std::is_same_v<T, std::int64_t> ? np.attr("int64")
                                                                        : np.attr("int32"));
  }
  const auto arr = nb::cast<nb::ndarray<const T, nb::ndim<1>, nb::c_contig, nb::device::cpu>>(a);
  return {std::move(a), std::span<const T>(arr.data(), arr.shape(0))};
}

/// A Python-owned numpy array holding `v` (moved, not copied).
template <class T>
[[nodiscard]] array_out<T> to_numpy(std::vector<T>&& v) {
  auto* owned = new std::vector<T>(std::move(v));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return array_out<T>(owned->data(), {owned->size()}, owner);
}

/// A Python-owned numpy array with a copy of `s`.
template <class T>
[[nodiscard]] array_out<T> copy_numpy(std::span<const T> s) {
  return to_numpy(std::vector<T>(s.begin(), s.end()));
}

/// A read-only numpy view of `s`, keeping `owner` (the Python object holding the data) alive.
/// Only for data that never changes or moves while the owner lives.
template <class T>
[[nodiscard]] array_view<T> view_numpy(std::span<const T> s, nb::handle owner) {
  return array_view<T>(s.data(), {s.size()}, owner);
}

/// A read-only numpy view of a vector's elements (see above).
template <class T>
[[nodiscard]] array_view<T> view_numpy(const std::vector<T>& v, nb::handle owner) {
  return view_numpy(std::span<const T>(v), owner);
}

/// The Python object wrapping the C++ instance `x` (to keep it alive under a view).
template <class T>
[[nodiscard]] nb::object self_of(const T& x) {
  return nb::find(&x);
}

/// How an argument looks, for error messages: its type's name ("int", "numpy.float64"), or a
/// tuple's element types ("(str, int, int)").
[[nodiscard]] inline std::string describe(nb::handle h) {
  const auto name = [](nb::handle x) { return nb::cast<std::string>(nb::type_name(x.type())); };
  if (!nb::isinstance<nb::tuple>(h)) {
    return name(h);
  }
  std::string out = "(";
  for (std::size_t i = 0; i < nb::len(h); ++i) {
    out += (i == 0 ? "" : ", ") + name(h[i]);
  }
  return out + ")";
}

/// An enum argument given as the enum or as its tool name ("per_phase", "lpt+ls"); anything
/// else raises TypeError naming `where` (the function).
[[nodiscard]] partition_algorithm algorithm_arg(nb::handle h, const char* where);
[[nodiscard]] orch::strategy strategy_arg(nb::handle h, const char* where);

// One registration function per binding file.
void bind_module(nb::module_& m);
void bind_partition(nb::module_& m);
void bind_plans(nb::module_& m);
void bind_placement(nb::module_& m);
void bind_table(nb::module_& m);
void bind_step(nb::module_& m);

} // namespace orch::python

namespace nanobind::detail {

template <class Tag>
struct type_caster<orch::python::py_arg<Tag>> {
  NB_TYPE_CASTER(orch::python::py_arg<Tag>, Tag::name)
  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    value.obj = borrow(src);
    return true;
  }
  static handle from_cpp(const orch::python::py_arg<Tag>& v, rv_policy, cleanup_list*) noexcept {
    return v.obj.inc_ref();
  }
};

} // namespace nanobind::detail
