// SPDX-License-Identifier: Apache-2.0
// orch.orchestrate and the typed step plan: phases, exchanges, encoder steps, chunks and the
// assembly map as numpy arrays.
#include "common.hpp"

#include <orch/orchestrate/assembly.hpp>
#include <orch/orchestrate/item_table.hpp>
#include <orch/orchestrate/media_chunks.hpp>
#include <orch/orchestrate/model.hpp>
#include <orch/orchestrate/orchestrate.hpp>
#include <orch/orchestrate/step_plan.hpp>
#include <orch/topology.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <vector>

namespace orch::python {

namespace {

/// A step plan and the table it was planned from (the chunk lengths of an uncut step are the
/// table's media lengths). The plan is immutable, so its arrays are handed out as views.
struct py_step {
  step_plan plan;
  nb::object table; // the ItemTable passed to orchestrate
};

/// How media items were cut, materialised as arrays (orch::media_chunks has accessors).
struct chunk_arrays {
  bool cut = false;
  index_t count = 0;
  array_out<index_t> media_of;
  array_out<length_t> offset, length;
  array_out<index_t> first_chunk;
};

chunk_arrays make_chunks(const py_step& s) {
  const auto& table = nb::cast<const item_table&>(s.table);
  const auto& c = s.plan.chunks;
  const index_t media = table.media_items();
  const index_t n = c.chunks(media);
  std::vector<index_t> media_of(static_cast<std::size_t>(n));
  std::vector<length_t> offset(static_cast<std::size_t>(n));
  std::vector<length_t> length(static_cast<std::size_t>(n));
  std::vector<index_t> first(static_cast<std::size_t>(media) + 1);
  for (index_t x = 0; x < n; ++x) {
    media_of[static_cast<std::size_t>(x)] = c.media_of(x);
    offset[static_cast<std::size_t>(x)] = c.offset(x);
    length[static_cast<std::size_t>(x)] = c.length(x, table);
  }
  for (index_t x = 0; x < media; ++x) {
    first[static_cast<std::size_t>(x)] = c.first_chunk(x);
  }
  first[static_cast<std::size_t>(media)] = n;
  return {c.cut(),
          n,
          to_numpy(std::move(media_of)),
          to_numpy(std::move(offset)),
          to_numpy(std::move(length)),
          to_numpy(std::move(first))};
}

/// One field of every assembly segment, as a Python-owned array.
template <class T, class Field>
array_out<T> segment_column(const assembly_map& a, Field field) {
  std::vector<T> out(a.segments.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = a.segments[i].*field;
  }
  return to_numpy(std::move(out));
}

py_step run_orchestrate(nb::handle_t<item_table> table, const model_description& model,
                        const topology& topo, strategy_like strategy, int threads,
                        index_t llm_max_examples_per_rank, length_t llm_max_tokens_per_rank,
                        array_like llm_groups, algorithm_like algorithm, std::int64_t work_budget,
                        std::int64_t tolerance_ppm, std::int64_t slack_ppm) {
  const auto& t = nb::cast<const item_table&>(table);
  orchestrate_options o;
  o.strategy = strategy_arg(strategy, "orchestrate");
  o.threads = threads;
  o.llm.max_examples_per_rank = llm_max_examples_per_rank;
  o.llm.max_tokens_per_rank = llm_max_tokens_per_rank;
  array_in<index_t> groups;
  if (!llm_groups.is_none()) {
    groups = to_array<index_t>(llm_groups, "orchestrate: llm_groups");
    o.llm.groups = groups.span;
  }
  o.partition.algorithm = algorithm_arg(algorithm, "orchestrate");
  o.partition.work_budget = work_budget;
  o.partition.tolerance_ppm = tolerance_ppm;
  o.locality.slack_ppm = slack_ppm;
  py_step s;
  {
    nb::gil_scoped_release release;
    s.plan = orchestrate(t, model, topo, o);
  }
  s.table = nb::borrow(table);
  return s;
}

} // namespace

void bind_step(nb::module_& m) {
  nb::class_<phase_result>(m, "Phase", "One compute phase (orch::phase_result).")
      .def_ro("name", &phase_result::name)
      .def_prop_ro(
          "items", [](const phase_result& p) { return view_numpy(p.items, self_of(p)); },
          "Encoders: the chunk of each phase item; LLM: empty (items are examples).")
      .def_prop_ro("costs", [](const phase_result& p) { return view_numpy(p.costs, self_of(p)); })
      .def_prop_ro("loads", [](const phase_result& p) { return view_numpy(p.loads, self_of(p)); })
      .def_ro("placement", &phase_result::placement)
      .def_prop_ro("max_load", [](const phase_result& p) { return p.balance.max_load; })
      .def_prop_ro("total", [](const phase_result& p) { return p.balance.total; })
      .def_prop_ro("lower_bound", [](const phase_result& p) { return p.balance.lower_bound; })
      .def_prop_ro("mean_load", [](const phase_result& p) { return p.balance.mean_load; })
      .def_prop_ro("max_over_mean", [](const phase_result& p) { return p.balance.max_over_mean; })
      .def_prop_ro("max_over_lower_bound",
                   [](const phase_result& p) { return p.balance.max_over_lower_bound; })
      .def_prop_ro("idle_fraction", [](const phase_result& p) { return p.balance.idle_fraction; })
      .def_ro("proven_optimal", &phase_result::proven_optimal);

  nb::class_<exchange_result>(m, "Exchange",
                              "One exchange between phases, forward and backward "
                              "(orch::exchange_result).")
      .def_ro("name", &exchange_result::name)
      .def_ro("forward", &exchange_result::forward)
      .def_ro("backward", &exchange_result::backward)
      .def_prop_ro("self_bytes", [](const exchange_result& x) { return x.bytes.self; })
      .def_prop_ro("intra_node_bytes", [](const exchange_result& x) { return x.bytes.intra_node; })
      .def_prop_ro("inter_node_bytes", [](const exchange_result& x) { return x.bytes.inter_node; })
      .def_prop_ro("total_bytes", [](const exchange_result& x) { return x.bytes.total(); })
      .def_ro("inter_node_lower_bound", &exchange_result::inter_node_lower_bound);

  nb::class_<encoder_step>(m, "EncoderStep",
                           "One encoder's phase and its two exchanges (orch::encoder_step).")
      .def_ro("phase", &encoder_step::phase)
      .def_ro("inputs", &encoder_step::inputs)
      .def_ro("features", &encoder_step::features)
      .def_ro("owner_media", &encoder_step::owner_media)
      .def_ro("feature_layout", &encoder_step::feature_layout);

  nb::class_<chunk_arrays>(m, "Chunks", "How media items were cut into encoder forwards.")
      .def_ro("cut", &chunk_arrays::cut, "Whether any item was cut (else chunk c = media item c).")
      .def_ro("count", &chunk_arrays::count)
      .def_prop_ro(
          "media_of", [](const chunk_arrays& c) { return c.media_of; }, nb::rv_policy::move,
          "Per chunk: its table media item (int64).")
      .def_prop_ro(
          "offset", [](const chunk_arrays& c) { return c.offset; }, nb::rv_policy::move,
          "Per chunk: first input unit in its item.")
      .def_prop_ro(
          "length", [](const chunk_arrays& c) { return c.length; }, nb::rv_policy::move,
          "Per chunk: input units.")
      .def_prop_ro(
          "first_chunk", [](const chunk_arrays& c) { return c.first_chunk; }, nb::rv_policy::move,
          "Per media item + 1: its first chunk (the last entry is the chunk count).");

  nb::class_<assembly_map>(m, "Assembly",
                           "Each LLM rank's sequences as token copies (orch::assembly_map).")
      .def_prop_ro("rank_begin",
                   [](const assembly_map& a) { return view_numpy(a.rank_begin, self_of(a)); })
      .def_prop_ro(
          "source",
          [](const assembly_map& a) {
            return segment_column<std::int32_t>(a, &assembly_segment::source);
          },
          nb::rv_policy::move, "Per segment: -1 for text, else the encoder index (int32).")
      .def_prop_ro(
          "source_token",
          [](const assembly_map& a) {
            return segment_column<index_t>(a, &assembly_segment::source_token);
          },
          nb::rv_policy::move)
      .def_prop_ro(
          "target_token",
          [](const assembly_map& a) {
            return segment_column<index_t>(a, &assembly_segment::target_token);
          },
          nb::rv_policy::move)
      .def_prop_ro(
          "tokens",
          [](const assembly_map& a) {
            return segment_column<length_t>(a, &assembly_segment::tokens);
          },
          nb::rv_policy::move)
      .def_prop_ro(
          "example",
          [](const assembly_map& a) {
            return segment_column<index_t>(a, &assembly_segment::example);
          },
          nb::rv_policy::move)
      .def_prop_ro(
          "media",
          [](const assembly_map& a) {
            return segment_column<index_t>(a, &assembly_segment::media);
          },
          nb::rv_policy::move, "Per segment: the media item of a feature segment, -1 for text.")
      .def_prop_ro("sequence_offset",
                   [](const assembly_map& a) { return view_numpy(a.sequence_offset, self_of(a)); })
      .def_prop_ro("sequence_length",
                   [](const assembly_map& a) { return view_numpy(a.sequence_length, self_of(a)); })
      .def_prop_ro("sequence_tokens",
                   [](const assembly_map& a) { return view_numpy(a.sequence_tokens, self_of(a)); });

  nb::class_<py_step>(m, "StepPlan", "Everything a step needs, identical on every rank.")
      .def_prop_ro("strategy", [](const py_step& s) { return s.plan.strategy; })
      .def_prop_ro(
          "hash", [](const py_step& s) { return s.plan.hash; }, "64-bit plan hash in [0, 2**64).")
      .def_prop_ro(
          "encoders",
          [](const py_step& s) {
            std::vector<const encoder_step*> out;
            for (const auto& e : s.plan.encoders) {
              out.push_back(&e);
            }
            return out;
          },
          nb::rv_policy::reference_internal)
      .def_prop_ro(
          "llm", [](const py_step& s) -> const phase_result& { return s.plan.llm; },
          nb::rv_policy::reference_internal)
      .def_prop_ro(
          "text", [](const py_step& s) -> const exchange_result& { return s.plan.text; },
          nb::rv_policy::reference_internal)
      .def_prop_ro(
          "owner_examples", [](const py_step& s) -> const layout& { return s.plan.owner_examples; },
          nb::rv_policy::reference_internal)
      .def_prop_ro(
          "assembly", [](const py_step& s) -> const assembly_map& { return s.plan.assembly; },
          nb::rv_policy::reference_internal)
      .def_prop_ro("chunks", &make_chunks)
      .def_prop_ro(
          "media_encoder",
          [](const py_step& s) { return view_numpy(s.plan.media_encoder, self_of(s)); },
          "Per chunk: its encoder (int32).")
      .def_prop_ro(
          "output_tokens",
          [](const py_step& s) { return view_numpy(s.plan.output_tokens, self_of(s)); },
          "Per chunk: encoder output tokens.")
      .def_prop_ro(
          "sequence_length",
          [](const py_step& s) { return view_numpy(s.plan.sequence_length, self_of(s)); },
          "Per example: LLM tokens.")
      .def_prop_ro("feature_bytes_direct",
                   [](const py_step& s) { return s.plan.feature_bytes_direct; })
      .def_prop_ro("feature_bytes_two_hop",
                   [](const py_step& s) { return s.plan.feature_bytes_two_hop; })
      .def_prop_ro(
          "table", [](const py_step& s) { return nb::handle_t<item_table>(s.table); },
          "The ItemTable the step was planned from.")
      .def(
          "phases",
          [](const py_step& s) {
            std::vector<const phase_result*> out;
            for (const phase_result& p : s.plan.phases()) {
              out.push_back(&p);
            }
            return out;
          },
          nb::rv_policy::reference_internal,
          "Every phase: the encoders' in model order, then the LLM.")
      .def(
          "exchanges",
          [](const py_step& s) {
            std::vector<const exchange_result*> out;
            for (const exchange_result& x : s.plan.exchanges()) {
              out.push_back(&x);
            }
            return out;
          },
          nb::rv_policy::reference_internal,
          "Every exchange in step order: per encoder inputs then features, then text.")
      .def(
          "phase",
          [](const py_step& s, std::string_view name) -> const phase_result& {
            return s.plan.phase(name);
          },
          nb::arg("name"), nb::rv_policy::reference_internal)
      .def(
          "exchange",
          [](const py_step& s, std::string_view name) -> const exchange_result& {
            return s.plan.exchange(name);
          },
          nb::arg("name"), nb::rv_policy::reference_internal)
      .def(
          "encoder",
          [](const py_step& s, std::string_view name) -> const encoder_step& {
            return s.plan.encoder(name);
          },
          nb::arg("name"), nb::rv_policy::reference_internal);

  m.def("orchestrate", &run_orchestrate, nb::arg("table"), nb::arg("model"), nb::arg("topology"),
        nb::kw_only(), nb::arg("strategy") = "orch", nb::arg("threads") = 1,
        nb::arg("llm_max_examples_per_rank") = 0, nb::arg("llm_max_tokens_per_rank") = 0,
        nb::arg("llm_groups").none() = nb::none(), nb::arg("algorithm") = "auto",
        nb::arg("work_budget") = 500'000, nb::arg("tolerance_ppm") = 10,
        nb::arg("slack_ppm") = 1000,
        "orch::orchestrate: plans one training step (GIL released).\n\n"
        "strategy: a Strategy or its name ('none', 'llm_only', 'per_phase', 'orch').");
}

} // namespace orch::python
