// SPDX-License-Identifier: Apache-2.0
// The model description and presets, the item table (from arrays in one call), the local
// batch and the metadata all-gather decoders.
#include "common.hpp"

#include <orch/orchestrate/item_table.hpp>
#include <orch/orchestrate/metadata.hpp>
#include <orch/orchestrate/model.hpp>
#include <orch/orchestrate/model_presets.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace orch::python {

namespace {

/// A model's fields given as names or (name, chunk_length) pairs; errors name `where` and
/// the item (ValueError for a tuple of another length, TypeError for anything else).
std::vector<media_field> fields_arg(nb::handle fields, const char* where) {
  std::vector<media_field> out;
  for (nb::handle f : fields) {
    if (nb::isinstance<nb::str>(f)) {
      out.emplace_back(nb::cast<std::string>(f));
      continue;
    }
    const auto bad = [&] {
      return std::string(where) + ": fields[" + std::to_string(out.size()) +
             "]: expected a name or a (name, chunk_length) pair of (str, int64), got " +
             describe(f);
    };
    if (nb::isinstance<nb::tuple>(f) && nb::len(f) != 2) {
      throw nb::value_error(bad().c_str());
    }
    std::string name;
    length_t chunk = 0;
    if (!nb::isinstance<nb::tuple>(f) || !nb::try_cast(f[0], name) || !nb::try_cast(f[1], chunk)) {
      throw nb::type_error(bad().c_str());
    }
    out.emplace_back(std::move(name), chunk);
  }
  return out;
}

nb::list fields_out(const std::vector<media_field>& fields) {
  nb::list out;
  for (const auto& f : fields) {
    out.append(nb::make_tuple(f.name, f.chunk_length));
  }
  return out;
}

/// Media of one example given as (field, length, text_position) triples; the names are held
/// in `names` while the specs refer to them. Errors name `where` and the item (ValueError for a
/// tuple of another length, TypeError for anything else).
std::vector<media_spec> media_arg(media_like media, std::vector<std::string>& names,
                                  const char* where) {
  std::vector<media_spec> specs;
  if (media.is_none()) {
    return specs;
  }
  std::vector<std::tuple<length_t, length_t>> numbers;
  for (nb::handle item : nb::handle(media)) {
    const auto bad = [&] {
      return std::string(where) + ": media[" + std::to_string(names.size()) +
             "]: expected a (field, length, text_position) triple of (str, int64, int64), "
             "got " +
             describe(item);
    };
    if (nb::isinstance<nb::tuple>(item) && nb::len(item) != 3) {
      throw nb::value_error(bad().c_str());
    }
    std::string field;
    length_t length = 0;
    length_t position = 0;
    if (!nb::isinstance<nb::tuple>(item) || !nb::try_cast(item[0], field) ||
        !nb::try_cast(item[1], length) || !nb::try_cast(item[2], position)) {
      throw nb::type_error(bad().c_str());
    }
    names.push_back(std::move(field));
    numbers.emplace_back(length, position);
  }
  specs.reserve(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    specs.push_back({names[i], std::get<0>(numbers[i]), std::get<1>(numbers[i])});
  }
  return specs;
}

std::vector<std::string> names_arg(nb::handle names, const char* where) {
  std::vector<std::string> out;
  for (nb::handle n : names) {
    std::string name;
    if (!nb::try_cast(n, name)) {
      throw nb::type_error((std::string(where) + ": field_names[" + std::to_string(out.size()) +
                            "]: expected str, got " + describe(n))
                               .c_str());
    }
    out.push_back(std::move(name));
  }
  return out;
}

/// Per-rank metadata buffers given as a sequence of int64 arrays.
struct buffers_in {
  std::vector<array_in<std::int64_t>> arrays;
  std::vector<std::span<const std::int64_t>> spans;
};

buffers_in buffers_arg(arrays_like buffers, const char* where) {
  buffers_in b;
  for (nb::handle x : nb::handle(buffers)) {
    const std::string name =
        std::string(where) + ": buffers[" + std::to_string(b.arrays.size()) + "]";
    b.arrays.push_back(to_array<std::int64_t>(x, name.c_str()));
  }
  for (const auto& a : b.arrays) {
    b.spans.push_back(a.span);
  }
  return b;
}

item_table new_table(const model_description* model) {
  return model == nullptr ? item_table() : item_table(*model);
}

} // namespace

void bind_table(nb::module_& m) {
  nb::class_<encoder_model>(m, "EncoderModel", "One encoder phase (orch::encoder_model).")
      .def(
          "__init__",
          [](encoder_model* self, std::string name, fields_like fields, attention_cost cost,
             length_t output_divisor, length_t output_extra, length_t max_output_tokens,
             bytes_t input_bytes_per_unit, bytes_t feature_bytes_per_token) {
            new (self) encoder_model{std::move(name),
                                     fields_arg(fields, "EncoderModel"),
                                     cost,
                                     output_divisor,
                                     output_extra,
                                     max_output_tokens,
                                     input_bytes_per_unit,
                                     feature_bytes_per_token};
          },
          nb::kw_only(), nb::arg("name"), nb::arg("fields"), nb::arg("cost") = attention_cost{},
          nb::arg("output_divisor") = 1, nb::arg("output_extra") = 0,
          nb::arg("max_output_tokens") = 0, nb::arg("input_bytes_per_unit") = 0,
          nb::arg("feature_bytes_per_token") = 0,
          "fields: names or (name, chunk_length) pairs (0: never cut).")
      .def_rw("name", &encoder_model::name)
      .def_prop_rw(
          "fields", [](const encoder_model& e) { return fields_out(e.fields); },
          [](encoder_model& e, fields_like f) { e.fields = fields_arg(f, "EncoderModel.fields"); },
          "(name, chunk_length) pairs.")
      .def_rw("cost", &encoder_model::cost)
      .def_rw("output_divisor", &encoder_model::output_divisor)
      .def_rw("output_extra", &encoder_model::output_extra)
      .def_rw("max_output_tokens", &encoder_model::max_output_tokens)
      .def_rw("input_bytes_per_unit", &encoder_model::input_bytes_per_unit)
      .def_rw("feature_bytes_per_token", &encoder_model::feature_bytes_per_token)
      .def("output_tokens", &encoder_model::output_tokens, nb::arg("input_length"),
           "ceil(l / output_divisor) + output_extra.");

  nb::class_<llm_model>(m, "LLMModel", "The LLM backbone (orch::llm_model).")
      .def(
          "__init__",
          [](llm_model* self, std::string name, attention_cost cost, bytes_t text_bytes_per_token) {
            new (self) llm_model{std::move(name), cost, text_bytes_per_token};
          },
          nb::kw_only(), nb::arg("name") = "llm", nb::arg("cost") = attention_cost{},
          nb::arg("text_bytes_per_token") = 8)
      .def_rw("name", &llm_model::name)
      .def_rw("cost", &llm_model::cost)
      .def_rw("text_bytes_per_token", &llm_model::text_bytes_per_token);

  nb::class_<model_description>(m, "ModelDescription",
                                "Encoders and the LLM (orch::model_description).")
      .def(
          "__init__",
          [](model_description* self, std::vector<encoder_model> encoders, llm_model llm) {
            new (self) model_description{std::move(encoders), std::move(llm)};
          },
          nb::kw_only(), nb::arg("encoders") = std::vector<encoder_model>{},
          nb::arg("llm") = llm_model{})
      .def_rw("encoders", &model_description::encoders,
              "A copy of the encoders (assign a list to change them).")
      .def_rw("llm", &model_description::llm)
      .def("encoder_of_field", &model_description::encoder_of_field, nb::arg("field"))
      .def("field_list", &model_description::field_list)
      .def("validate", &model_description::validate);

  m.def("model_preset", &model_preset, nb::arg("name"),
        "A built-in three-modality MLLM ('omni-7b', 'omni-72b').");
  m.def(
      "model_preset_names",
      [] {
        std::vector<std::string> out;
        for (const auto n : model_preset_names()) {
          out.emplace_back(n);
        }
        return out;
      },
      "Names of the built-in models.");

  // The table's arrays are copies: add_example may grow (and move) its columns.
  nb::class_<item_table>(m, "ItemTable",
                         "Every example of a step and its media items (orch::item_table).")
      .def(
          "__init__",
          [](item_table* self, const model_description* model) {
            new (self) item_table(new_table(model));
          },
          nb::arg("model").none() = nb::none(),
          "An open table (model=None), or one that accepts only the model's fields.")
      .def_static(
          "from_arrays",
          [](array_like owner, array_like local_index, array_like text_tokens,
             array_like media_example, array_like media_field, array_like media_length,
             array_like media_position, names_like field_names, const model_description* model) {
            const auto o = to_array<rank_t>(owner, "ItemTable.from_arrays: owner");
            const auto l = to_array<index_t>(local_index, "ItemTable.from_arrays: local_index");
            const auto t = to_array<length_t>(text_tokens, "ItemTable.from_arrays: text_tokens");
            const auto me =
                to_array<index_t>(media_example, "ItemTable.from_arrays: media_example");
            const auto mf =
                to_array<std::int32_t>(media_field, "ItemTable.from_arrays: media_field");
            const auto ml = to_array<length_t>(media_length, "ItemTable.from_arrays: media_length");
            const auto mp =
                to_array<length_t>(media_position, "ItemTable.from_arrays: media_position");
            const auto names = names_arg(field_names, "ItemTable.from_arrays");
            const item_columns c{o.span, l.span, t.span, me.span, mf.span, ml.span, mp.span};
            nb::gil_scoped_release release;
            return model == nullptr ? item_table::from_columns(c, names)
                                    : item_table::from_columns(c, names, *model);
          },
          nb::arg("owner"), nb::arg("local_index"), nb::arg("text_tokens"),
          nb::arg("media_example"), nb::arg("media_field"), nb::arg("media_length"),
          nb::arg("media_position"), nb::kw_only(), nb::arg("field_names"),
          nb::arg("model").none() = nb::none(),
          "The table of whole columns in one call (item_table::from_columns; GIL released):\n"
          "per example owner (int32), local_index, text_tokens; per media item its example\n"
          "(non-decreasing), field code (int32 index into field_names), length, text position.")
      .def(
          "add_example",
          [](item_table& t, rank_t owner, index_t local_index, length_t text_tokens,
             media_like media) {
            std::vector<std::string> names;
            const auto specs = media_arg(media, names, "ItemTable.add_example");
            return t.add_example(owner, local_index, text_tokens, specs);
          },
          nb::arg("owner"), nb::arg("local_index"), nb::arg("text_tokens"),
          nb::arg("media").none() = nb::none(),
          "Appends an example; media: (field, length, text_position) triples. Returns its index.")
      .def_prop_ro("examples", &item_table::examples)
      .def_prop_ro("media_items", &item_table::media_items)
      .def("__len__", &item_table::examples)
      .def_prop_ro("field_names", &item_table::field_names)
      .def_prop_ro(
          "owners", [](const item_table& t) { return copy_numpy(t.owners()); }, nb::rv_policy::move)
      .def_prop_ro(
          "local_indices", [](const item_table& t) { return copy_numpy(t.local_indices()); },
          nb::rv_policy::move)
      .def_prop_ro(
          "text_lengths", [](const item_table& t) { return copy_numpy(t.text_lengths()); },
          nb::rv_policy::move)
      .def_prop_ro(
          "media_lengths", [](const item_table& t) { return copy_numpy(t.media_lengths()); },
          nb::rv_policy::move)
      .def_prop_ro(
          "media_text_positions",
          [](const item_table& t) { return copy_numpy(t.media_text_positions()); },
          nb::rv_policy::move)
      .def_prop_ro(
          "media_fields", [](const item_table& t) { return copy_numpy(t.media_fields()); },
          nb::rv_policy::move)
      .def_prop_ro(
          "media_examples", [](const item_table& t) { return copy_numpy(t.media_examples()); },
          nb::rv_policy::move)
      .def_prop_ro(
          "media_offsets", [](const item_table& t) { return copy_numpy(t.media_offsets()); },
          nb::rv_policy::move)
      .def("validate", &item_table::validate, nb::arg("ranks"));

  nb::class_<local_batch>(m, "LocalBatch", "One rank's sampled examples (orch::local_batch).")
      .def(nb::init<>())
      .def_static(
          "from_arrays",
          [](array_like text_tokens, array_like media_example, array_like media_field,
             array_like media_length, array_like media_position, names_like field_names) {
            // Built through item_table::from_columns's checks, then added example by example:
            // the batch's own add() validates as it would from Python.
            const auto t = to_array<length_t>(text_tokens, "LocalBatch.from_arrays: text_tokens");
            const auto me =
                to_array<index_t>(media_example, "LocalBatch.from_arrays: media_example");
            const auto mf =
                to_array<std::int32_t>(media_field, "LocalBatch.from_arrays: media_field");
            const auto ml =
                to_array<length_t>(media_length, "LocalBatch.from_arrays: media_length");
            const auto mp =
                to_array<length_t>(media_position, "LocalBatch.from_arrays: media_position");
            const auto names = names_arg(field_names, "LocalBatch.from_arrays");
            nb::gil_scoped_release release;
            std::vector<rank_t> owner(t.span.size(), 0);
            std::vector<index_t> local(t.span.size());
            for (std::size_t e = 0; e < local.size(); ++e) {
              local[e] = static_cast<index_t>(e);
            }
            const auto table = item_table::from_columns(
                {owner, local, t.span, me.span, mf.span, ml.span, mp.span}, names);
            local_batch b;
            std::vector<media_spec> specs;
            const auto& fields = table.field_names();
            for (index_t e = 0; e < table.examples(); ++e) {
              specs.clear();
              for (index_t x = table.media_begin(e); x < table.media_end(e); ++x) {
                specs.push_back({fields[static_cast<std::size_t>(table.media_field(x))],
                                 table.media_length(x), table.media_text_position(x)});
              }
              static_cast<void>(b.add(table.text_tokens(e), specs));
            }
            return b;
          },
          nb::arg("text_tokens"), nb::arg("media_example"), nb::arg("media_field"),
          nb::arg("media_length"), nb::arg("media_position"), nb::arg("field_names"),
          "A batch from whole columns (as ItemTable.from_arrays, without owner and local index).")
      .def(
          "add",
          [](local_batch& b, length_t text_tokens, media_like media) {
            std::vector<std::string> names;
            const auto specs = media_arg(media, names, "LocalBatch.add");
            return b.add(text_tokens, specs);
          },
          nb::arg("text_tokens"), nb::arg("media").none() = nb::none(),
          "Appends an example; media: (field, length, text_position) triples. Returns its "
          "local index.")
      .def_prop_ro("examples", &local_batch::examples)
      .def_prop_ro("media_items", &local_batch::media_items)
      .def("__len__", &local_batch::examples)
      .def_prop_ro("field_names", &local_batch::field_names)
      .def(
          "serialize",
          [](const local_batch& b, rank_t rank) { return to_numpy(b.serialize(rank)); },
          nb::arg("rank"), "The int64 buffer rank `rank` contributes to the metadata all-gather.")
      .def_static(
          "checksum",
          [](array_like words) {
            const auto w = to_array<std::int64_t>(words, "LocalBatch.checksum: words");
            return local_batch::checksum(w.span);
          },
          nb::arg("words"), "The checksum word of a buffer whose other words are `words`.");

  m.def(
      "table_from_metadata",
      [](arrays_like buffers, const model_description* model) {
        const auto b = buffers_arg(buffers, "table_from_metadata");
        nb::gil_scoped_release release;
        auto t = new_table(model);
        append_metadata(t, std::span<const std::span<const std::int64_t>>(b.spans));
        return t;
      },
      nb::arg("buffers"), nb::kw_only(), nb::arg("model").none() = nb::none(),
      "The table of every rank's examples from the gathered buffers (buffers[r] from rank r; "
      "GIL released).");
  m.def(
      "table_from_metadata_concatenated",
      [](array_like concatenated, array_like counts, const model_description* model) {
        const auto w =
            to_array<std::int64_t>(concatenated, "table_from_metadata_concatenated: concatenated");
        const auto c = to_array<std::int64_t>(counts, "table_from_metadata_concatenated: counts");
        nb::gil_scoped_release release;
        auto t = new_table(model);
        append_metadata(t, w.span, c.span);
        return t;
      },
      nb::arg("concatenated"), nb::arg("counts"), nb::kw_only(),
      nb::arg("model").none() = nb::none(),
      "table_from_metadata from buffers back to back, rank r's taking counts[r] words.");
  m.def(
      "table_from_metadata_padded",
      [](array_like padded, rank_t ranks, const model_description* model) {
        const auto w = to_array<std::int64_t>(padded, "table_from_metadata_padded: padded");
        nb::gil_scoped_release release;
        auto t = new_table(model);
        append_metadata_padded(t, w.span, ranks);
        return t;
      },
      nb::arg("padded"), nb::arg("ranks"), nb::kw_only(), nb::arg("model").none() = nb::none(),
      "table_from_metadata from `ranks` equal slots (an all_gather of padded buffers).");
  m.def(
      "append_metadata",
      [](item_table& table, arrays_like buffers) {
        const auto b = buffers_arg(buffers, "append_metadata");
        nb::gil_scoped_release release;
        append_metadata(table, std::span<const std::span<const std::int64_t>>(b.spans));
      },
      nb::arg("table"), nb::arg("buffers"),
      "Appends every rank's examples to `table` (unchanged when it raises).");
}

} // namespace orch::python
