// SPDX-License-Identifier: Apache-2.0
// Reading and writing P||Cmax instance files for orch-bench: the `pcmax` format of the
// scheduling literature and a plain one-cost-per-line format.
#pragma once

#include "input_error.hpp"

#include <orch/types.hpp>

#include <cstddef>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace orch_bench {

/// How an instance file is laid out.
enum class instance_format {
  detect, ///< `pcmax` when the first non-blank line starts with the token `p`, else `costs`
  pcmax,  ///< line 1 `p p_cmax <n> <m>`, line 2 the n costs then a 0; later lines ignored
  costs,  ///< one non-negative integer per line; blank lines skipped; no bin count
};

/// "pcmax", "costs" or "detect" to the format; false when the name is none of them.
[[nodiscard]] bool parse_instance_format(std::string_view name, instance_format& out);

/// A parsed instance: the item costs and, for `pcmax`, the bin count m (0 for `costs`).
struct instance {
  std::vector<orch::cost_t> costs;
  orch::rank_t bins = 0;
  instance_format format = instance_format::costs; ///< the format it was read as
};

/// A malformed instance file: the message reads "SOURCE:LINE: what is wrong" and `line()` is
/// the 1-based line at fault. Commands turn it into exit code 2, as every input_error.
class parse_error : public input_error {
public:
  parse_error(std::string_view source, std::size_t line, std::string_view message);
  [[nodiscard]] std::size_t line() const noexcept { return line_; }

private:
  std::size_t line_;
};

/// Parses an instance from `in`; `source` names it in messages (a file name).
/// Throws parse_error naming the line.
[[nodiscard]] instance parse_instance(std::istream& in, instance_format format,
                                      std::string_view source = "<input>");

/// Opens and parses `path`. Throws std::runtime_error when the file cannot be read,
/// parse_error when it is malformed.
[[nodiscard]] instance read_instance_file(const std::string& path, instance_format format);

/// Writes `costs` and `bins` in the `pcmax` format.
void write_pcmax(std::ostream& out, std::span<const orch::cost_t> costs, orch::rank_t bins);

} // namespace orch_bench
