// SPDX-License-Identifier: Apache-2.0
// The placement engine (orch::place, locality_balance), node-wise rearrangement of bins
// (rearrange_bins) and the inter-node lower bound: items in int64 / int32 arrays, results as
// numpy views.
#include "common.hpp"

#include <orch/locality.hpp>
#include <orch/placement/bounds.hpp>
#include <orch/placement/engine.hpp>
#include <orch/placement/rearrange.hpp>
#include <orch/topology.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>

namespace orch::python {

namespace {

/// The item arrays every placement call takes, converted once (names in the errors:
/// "place: costs", ...).
struct item_arrays {
  array_in<cost_t> costs;
  array_in<rank_t> current;
  array_in<bytes_t> bytes;
};

item_arrays items_of(array_like costs, array_like current_rank, array_like item_bytes,
                     const std::string& where) {
  return {to_array<cost_t>(costs, (where + ": costs").c_str()),
          to_array<rank_t>(current_rank, (where + ": current_rank").c_str()),
          to_array<bytes_t>(item_bytes, (where + ": item_bytes").c_str())};
}

locality_result run_place(array_like costs, array_like current_rank, array_like item_bytes,
                          const topology& topo, std::int64_t slack_ppm, int threads,
                          array_like reference_bin_of, algorithm_like algorithm,
                          std::int64_t work_budget, std::int64_t tolerance_ppm, bool measure) {
  const auto in = items_of(costs, current_rank, item_bytes, "place");
  place_options o;
  o.slack_ppm = slack_ppm;
  o.threads = threads;
  o.measure = measure;
  o.partition.algorithm = algorithm_arg(algorithm, "place");
  o.partition.work_budget = work_budget;
  o.partition.tolerance_ppm = tolerance_ppm;
  array_in<rank_t> reference;
  if (!reference_bin_of.is_none()) {
    reference = to_array<rank_t>(reference_bin_of, "place: reference_bin_of");
    o.reference_bin_of = reference.span;
  }
  nb::gil_scoped_release release;
  return place(in.costs.span, in.current.span, in.bytes.span, topo, o);
}

locality_result run_locality_balance(array_like costs, array_like current_rank,
                                     array_like item_bytes, const topology& topo,
                                     array_like reference_bin_of, std::int64_t slack_ppm) {
  const auto in = items_of(costs, current_rank, item_bytes, "locality_balance");
  const locality_options o{slack_ppm};
  if (reference_bin_of.is_none()) {
    nb::gil_scoped_release release;
    return locality_balance(in.costs.span, in.current.span, in.bytes.span, topo, o);
  }
  const auto reference = to_array<rank_t>(reference_bin_of, "locality_balance: reference_bin_of");
  nb::gil_scoped_release release;
  return locality_balance(in.costs.span, in.current.span, in.bytes.span, topo, reference.span, o);
}

} // namespace

void bind_placement(nb::module_& m) {
  nb::enum_<placement_method>(m, "PlacementMethod",
                              "How the placement engine placed the items (orch::placement_method).")
      .value("keep_local", placement_method::keep_local,
             "ranks keep what fits, the rest goes to their node first")
      .value("keep_local_settle", placement_method::keep_local_settle,
             "keep_local, then a local search across all ranks")
      .value("node_first", placement_method::node_first,
             "nodes shed a knapsack cover of their excess, then balance inside")
      .value("node_first_settle", placement_method::node_first_settle,
             "node_first, then a local search across all ranks")
      .value("rearranged_reference", placement_method::rearranged_reference,
             "the reference bins mapped by rearrange_bins, then pulled home")
      .value("node_first_repartition", placement_method::node_first_repartition,
             "node_first, then its unbalanced nodes repartitioned with the roomiest others")
      .value("shed_fill", placement_method::shed_fill,
             "nodes shed what their ranks cannot pack, packed into the other nodes")
      .def("__str__", [](placement_method p) { return std::string(to_string(p)); });

  nb::class_<locality_result>(m, "LocalityResult",
                              "A placement of items on ranks (orch::locality_result).")
      .def_prop_ro(
          "rank_of",
          [](const locality_result& r) { return view_numpy<rank_t>(r.rank_of, self_of(r)); })
      .def_prop_ro("loads",
                   [](const locality_result& r) { return view_numpy<cost_t>(r.loads, self_of(r)); })
      .def_ro("max_load", &locality_result::max_load)
      .def_ro("lower_bound", &locality_result::lower_bound)
      .def_ro("reference_max_load", &locality_result::reference_max_load)
      .def_ro("target", &locality_result::target)
      .def_ro("moved", &locality_result::moved)
      .def_ro("inter_node_lower_bound", &locality_result::inter_node_lower_bound)
      .def_ro("method", &locality_result::method)
      .def_ro("proven_optimal", &locality_result::proven_optimal)
      .def("ratio_to_lower_bound", &locality_result::ratio_to_lower_bound);

  m.def("place", &run_place, nb::arg("costs"), nb::arg("current_rank"), nb::arg("item_bytes"),
        nb::arg("topology"), nb::kw_only(), nb::arg("slack_ppm") = place_options{}.slack_ppm,
        nb::arg("threads") = 1, nb::arg("reference_bin_of").none() = nb::none(),
        nb::arg("algorithm") = "auto", nb::arg("work_budget") = partition_options{}.work_budget,
        nb::arg("tolerance_ppm") = partition_options{}.tolerance_ppm, nb::arg("measure") = true,
        "orch::place, the placement engine (GIL released): every rank's load at most the\n"
        "target (lower bound + slack, or the reference bins' largest load + slack), and within\n"
        "that the fewest bytes leaving their node, then their rank. costs, item_bytes: int64;\n"
        "current_rank, reference_bin_of: int32. algorithm, work_budget, tolerance_ppm: the\n"
        "fallback partition's options (used only without reference bins).");

  m.def("locality_balance", &run_locality_balance, nb::arg("costs"), nb::arg("current_rank"),
        nb::arg("item_bytes"), nb::arg("topology"), nb::arg("reference_bin_of").none() = nb::none(),
        nb::kw_only(), nb::arg("slack_ppm") = locality_options{}.slack_ppm,
        "orch::locality_balance (GIL released): as balanced as the reference bins (by default\n"
        "orch.partition's), up to slack_ppm, while keeping items where they are; never worse\n"
        "in bytes across nodes than rearrange_bins of the reference.");

  nb::class_<rearrangement>(m, "Rearrangement",
                            "Where each balanced bin goes (orch::rearrangement).")
      .def_prop_ro(
          "rank_of_bin",
          [](const rearrangement& r) { return view_numpy<rank_t>(r.rank_of_bin, self_of(r)); })
      .def_ro("total_bytes", &rearrangement::total_bytes)
      .def_ro("kept_on_node", &rearrangement::kept_on_node)
      .def_ro("kept_on_rank", &rearrangement::kept_on_rank)
      .def("moves", &rearrangement::moves, "The traffic of moving every item to its bin's rank.")
      .def(
          "rank_of_items",
          [](const rearrangement& r, array_like bin_of) {
            const auto b = to_array<rank_t>(bin_of, "Rearrangement.rank_of_items: bin_of");
            return to_numpy(r.rank_of_items(b.span));
          },
          nb::arg("bin_of"), "rank_of_bin[bin_of[i]] for every item (int32).");

  m.def(
      "rearrange_bins",
      [](array_like bin_of, array_like current_rank, array_like item_bytes, const topology& topo) {
        const auto b = to_array<rank_t>(bin_of, "rearrange_bins: bin_of");
        const auto c = to_array<rank_t>(current_rank, "rearrange_bins: current_rank");
        const auto s = to_array<bytes_t>(item_bytes, "rearrange_bins: item_bytes");
        nb::gil_scoped_release release;
        return rearrange_bins(b.span, c.span, s.span, topo);
      },
      nb::arg("bin_of"), nb::arg("current_rank"), nb::arg("item_bytes"), nb::arg("topology"),
      "Node-wise rearrangement (GIL released): the bijection bins -> ranks keeping the most\n"
      "bytes on their node, then on their rank (exact).");

  m.def(
      "inter_node_lower_bound",
      [](array_like costs, array_like current_rank, array_like item_bytes, const topology& topo,
         cost_t target) {
        const auto in = items_of(costs, current_rank, item_bytes, "inter_node_lower_bound");
        nb::gil_scoped_release release;
        return inter_node_lower_bound(in.costs.span, in.current.span, in.bytes.span, topo, target);
      },
      nb::arg("costs"), nb::arg("current_rank"), nb::arg("item_bytes"), nb::arg("topology"),
      nb::arg("target"),
      "The fewest bytes that must leave their node in any placement whose largest load is at\n"
      "most `target` (fractional knapsack per node).");
}

} // namespace orch::python
