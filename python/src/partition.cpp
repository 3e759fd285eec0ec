// SPDX-License-Identifier: Apache-2.0
// Cost models (vectorised), orch.partition, the quality helpers, micro-batches and padded
// batches.
#include "common.hpp"

#include <orch/cost.hpp>
#include <orch/partition/microbatch.hpp>
#include <orch/partition/padded.hpp>
#include <orch/partition/partition.hpp>
#include <orch/quality.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>

namespace orch::python {

namespace {

/// The scalar and the vectorised call of a cost model (orch::compute_costs: int64 lengths
/// in, int64 costs out, the first bad item named).
template <class Model>
void def_cost_calls(nb::class_<Model>& cls) {
  // Array errors name the class: "LinearCost: lengths: ...".
  const std::string where = nb::cast<std::string>(cls.attr("__name__")) + ": lengths";
  cls.def(
         "__call__", [](const Model& model, length_t length) { return model(length); },
         nb::arg("length"), "Cost of one length.")
      .def(
          "__call__",
          [where](const Model& model, array_like lengths) {
            const auto in = to_array<length_t>(lengths, where.c_str());
            return to_numpy(compute_costs(model, in.span));
          },
          nb::arg("lengths"), "Costs of an array of lengths (int64 in, int64 out).");
}

partition_result run_partition(array_like costs, rank_t bins, algorithm_like algorithm,
                               index_t max_items_per_bin, bool equal_counts,
                               array_like second_resource, cost_t second_capacity,
                               array_like speeds, array_like groups, std::int64_t work_budget,
                               std::int64_t tolerance_ppm, double time_limit_ms) {
  const auto c = to_array<cost_t>(costs, "partition: costs");
  partition_options o;
  o.algorithm = algorithm_arg(algorithm, "partition");
  o.work_budget = work_budget;
  o.tolerance_ppm = tolerance_ppm;
  o.time_limit_ms = time_limit_ms;
  o.max_items_per_bin = max_items_per_bin;
  o.equal_counts = equal_counts;
  o.second_capacity = second_capacity;
  array_in<cost_t> second;
  array_in<cost_t> speed;
  array_in<index_t> group;
  if (!second_resource.is_none()) {
    second = to_array<cost_t>(second_resource, "partition: second_resource");
    o.second_resource = second.span;
  }
  if (!speeds.is_none()) {
    speed = to_array<cost_t>(speeds, "partition: speeds");
    o.speeds = speed.span;
  }
  if (!groups.is_none()) {
    group = to_array<index_t>(groups, "partition: groups");
    o.groups = group.span;
  }
  nb::gil_scoped_release release;
  return partition(c.span, bins, o);
}

} // namespace

void bind_partition(nb::module_& m) {
  nb::class_<linear_cost> linear(m, "LinearCost", "per_unit * l + per_item (orch::linear_cost).");
  linear
      .def(
          "__init__",
          [](linear_cost* self, cost_t per_unit, cost_t per_item) {
            new (self) linear_cost{per_unit, per_item};
          },
          nb::arg("per_unit") = 1, nb::arg("per_item") = 0)
      .def_rw("per_unit", &linear_cost::per_unit)
      .def_rw("per_item", &linear_cost::per_item);
  def_cost_calls(linear);

  nb::class_<attention_cost> attention(
      m, "AttentionCost", "linear * l + quadratic * l**2 + per_item (orch::attention_cost).");
  attention
      .def(
          "__init__",
          [](attention_cost* self, cost_t lin, cost_t quad, cost_t per_item) {
            new (self) attention_cost{lin, quad, per_item};
          },
          nb::arg("linear") = 1, nb::arg("quadratic") = 0, nb::arg("per_item") = 0)
      .def_rw("linear", &attention_cost::linear)
      .def_rw("quadratic", &attention_cost::quadratic)
      .def_rw("per_item", &attention_cost::per_item)
      .def("__repr__", [](const attention_cost& c) {
        return "AttentionCost(linear=" + std::to_string(c.linear) +
               ", quadratic=" + std::to_string(c.quadratic) +
               ", per_item=" + std::to_string(c.per_item) + ")";
      });
  def_cost_calls(attention);

  nb::class_<memory_cost> memory(m, "MemoryCost",
                                 "bytes_per_unit * l + bytes_per_item (orch::memory_cost).");
  memory
      .def(
          "__init__",
          [](memory_cost* self, cost_t per_unit, cost_t per_item) {
            new (self) memory_cost{per_unit, per_item};
          },
          nb::arg("bytes_per_unit") = 1, nb::arg("bytes_per_item") = 0)
      .def_rw("bytes_per_unit", &memory_cost::bytes_per_unit)
      .def_rw("bytes_per_item", &memory_cost::bytes_per_item);
  def_cost_calls(memory);

  nb::class_<partition_result>(m, "PartitionResult",
                               "An assignment of items to bins with its quality.")
      .def_prop_ro(
          "bin_of",
          [](const partition_result& r) { return view_numpy<rank_t>(r.bin_of, self_of(r)); })
      .def_prop_ro(
          "loads",
          [](const partition_result& r) { return view_numpy<cost_t>(r.loads, self_of(r)); })
      .def_ro("max_load", &partition_result::max_load)
      .def_ro("lower_bound", &partition_result::lower_bound)
      .def_ro("proven_optimal", &partition_result::proven_optimal)
      .def_ro("algorithm", &partition_result::algorithm)
      .def_ro("work", &partition_result::work)
      .def_ro("max_time", &partition_result::max_time)
      .def_ro("time_lower_bound", &partition_result::time_lower_bound)
      .def("ratio_to_lower_bound", &partition_result::ratio_to_lower_bound);

  m.def("partition", &run_partition, nb::arg("costs"), nb::arg("bins"), nb::kw_only(),
        nb::arg("algorithm") = "auto", nb::arg("max_items_per_bin") = 0,
        nb::arg("equal_counts") = false, nb::arg("second_resource").none() = nb::none(),
        nb::arg("second_capacity") = 0, nb::arg("speeds").none() = nb::none(),
        nb::arg("groups").none() = nb::none(), nb::arg("work_budget") = 500'000,
        nb::arg("tolerance_ppm") = 10, nb::arg("time_limit_ms") = 0.0,
        "orch::partition: balance int64 costs into `bins` bins (GIL released).\n\n"
        "algorithm: a PartitionAlgorithm or its tool name ('auto', 'lpt', 'lpt+ls', 'kk',\n"
        "'multifit', 'subset_sum', 'exact'). groups: one id per item (-1: none).");

  m.def(
      "lower_bound",
      [](array_like costs, rank_t bins) {
        const auto c = to_array<cost_t>(costs, "lower_bound: costs");
        return lower_bound(c.span, bins);
      },
      nb::arg("costs"), nb::arg("bins"), "max(ceil(sum / bins), max cost).");
  m.def(
      "bin_loads",
      [](array_like costs, array_like bin_of, rank_t bins) {
        const auto c = to_array<cost_t>(costs, "bin_loads: costs");
        const auto b = to_array<rank_t>(bin_of, "bin_loads: bin_of");
        return to_numpy(bin_loads(c.span, b.span, bins));
      },
      nb::arg("costs"), nb::arg("bin_of"), nb::arg("bins"), "The load of every bin.");

  // Micro-batches (orch/partition/microbatch.hpp).
  m.def(
      "min_microbatches",
      [](array_like tokens, cost_t cap, std::int64_t work_budget) {
        const auto t = to_array<cost_t>(tokens, "min_microbatches: tokens");
        nb::gil_scoped_release release;
        return min_microbatches(t.span, cap, {.work_budget = work_budget});
      },
      nb::arg("tokens"), nb::arg("cap"), nb::kw_only(), nb::arg("work_budget") = 200'000,
      "The smallest micro-batch count whose token totals can each stay within `cap`.");
  m.def(
      "common_microbatches",
      [](array_like per_rank) {
        const auto p = to_array<index_t>(per_rank, "common_microbatches: per_rank");
        return common_microbatches(p.span);
      },
      nb::arg("per_rank"), "The micro-batch count every rank runs: the largest of the minima.");
  m.def(
      "split_microbatches",
      [](array_like costs, array_like tokens, cost_t cap, index_t count, std::int64_t work_budget) {
        const auto c = to_array<cost_t>(costs, "split_microbatches: costs");
        const auto t = to_array<cost_t>(tokens, "split_microbatches: tokens");
        nb::gil_scoped_release release;
        return split_microbatches(c.span, t.span, cap, count, {.work_budget = work_budget});
      },
      nb::arg("costs"), nb::arg("tokens"), nb::arg("cap"), nb::arg("m"), nb::kw_only(),
      nb::arg("work_budget") = 200'000,
      "Splits one rank's items into exactly m micro-batches, each within `cap` tokens.");

  // Padded batches (orch/partition/padded.hpp).
  nb::class_<padded_result>(m, "PaddedResult", "An assignment under the padded cost.")
      .def_prop_ro("bin_of",
                   [](const padded_result& r) { return view_numpy<rank_t>(r.bin_of, self_of(r)); })
      .def_prop_ro("counts",
                   [](const padded_result& r) { return view_numpy<index_t>(r.counts, self_of(r)); })
      .def_prop_ro(
          "longest",
          [](const padded_result& r) { return view_numpy<length_t>(r.longest, self_of(r)); })
      .def_prop_ro("padded",
                   [](const padded_result& r) { return view_numpy<cost_t>(r.padded, self_of(r)); })
      .def_ro("max_padded", &padded_result::max_padded)
      .def_ro("proven_optimal", &padded_result::proven_optimal);
  m.def(
      "padded_partition",
      [](array_like lengths, rank_t bins, bool equal_counts) {
        const auto l = to_array<length_t>(lengths, "padded_partition: lengths");
        nb::gil_scoped_release release;
        return padded_partition(l.span, bins, equal_counts);
      },
      nb::arg("lengths"), nb::arg("bins"), nb::arg("equal_counts") = false,
      "Exact minimisation of the largest count x longest item per bin.");
}

} // namespace orch::python
