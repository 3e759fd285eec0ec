// SPDX-License-Identifier: Apache-2.0
/// The item table: every example of a step (owner rank, local index, text tokens) and its
/// media items (field, input length), identical on all ranks after the metadata all-gather.
#pragma once

#include <orch/config.hpp>
#include <orch/orchestrate/model.hpp>
#include <orch/types.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace orch {

/// A media item as given to item_table::add_example: its field, its input length in the
/// field's unit (patches for image / video, frames for audio), and where its encoder output
/// goes in the example's LLM sequence: after the first `text_position` text tokens.
struct media_spec {
  std::string_view field;
  length_t length = 0;
  length_t text_position = 0; ///< text tokens before this item; non-decreasing in an example
};

/// A whole table as columns, for item_table::from_columns: one entry per example in the
/// first three, one per media item in the others. Media items are grouped by example in
/// example order (media_example non-decreasing), each example's in sequence order;
/// media_field holds indices into the field-name list passed beside the columns.
struct item_columns {
  std::span<const rank_t> owner;
  std::span<const index_t> local_index;
  std::span<const length_t> text_tokens;
  std::span<const index_t> media_example;
  std::span<const std::int32_t> media_field;
  std::span<const length_t> media_length;
  std::span<const length_t> media_text_position;
};

/// Examples and their media in compressed rows: media of example e are
/// [media_begin(e), media_end(e)) in the order they appear in the example, which is the order
/// their encoder outputs take in the example's LLM sequence.
///
/// The order examples are added in is their example index, which every plan refers to: every
/// rank must add the same examples in the same order (orch/orchestrate/metadata.hpp builds the
/// table from the gathered metadata in the one order the contract fixes: rank 0's examples in
/// local-index order, then rank 1's, ...).
///
/// Complexity: add_example is amortised O(media of the example · fields).
class item_table {
public:
  /// An open table: any media field name is accepted when added (an unknown one is reported
  /// by orchestrate); field ids follow the order of first appearance.
  item_table() = default;

  /// A table for `model`: add_example accepts only the media fields the model consumes, and
  /// rejects any other at once, listing the model's fields. Field ids follow the model's
  /// field order (encoders in order, each encoder's fields in order), whatever order the
  /// examples arrive in. Complexity: O(fields).
  explicit item_table(const model_description& model) : closed_(true) {
    for (const auto& enc : model.encoders) {
      for (const auto& f : enc.fields) {
        if (std::find(fields_.begin(), fields_.end(), f.name) == fields_.end()) {
          fields_.push_back(f.name);
        }
      }
    }
    accepted_ = model.field_list();
  }

  /// Appends an example held by rank `owner` at position `local_index` of that rank's
  /// mini-batch. Returns its example index (the number of examples added before it).
  /// Validates everything before adding: on a throw the table is unchanged.
  /// Throws: orch::invalid_argument naming the example (index, owner rank, local index) and
  /// the media item: negative owner, local index, text or media length; a text position
  /// outside [previous position, text length]; an empty field name or "text"; in a table
  /// made for a model, a field the model does not consume (the message lists its fields).
  index_t add_example(rank_t owner, index_t local_index, length_t text_tokens,
                      std::span<const media_spec> media = {}) {
    const auto e = examples();
    if (owner < 0) {
      throw_invalid_argument("item_table: example ", e, " (local index ", local_index,
                             ") has negative owner rank ", owner);
    }
    if (local_index < 0) {
      throw_invalid_argument("item_table: example ", e, " (rank ", owner,
                             ") has negative local index ", local_index);
    }
    if (text_tokens < 0) {
      throw_invalid_argument("item_table: example ", e, " (rank ", owner, ", local index ",
                             local_index, ") has negative text length ", text_tokens);
    }
    for (std::size_t m = 0; m < media.size(); ++m) {
      if (media[m].length < 0) {
        throw_invalid_argument("item_table: example ", e, " (rank ", owner, ", local index ",
                               local_index, ") media ", m, " ('", media[m].field,
                               "') has negative length ", media[m].length);
      }
      const length_t previous = m == 0 ? 0 : media[m - 1].text_position;
      if (media[m].text_position < previous || media[m].text_position > text_tokens) {
        throw_invalid_argument("item_table: example ", e, " (rank ", owner, ", local index ",
                               local_index, ") media ", m, " has text position ",
                               media[m].text_position, " outside [", previous, ", ", text_tokens,
                               "] (positions are non-decreasing, at most the text "
                               "length)");
      }
      if (media[m].field.empty() || media[m].field == "text") {
        throw_invalid_argument("item_table: example ", e, " (rank ", owner, ", local index ",
                               local_index, ") media ", m, " has field '", media[m].field,
                               "', not a media field name");
      }
      if (closed_ && std::find(fields_.begin(), fields_.end(), media[m].field) == fields_.end()) {
        throw_invalid_argument("item_table: example ", e, " (rank ", owner, ", local index ",
                               local_index, ") media ", m, " has field '", media[m].field,
                               "', which the model does not consume (its fields: ", accepted_, ")");
      }
    }
    owner_.push_back(owner);
    local_.push_back(local_index);
    text_.push_back(text_tokens);
    for (const auto& m : media) {
      media_field_.push_back(intern(m.field));
      media_length_.push_back(m.length);
      media_position_.push_back(m.text_position);
      media_example_.push_back(e);
    }
    media_begin_.push_back(static_cast<index_t>(media_field_.size()));
    return e;
  }

  /// The open table whose examples are the rows of `columns`, media field codes naming
  /// `field_names`: the same table (and field ids) as add_example called for every example in
  /// order with its media, in one call (bindings pass whole arrays without a per-example loop).
  /// Complexity: O(examples + media · fields).
  /// Throws: orch::invalid_argument naming the column or the item (per-example or per-media
  /// columns of different lengths, a media example outside [0, examples) or below the
  /// previous one, a field code outside [0, field_names.size())), and whatever add_example
  /// throws, naming the example.
  [[nodiscard]] static item_table from_columns(const item_columns& columns,
                                               std::span<const std::string> field_names) {
    item_table t;
    t.append_columns(columns, field_names);
    return t;
  }

  /// from_columns into a table made for `model` (only its fields accepted, ids in its order).
  /// Complexity, Throws: as above.
  [[nodiscard]] static item_table from_columns(const item_columns& columns,
                                               std::span<const std::string> field_names,
                                               const model_description& model) {
    item_table t(model);
    t.append_columns(columns, field_names);
    return t;
  }

  [[nodiscard]] index_t examples() const noexcept { return static_cast<index_t>(owner_.size()); }
  [[nodiscard]] index_t media_items() const noexcept {
    return static_cast<index_t>(media_field_.size());
  }

  [[nodiscard]] rank_t owner(index_t example) const { return owner_[at(example)]; }
  [[nodiscard]] index_t local_index(index_t example) const { return local_[at(example)]; }
  [[nodiscard]] length_t text_tokens(index_t example) const { return text_[at(example)]; }
  [[nodiscard]] index_t media_begin(index_t example) const { return media_begin_[at(example)]; }
  [[nodiscard]] index_t media_end(index_t example) const { return media_begin_[at(example) + 1]; }

  /// Field id of media item m (an index into field_names()).
  [[nodiscard]] std::int32_t media_field(index_t m) const { return media_field_[at_media(m)]; }
  [[nodiscard]] length_t media_length(index_t m) const { return media_length_[at_media(m)]; }
  /// Text tokens of its example that precede media item m in the LLM sequence.
  [[nodiscard]] length_t media_text_position(index_t m) const {
    return media_position_[at_media(m)];
  }
  /// The example media item m belongs to.
  [[nodiscard]] index_t media_example(index_t m) const { return media_example_[at_media(m)]; }

  /// Media field names (ids are positions in this list): the model's fields for a table made
  /// for a model, else in order of first appearance.
  [[nodiscard]] const std::vector<std::string>& field_names() const noexcept { return fields_; }

  /// Column views, for algorithms that sweep the whole table.
  [[nodiscard]] std::span<const rank_t> owners() const noexcept { return owner_; }
  [[nodiscard]] std::span<const index_t> local_indices() const noexcept { return local_; }
  [[nodiscard]] std::span<const length_t> text_lengths() const noexcept { return text_; }
  [[nodiscard]] std::span<const length_t> media_lengths() const noexcept { return media_length_; }
  [[nodiscard]] std::span<const length_t> media_text_positions() const noexcept {
    return media_position_;
  }
  [[nodiscard]] std::span<const std::int32_t> media_fields() const noexcept { return media_field_; }
  [[nodiscard]] std::span<const index_t> media_examples() const noexcept { return media_example_; }
  /// examples() + 1 offsets: media of example e are [media_offsets()[e], media_offsets()[e+1]).
  [[nodiscard]] std::span<const index_t> media_offsets() const noexcept { return media_begin_; }

  /// Checks the table against `ranks`: every owner in [0, ranks), and the local indices of
  /// each rank's examples are exactly 0..count−1 (each once).
  /// Complexity: O(examples + ranks).
  /// Throws: orch::invalid_argument naming the example and rank.
  void validate(rank_t ranks) const {
    if (ranks <= 0) {
      throw_invalid_argument("item_table: number of ranks must be positive, got ", ranks);
    }
    std::vector<index_t> count(static_cast<std::size_t>(ranks), 0);
    for (index_t e = 0; e < examples(); ++e) {
      const rank_t r = owner_[static_cast<std::size_t>(e)];
      if (r >= ranks) {
        throw_invalid_argument("item_table: example ", e, " is owned by rank ", r, ", outside [0, ",
                               ranks, ")");
      }
      ++count[static_cast<std::size_t>(r)];
    }
    // Local indices of rank r must be a permutation of 0..count[r]−1: mark each once.
    std::vector<index_t> first(static_cast<std::size_t>(ranks) + 1, 0);
    for (std::size_t r = 0; r < count.size(); ++r) {
      first[r + 1] = first[r] + count[r];
    }
    std::vector<index_t> seen(static_cast<std::size_t>(examples()), -1);
    for (index_t e = 0; e < examples(); ++e) {
      const auto r = static_cast<std::size_t>(owner_[static_cast<std::size_t>(e)]);
      const index_t l = local_[static_cast<std::size_t>(e)];
      if (l >= count[r]) {
        throw_invalid_argument("item_table: example ", e, " has local index ", l, " on rank ", r,
                               ", which holds only ", count[r], " examples");
      }
      auto& slot = seen[static_cast<std::size_t>(first[r] + l)];
      if (slot >= 0) {
        throw_invalid_argument("item_table: examples ", slot, " and ", e, " both have local index ",
                               l, " on rank ", r);
      }
      slot = e;
    }
  }

private:
  void append_columns(const item_columns& c, std::span<const std::string> field_names) {
    const std::size_t n = c.owner.size();
    const std::size_t media = c.media_example.size();
    if (c.local_index.size() != n || c.text_tokens.size() != n) {
      throw_invalid_argument("item_table::from_columns: ", n, " owners but ", c.local_index.size(),
                             " local indices and ", c.text_tokens.size(), " text lengths");
    }
    if (c.media_field.size() != media || c.media_length.size() != media ||
        c.media_text_position.size() != media) {
      throw_invalid_argument("item_table::from_columns: ", media, " media items but ",
                             c.media_field.size(), " fields, ", c.media_length.size(),
                             " lengths and ", c.media_text_position.size(), " text positions");
    }
    for (std::size_t m = 0; m < media; ++m) {
      const index_t e = c.media_example[m];
      if (e < 0 || static_cast<std::size_t>(e) >= n) {
        throw_invalid_argument("item_table::from_columns: media item ", m, " has example ", e,
                               ", outside [0, ", n, ")");
      }
      if (m > 0 && e < c.media_example[m - 1]) {
        throw_invalid_argument("item_table::from_columns: media item ", m, " has example ", e,
                               " after media of example ", c.media_example[m - 1],
                               " (media are grouped by example in example order)");
      }
      const std::int32_t f = c.media_field[m];
      if (f < 0 || static_cast<std::size_t>(f) >= field_names.size()) {
        throw_invalid_argument("item_table::from_columns: media item ", m, " has field code ", f,
                               ", outside [0, ", field_names.size(), ") of the field names");
      }
    }
    owner_.reserve(owner_.size() + n);
    local_.reserve(local_.size() + n);
    text_.reserve(text_.size() + n);
    media_begin_.reserve(media_begin_.size() + n);
    media_field_.reserve(media_field_.size() + media);
    media_length_.reserve(media_length_.size() + media);
    media_position_.reserve(media_position_.size() + media);
    media_example_.reserve(media_example_.size() + media);
    std::vector<media_spec> specs;
    std::size_t m = 0;
    for (std::size_t e = 0; e < n; ++e) {
      specs.clear();
      for (; m < media && static_cast<std::size_t>(c.media_example[m]) == e; ++m) {
        specs.push_back({field_names[static_cast<std::size_t>(c.media_field[m])], c.media_length[m],
                         c.media_text_position[m]});
      }
      static_cast<void>(add_example(c.owner[e], c.local_index[e], c.text_tokens[e], specs));
    }
  }

  std::int32_t intern(std::string_view field) {
    for (std::size_t f = 0; f < fields_.size(); ++f) {
      if (fields_[f] == field) {
        return static_cast<std::int32_t>(f);
      }
    }
    fields_.emplace_back(field);
    return static_cast<std::int32_t>(fields_.size() - 1);
  }

  [[nodiscard]] std::size_t at(index_t example) const {
    if (example < 0 || example >= examples()) {
      throw_invalid_argument("item_table: example ", example, " outside [0, ", examples(), ")");
    }
    return static_cast<std::size_t>(example);
  }
  [[nodiscard]] std::size_t at_media(index_t m) const {
    if (m < 0 || m >= media_items()) {
      throw_invalid_argument("item_table: media item ", m, " outside [0, ", media_items(), ")");
    }
    return static_cast<std::size_t>(m);
  }

  std::vector<rank_t> owner_;
  std::vector<index_t> local_;
  std::vector<length_t> text_;
  std::vector<index_t> media_begin_{0};
  std::vector<std::int32_t> media_field_;
  std::vector<length_t> media_length_;
  std::vector<length_t> media_position_;
  std::vector<index_t> media_example_;
  std::vector<std::string> fields_;
  bool closed_ = false;  // made for a model: only its fields are accepted
  std::string accepted_; // the model's fields, for the message
};

} // namespace orch
