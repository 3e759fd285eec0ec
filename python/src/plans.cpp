// SPDX-License-Identifier: Apache-2.0
// Topology, layouts, exchange plans (make_plan, inverse, compose), a rank's view and row form
// of a plan, and the node-wise schedule.
#include "common.hpp"

#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/row_exchange.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/topology.hpp>
#include <orch/traffic.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <cstddef>
#include <optional>
#include <tuple>
#include <vector>

namespace orch::python {

namespace {

// pairs() hands its records to numpy as they are: four packed fields.
static_assert(sizeof(pair_traffic) == 24 && offsetof(pair_traffic, source) == 0 &&
              offsetof(pair_traffic, destination) == 4 && offsetof(pair_traffic, items) == 8 &&
              offsetof(pair_traffic, bytes) == 16);

/// The pairs of a plan as a numpy structured array (source, destination: int32; items, bytes:
/// int64) over the vector orch returns, without copying the records.
nb::object pairs_array(const exchange_plan& plan) {
  auto pairs = plan.pairs();
  auto* owned = new std::vector<pair_traffic>(std::move(pairs));
  nb::capsule owner(owned,
                    [](void* p) noexcept { delete static_cast<std::vector<pair_traffic>*>(p); });
  const nb::ndarray<nb::numpy, std::uint8_t, nb::ndim<1>> raw(
      reinterpret_cast<std::uint8_t*>(owned->data()), {owned->size() * sizeof(pair_traffic)},
      owner);
  const nb::module_ np = nb::module_::import_("numpy");
  nb::list fields;
  fields.append(nb::make_tuple("source", "<i4"));
  fields.append(nb::make_tuple("destination", "<i4"));
  fields.append(nb::make_tuple("items", "<i8"));
  fields.append(nb::make_tuple("bytes", "<i8"));
  return nb::cast(raw).attr("view")(np.attr("dtype")(fields));
}

/// orch::row_exchange with numpy arrays (None for an index orch left empty: the identity),
/// what torch.distributed's all_to_all_single and index_select take.
struct row_form {
  rank_t rank = 0;
  index_t source_rows = 0;
  index_t destination_rows = 0;
  array_out<index_t> send_splits, recv_splits;
  std::optional<array_out<index_t>> pack_index, unpack_index;
};

/// An identity index (orch leaves it empty) is None; any other a Python-owned int64 array.
std::optional<array_out<index_t>> index_or_none(std::vector<index_t>& index, bool identity) {
  if (identity) {
    return std::nullopt;
  }
  return to_numpy(std::move(index));
}

} // namespace

void bind_plans(nb::module_& m) {
  nb::class_<topology>(m, "Topology", "Ranks grouped into nodes (orch::topology).")
      .def(nb::init<>(), "One rank on one node.")
      .def_static("uniform", &topology::uniform, nb::arg("ranks"), nb::arg("ranks_per_node"),
                  "`ranks` ranks, `ranks_per_node` per node, consecutive.")
      .def_static(
          "from_node_of_rank",
          [](array_like node_of_rank) {
            const auto n =
                to_array<rank_t>(node_of_rank, "Topology.from_node_of_rank: node_of_rank");
            return topology::from_node_of_rank(std::vector<rank_t>(n.span.begin(), n.span.end()));
          },
          nb::arg("node_of_rank"), "An explicit node for every rank (int32 array).")
      .def_prop_ro("ranks", &topology::ranks)
      .def_prop_ro("nodes", &topology::nodes)
      .def("node_of", &topology::node_of, nb::arg("rank"))
      .def("local_index", &topology::local_index, nb::arg("rank"))
      .def("ranks_per_node", &topology::ranks_per_node, nb::arg("node"))
      .def("rank_at", &topology::rank_at, nb::arg("node"), nb::arg("local"))
      .def(
          "ranks_on",
          [](const topology& t, rank_t node) { return view_numpy(t.ranks_on(node), self_of(t)); },
          nb::arg("node"), "The ranks of `node` in local-index order (int32).")
      .def_prop_ro("node_of_ranks",
                   [](const topology& t) { return view_numpy(t.node_of_ranks(), self_of(t)); })
      .def_prop_ro("local_indices",
                   [](const topology& t) { return view_numpy(t.local_indices(), self_of(t)); })
      .def_prop_ro("max_ranks_per_node", &topology::max_ranks_per_node)
      .def_prop_ro("is_uniform", &topology::is_uniform)
      .def("__eq__", [](const topology& a, const topology& b) { return a == b; })
      .def("__repr__", [](const topology& t) {
        return "Topology(ranks=" + std::to_string(t.ranks()) +
               ", nodes=" + std::to_string(t.nodes()) + ")";
      });

  nb::class_<layout>(m, "Layout", "Every item at (rank, slot) (orch::layout); immutable.")
      .def(nb::init<>(), "One rank, no items.")
      .def_static(
          "from_assignment",
          [](array_like rank_of, rank_t ranks) {
            const auto r = to_array<rank_t>(rank_of, "Layout.from_assignment: rank_of");
            nb::gil_scoped_release release;
            return layout::from_assignment(r.span, ranks);
          },
          nb::arg("rank_of"), nb::arg("ranks"),
          "Items on the given ranks, slots in increasing item order.")
      .def_static(
          "from_keys",
          [](array_like rank_of, rank_t ranks, array_like key, array_like secondary_key) {
            const auto r = to_array<rank_t>(rank_of, "Layout.from_keys: rank_of");
            const auto k = to_array<index_t>(key, "Layout.from_keys: key");
            array_in<index_t> s;
            if (!secondary_key.is_none()) {
              s = to_array<index_t>(secondary_key, "Layout.from_keys: secondary_key");
            }
            nb::gil_scoped_release release;
            return layout::from_keys(r.span, ranks, k.span, s.span);
          },
          nb::arg("rank_of"), nb::arg("ranks"), nb::arg("key"),
          nb::arg("secondary_key").none() = nb::none(),
          "Items on the given ranks, ordered on each by (key, secondary_key, item).")
      .def_static(
          "from_placements",
          [](rank_t ranks, array_like rank_of, array_like slot_of) {
            const auto r = to_array<rank_t>(rank_of, "Layout.from_placements: rank_of");
            const auto s = to_array<index_t>(slot_of, "Layout.from_placements: slot_of");
            return layout::from_placements(ranks, {r.span.begin(), r.span.end()},
                                           {s.span.begin(), s.span.end()});
          },
          nb::arg("ranks"), nb::arg("rank_of"), nb::arg("slot_of"),
          "An explicit (rank, slot) for every item, validated.")
      .def_static(
          "contiguous",
          [](array_like items_per_rank) {
            const auto c = to_array<index_t>(items_per_rank, "Layout.contiguous: items_per_rank");
            return layout::contiguous(c.span);
          },
          nb::arg("items_per_rank"), "Rank r holds the next items_per_rank[r] items.")
      .def_prop_ro("ranks", &layout::ranks)
      .def_prop_ro("items", &layout::items)
      .def_prop_ro(
          "rank_of", [](const layout& l) { return view_numpy(l.rank_of_items(), self_of(l)); },
          "Rank of every item (int32).")
      .def_prop_ro(
          "slot_of", [](const layout& l) { return view_numpy(l.slot_of_items(), self_of(l)); },
          "Slot of every item (int64).")
      .def_prop_ro(
          "order", [](const layout& l) { return view_numpy(l.order(), self_of(l)); },
          "All items in (rank, slot) order (int64).")
      .def_prop_ro(
          "first_on", [](const layout& l) { return view_numpy(l.first_on(), self_of(l)); },
          "Offsets of every rank's run in `order` (ranks + 1 entries).")
      .def(
          "items_on",
          [](const layout& l, rank_t rank) { return view_numpy(l.items_on(rank), self_of(l)); },
          nb::arg("rank"), "The items of `rank` in slot order (int64).")
      .def("count_on", &layout::count_on, nb::arg("rank"))
      .def("item_at", &layout::item_at, nb::arg("rank"), nb::arg("slot"))
      .def("__eq__", [](const layout& a, const layout& b) { return a == b; })
      .def("__repr__", [](const layout& l) {
        return "Layout(ranks=" + std::to_string(l.ranks()) +
               ", items=" + std::to_string(l.items()) + ")";
      });

  nb::class_<rank_view>(m, "RankView", "One rank's part of a plan (orch::rank_view).")
      .def_ro("rank", &rank_view::rank)
      .def_ro("source_bytes", &rank_view::source_bytes)
      .def_ro("destination_bytes", &rank_view::destination_bytes)
      .def_ro("self_bytes", &rank_view::self_bytes)
#define ORCH_VIEW_ARRAY(field)                                                                     \
  def_prop_ro(#field, [](const rank_view& v) { return view_numpy(v.field, self_of(v)); })
      .ORCH_VIEW_ARRAY(send_items)
      .ORCH_VIEW_ARRAY(send_sizes)
      .ORCH_VIEW_ARRAY(send_source_offsets)
      .ORCH_VIEW_ARRAY(send_packed_offsets)
      .ORCH_VIEW_ARRAY(send_peers)
      .ORCH_VIEW_ARRAY(send_peer_items)
      .ORCH_VIEW_ARRAY(send_peer_bytes)
      .ORCH_VIEW_ARRAY(send_peer_displs)
      .ORCH_VIEW_ARRAY(send_peer_first)
      .ORCH_VIEW_ARRAY(recv_items)
      .ORCH_VIEW_ARRAY(recv_sizes)
      .ORCH_VIEW_ARRAY(recv_packed_offsets)
      .ORCH_VIEW_ARRAY(recv_destination_offsets)
      .ORCH_VIEW_ARRAY(recv_peers)
      .ORCH_VIEW_ARRAY(recv_peer_items)
      .ORCH_VIEW_ARRAY(recv_peer_bytes)
      .ORCH_VIEW_ARRAY(recv_peer_displs)
      .ORCH_VIEW_ARRAY(recv_peer_first)
#undef ORCH_VIEW_ARRAY
      .def_ro("pack_is_identity", &rank_view::pack_is_identity)
      .def_ro("unpack_is_identity", &rank_view::unpack_is_identity);

  nb::class_<row_form>(m, "RowExchange",
                       "One rank's exchange in rows of a tensor (orch/exchange/row_exchange.hpp).")
      .def_ro("rank", &row_form::rank)
      .def_ro("source_rows", &row_form::source_rows)
      .def_ro("destination_rows", &row_form::destination_rows)
      .def_prop_ro(
          "send_splits", [](const row_form& f) { return f.send_splits; }, nb::rv_policy::move,
          "Rows to each rank (int64 [ranks]).")
      .def_prop_ro(
          "recv_splits", [](const row_form& f) { return f.recv_splits; }, nb::rv_policy::move,
          "Rows from each rank (int64 [ranks]).")
      .def_prop_ro(
          "pack_index", [](const row_form& f) { return f.pack_index; }, nb::rv_policy::move,
          "Source row of every send row (int64), or None when packing is the identity.")
      .def_prop_ro(
          "unpack_index", [](const row_form& f) { return f.unpack_index; }, nb::rv_policy::move,
          "Received row of every destination row (int64), or None when the identity.");

  nb::class_<exchange_plan>(m, "ExchangePlan",
                            "Items of given byte sizes moved between two layouts "
                            "(orch::exchange_plan); immutable.")
      .def(nb::init<>())
      .def_prop_ro("ranks", &exchange_plan::ranks)
      .def_prop_ro("items", &exchange_plan::items)
      .def_prop_ro("from_layout", &exchange_plan::from)
      .def_prop_ro("to_layout", &exchange_plan::to)
      .def_prop_ro("item_bytes",
                   [](const exchange_plan& p) { return view_numpy(p.item_bytes(), self_of(p)); })
      .def_prop_ro("hash", &exchange_plan::hash, "64-bit hash in [0, 2**64).")
      .def_prop_ro("total_bytes", &exchange_plan::total_bytes)
      .def("source_bytes", &exchange_plan::source_bytes, nb::arg("rank"))
      .def("destination_bytes", &exchange_plan::destination_bytes, nb::arg("rank"))
      .def("self_bytes", &exchange_plan::self_bytes, nb::arg("rank"))
      .def("source_offset", &exchange_plan::source_offset, nb::arg("item"))
      .def("destination_offset", &exchange_plan::destination_offset, nb::arg("item"))
      .def(
          "pair",
          [](const exchange_plan& p, rank_t source, rank_t destination) {
            const auto t = p.pair(source, destination);
            return std::make_tuple(t.items, t.bytes);
          },
          nb::arg("source"), nb::arg("destination"),
          "(items, bytes) that `source` sends to `destination`.")
      .def("pairs", &pairs_array, nb::sig("def pairs(self) -> numpy.ndarray"),
           "Every communicating pair as a structured array (source, destination, items, "
           "bytes).")
      .def_prop_ro("pair_count", &exchange_plan::pair_count)
      .def(
          "view",
          [](const exchange_plan& p, rank_t rank) {
            nb::gil_scoped_release release;
            return p.view(rank);
          },
          nb::arg("rank"), "The send and receive lists of `rank`.")
      .def(
          "rows",
          [](const exchange_plan& p, rank_t rank, bytes_t bytes_per_row) {
            row_exchange x;
            {
              nb::gil_scoped_release release;
              x = make_row_exchange(p, rank, bytes_per_row);
            }
            const bool pack_identity = x.pack_index.empty();
            const bool unpack_identity = x.unpack_index.empty();
            row_form f;
            f.rank = x.rank;
            f.source_rows = x.source_rows;
            f.destination_rows = x.destination_rows;
            f.send_splits = to_numpy(std::move(x.send_splits));
            f.recv_splits = to_numpy(std::move(x.recv_splits));
            f.pack_index = index_or_none(x.pack_index, pack_identity);
            f.unpack_index = index_or_none(x.unpack_index, unpack_identity);
            return f;
          },
          nb::arg("rank"), nb::arg("bytes_per_row"),
          "The row form of the plan for `rank` (orch::make_row_exchange).")
      .def("__eq__", [](const exchange_plan& a, const exchange_plan& b) { return a == b; })
      .def("__repr__", [](const exchange_plan& p) {
        return "ExchangePlan(ranks=" + std::to_string(p.ranks()) +
               ", items=" + std::to_string(p.items()) +
               ", bytes=" + std::to_string(p.total_bytes()) + ")";
      });

  m.def(
      "make_plan",
      [](const layout& from, const layout& to, array_like item_bytes) {
        const auto b = to_array<bytes_t>(item_bytes, "make_plan: item_bytes");
        nb::gil_scoped_release release;
        return make_plan(from, to, b.span);
      },
      nb::arg("from_layout"), nb::arg("to_layout"), nb::arg("item_bytes"),
      "The plan moving items of `item_bytes` (int64) bytes from one layout to another "
      "(GIL released).");
  m.def("inverse", &inverse, nb::arg("plan"), "The plan that moves everything back.");
  m.def("compose", &compose, nb::arg("a_to_b"), nb::arg("b_to_c"),
        "One plan doing `a_to_b` then `b_to_c`.");

  nb::class_<traffic>(m, "Traffic", "Bytes by locality class.")
      .def_ro("self", &traffic::self)
      .def_ro("intra_node", &traffic::intra_node)
      .def_ro("inter_node", &traffic::inter_node)
      .def("total", &traffic::total)
      .def("inter_node_share", &traffic::inter_node_share);
  m.def("measure_traffic",
        nb::overload_cast<const exchange_plan&, const topology&>(&measure_traffic), nb::arg("plan"),
        nb::arg("topology"), "Traffic of `plan` under `topology`.");

  nb::class_<node_schedule>(m, "NodeSchedule",
                            "A plan split into an inter-node and an intra-node stage.")
      .def_ro("topology", &node_schedule::topology)
      .def_ro("staging", &node_schedule::staging)
      .def_ro("inter_node", &node_schedule::inter_node)
      .def_ro("intra_node", &node_schedule::intra_node)
      .def_prop_ro(
          "staging_bytes",
          [](const node_schedule& s) { return view_numpy<bytes_t>(s.staging_bytes, self_of(s)); })
      .def("remote_peers", &node_schedule::remote_peers, nb::arg("rank"))
      .def("max_remote_peers", &node_schedule::max_remote_peers);
  m.def(
      "make_schedule",
      [](const exchange_plan& flat, const topology& topo) {
        nb::gil_scoped_release release;
        return make_schedule(flat, topo);
      },
      nb::arg("plan"), nb::arg("topology"), "The node-wise schedule of `plan` on `topology`.");
}

} // namespace orch::python
