// SPDX-License-Identifier: Apache-2.0
// Length traces: per-example text and media lengths in fixed units, read from and written to
// the CSV format of docs/trace-format.md (header `example,field,length`).
#pragma once

#include <orch/types.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace orch_bench {

/// The fields of a trace and their units. Fixed, so traces are portable between tools.
enum class field : std::uint8_t {
  text,  ///< LLM tokens
  image, ///< vision encoder input patches of 14×14 pixels
  audio, ///< audio encoder input frames, 100 per second
  video, ///< vision encoder input patches of 14×14 pixels over frames sampled at 2 per second
};

/// Field names as they appear in the CSV, indexed by field.
inline constexpr std::array<std::string_view, 4> field_names{"text", "image", "audio", "video"};

[[nodiscard]] std::string_view to_string(field f) noexcept;
/// The field named `name`, or nothing.
[[nodiscard]] std::optional<field> parse_field(std::string_view name) noexcept;

/// One media item of an example (a field other than text) and its length in the field's unit.
struct media_item {
  field kind = field::image;
  orch::length_t length = 0;
};

/// Largest length of one row; larger values are surely a unit mistake (2^31 patches is
/// a 1.6-Gpixel frame) and would risk overflow further down.
inline constexpr orch::length_t max_row_length = orch::length_t{1} << 31;

/// Examples with their text tokens (all text rows summed) and media items in row order, which
/// is the order of their encoder outputs in the example's LLM sequence.
class trace {
public:
  /// Appends an example. Complexity: O(media). Throws: std::invalid_argument for a negative
  /// text length, a media item of field text or a media length below 1.
  void add_example(std::string id, orch::length_t text_tokens, std::span<const media_item> media);

  [[nodiscard]] std::size_t size() const noexcept { return text_.size(); }
  [[nodiscard]] bool empty() const noexcept { return text_.empty(); }
  [[nodiscard]] const std::string& id(std::size_t example) const { return ids_.at(example); }
  [[nodiscard]] orch::length_t text_tokens(std::size_t example) const { return text_.at(example); }
  [[nodiscard]] std::span<const media_item> media(std::size_t example) const;
  /// Number of media items over all examples.
  [[nodiscard]] std::size_t media_items() const noexcept { return media_.size(); }

private:
  std::vector<std::string> ids_;
  std::vector<orch::length_t> text_;
  std::vector<std::size_t> media_begin_{0};
  std::vector<media_item> media_;
};

/// Reads a trace in the CSV format of docs/trace-format.md. `source` names the input in
/// messages. Complexity: O(bytes). Throws: input_error "SOURCE:LINE: ..." for a missing or
/// wrong header, a row without exactly three cells, an empty or malformed example id, an
/// unknown field, a length that is not an integer in range, an example whose rows are not
/// contiguous, or a trace with no example.
[[nodiscard]] trace read_trace(std::istream& in, std::string_view source);
/// read_trace on a file; throws input_error when it cannot be opened.
[[nodiscard]] trace read_trace_file(const std::string& path);

/// Writes `t` in the CSV format: `comment` lines first (each prefixed with "# "), the header,
/// then per example its text row (omitted when the example has media and no text) and its
/// media rows in order. read_trace(write_trace(t)) == t.
void write_trace(std::ostream& out, const trace& t, std::span<const std::string> comment = {});

/// Per-field count, sum and maximum of a trace, for the make-trace summary.
struct trace_summary {
  std::size_t examples = 0;
  std::array<std::size_t, 4> items{};         ///< rows per field (text: examples with text)
  std::array<std::int64_t, 4> total{};        ///< summed length per field
  std::array<orch::length_t, 4> max_length{}; ///< largest single item per field
  std::array<std::size_t, 4> examples_with{}; ///< examples that have the field
};
[[nodiscard]] trace_summary summarize(const trace& t);

} // namespace orch_bench
