// SPDX-License-Identifier: Apache-2.0
// A plain CSV table (header row, no quoting) for the length data in data/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace orch_bench {

/// A CSV file read whole: a header row naming the columns, then one record per line. Cells
/// are not quoted (the length data never needs it). Blank lines are skipped.
class csv_table {
public:
  /// Reads `path`. Throws input_error when the file cannot be opened, is empty, or a row has
  /// a different number of cells than the header (naming the line).
  [[nodiscard]] static csv_table read(const std::string& path);

  [[nodiscard]] std::size_t rows() const noexcept { return line_.size(); }
  /// Index of column `name`; throws input_error naming the file and the column.
  [[nodiscard]] std::size_t column(std::string_view name) const;
  [[nodiscard]] std::string_view cell(std::size_t row, std::size_t column) const;
  /// The cell as a finite number; throws input_error naming file, line and column.
  [[nodiscard]] double number(std::size_t row, std::size_t column) const;
  /// The cell as an integer; throws input_error naming file, line and column.
  [[nodiscard]] std::int64_t integer(std::size_t row, std::size_t column) const;
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

private:
  std::string path_;
  std::vector<std::string> header_;
  std::vector<std::string> cells_; // row-major
  std::vector<std::size_t> line_;  // source line of each row
};

} // namespace orch_bench
