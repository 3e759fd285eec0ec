// SPDX-License-Identifier: Apache-2.0
// The module orch._orch: version, the error types, the enums, and the other files' bindings.
#include "common.hpp"

#include <orch/config.hpp>
#include <orch/orchestrate/strategy.hpp>
#include <orch/partition/algorithm.hpp>

#include <nanobind/nanobind.h>

#include <string>

namespace orch::python {

partition_algorithm algorithm_arg(nb::handle h, const char* where) {
  if (nb::isinstance<nb::str>(h)) {
    return parse_partition_algorithm(nb::cast<std::string>(h));
  }
  partition_algorithm a{};
  if (!nb::try_cast(h, a, false)) {
    throw nb::type_error((std::string(where) +
                          ": algorithm: expected a PartitionAlgorithm or its name, got " +
                          describe(h))
                             .c_str());
  }
  return a;
}

orch::strategy strategy_arg(nb::handle h, const char* where) {
  if (nb::isinstance<nb::str>(h)) {
    return parse_strategy(nb::cast<std::string>(h));
  }
  orch::strategy s{};
  if (!nb::try_cast(h, s, false)) {
    throw nb::type_error(
        (std::string(where) + ": strategy: expected a Strategy or its name, got " + describe(h))
            .c_str());
  }
  return s;
}

void bind_module(nb::module_& m) {
  m.attr("__version__") = ORCH_PROJECT_VERSION;
  m.attr("version") = orch::version;

  // orch::infeasible → orch.InfeasibleError (a ValueError); invalid_argument → ValueError;
  // overflow → OverflowError. The C++ message is kept as the exception's message.
  static nb::exception<orch::infeasible> infeasible_error(m, "InfeasibleError", PyExc_ValueError);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const orch::invalid_argument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const orch::overflow& e) {
      PyErr_SetString(PyExc_OverflowError, e.what());
    }
  });

  nb::enum_<orch::strategy>(m, "Strategy",
                            "How a step is balanced (orch/orchestrate/strategy.hpp).")
      .value("none", orch::strategy::none, "as sampled: nothing moves")
      .value("llm_only", orch::strategy::llm_only, "balance the LLM phase only")
      .value("per_phase", orch::strategy::per_phase, "every phase balanced, bins in order")
      .value("orch", orch::strategy::orch, "every phase balanced, locality-aware placement")
      .def("__str__", [](orch::strategy s) { return std::string(to_string(s)); });

  nb::enum_<partition_algorithm>(
      m, "PartitionAlgorithm",
      "Which partitioner orch.partition runs (orch/partition/algorithm.hpp).")
      .value("automatic", partition_algorithm::automatic, "'auto': chain by regime")
      .value("lpt", partition_algorithm::lpt, "'lpt': longest processing time first")
      .value("lpt_ls", partition_algorithm::lpt_ls, "'lpt+ls': LPT, then local search")
      .value("kk", partition_algorithm::kk, "'kk': Karmarkar-Karp largest differencing")
      .value("multifit", partition_algorithm::multifit, "'multifit'")
      .value("subset_sum", partition_algorithm::subset_sum, "'subset_sum': the paper's reduction")
      .value("exact", partition_algorithm::exact, "'exact': branch and bound")
      .def("__str__", [](partition_algorithm a) { return std::string(to_string(a)); });

  m.def(
      "parse_strategy", [](const std::string& name) { return parse_strategy(name); },
      nb::arg("name"), "The strategy whose tool name is `name`.");
  m.def(
      "parse_partition_algorithm",
      [](const std::string& name) { return parse_partition_algorithm(name); }, nb::arg("name"),
      "The algorithm whose tool name is `name` ('auto', 'lpt+ls', ...).");
}

} // namespace orch::python

NB_MODULE(_orch, m) {
  m.doc() = "orch: batch post-balancing for multimodal LLM training (bindings of the C++ core)";
  orch::python::bind_module(m);
  orch::python::bind_partition(m);
  orch::python::bind_plans(m);
  orch::python::bind_placement(m);
  orch::python::bind_table(m);
  orch::python::bind_step(m);
}
