// SPDX-License-Identifier: Apache-2.0
#include "trace.hpp"

#include "input_error.hpp"

#include <algorithm>
#include <fstream>
#include <istream>
#include <map>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>

namespace orch_bench {

std::string_view to_string(field f) noexcept {
  return field_names[static_cast<std::size_t>(f)];
}

std::optional<field> parse_field(std::string_view name) noexcept {
  for (std::size_t i = 0; i < field_names.size(); ++i) {
    if (field_names[i] == name) {
      return static_cast<field>(i);
    }
  }
  return std::nullopt;
}

void trace::add_example(std::string id, orch::length_t text_tokens,
                        std::span<const media_item> media) {
  if (text_tokens < 0) {
    throw std::invalid_argument(cat("trace: example '", id, "' has negative text length"));
  }
  for (const auto& m : media) {
    if (m.kind == field::text || m.length < 1) {
      throw std::invalid_argument(
          cat("trace: example '", id, "' has a media item of field text or length below 1"));
    }
  }
  ids_.push_back(std::move(id));
  text_.push_back(text_tokens);
  media_.insert(media_.end(), media.begin(), media.end());
  media_begin_.push_back(media_.size());
}

std::span<const media_item> trace::media(std::size_t example) const {
  const std::size_t b = media_begin_.at(example);
  const std::size_t e = media_begin_.at(example + 1);
  return std::span<const media_item>(media_).subspan(b, e - b);
}

namespace {

bool valid_id(std::string_view id) {
  return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           c == '-' || c == '.' || c == ':' || c == '/';
  });
}

// The example being read: its id, the line of its first row, and its rows so far.
struct pending {
  std::string id;
  std::size_t first_line = 0;
  orch::length_t text = 0;
  std::vector<media_item> media;
};

} // namespace

trace read_trace(std::istream& in, std::string_view source) {
  trace out;
  std::string line;
  std::size_t number = 0;
  bool header_seen = false;
  std::optional<pending> current;
  // Ids of examples already closed, with their first line, to reject split examples.
  std::map<std::string, std::size_t, std::less<>> closed;

  const auto flush = [&] {
    if (current) {
      out.add_example(current->id, current->text, current->media);
      closed.emplace(current->id, current->first_line);
      current.reset();
    }
  };

  while (std::getline(in, line)) {
    ++number;
    const std::string_view text = trim(line);
    if (text.empty() || text.front() == '#') {
      continue;
    }
    if (!header_seen) {
      if (text != "example,field,length") {
        fail_input(
            source, number,
            cat("expected the header 'example,field,length', got '", std::string(text), "'"));
      }
      header_seen = true;
      continue;
    }
    const auto c1 = text.find(',');
    const auto c2 = c1 == std::string_view::npos ? c1 : text.find(',', c1 + 1);
    if (c2 == std::string_view::npos || text.find(',', c2 + 1) != std::string_view::npos) {
      fail_input(source, number, "expected 3 comma-separated cells (example,field,length)");
    }
    const std::string_view id = trim(text.substr(0, c1));
    const std::string_view name = trim(text.substr(c1 + 1, c2 - c1 - 1));
    const std::string_view len_text = trim(text.substr(c2 + 1));
    if (!valid_id(id)) {
      fail_input(source, number,
                 cat("example id '", std::string(id),
                     "' is empty or has characters other than letters, digits and _-.:/"));
    }
    const auto f = parse_field(name);
    if (!f) {
      fail_input(
          source, number,
          cat("unknown field '", std::string(name), "' (expected text, image, audio or video)"));
    }
    const auto len = parse_int(len_text);
    const orch::length_t min_len = *f == field::text ? 0 : 1;
    if (!len || *len < min_len || *len > max_row_length) {
      fail_input(source, number,
                 cat("length '", std::string(len_text), "' of field ", std::string(name),
                     " is not an integer in [", std::to_string(min_len), ", 2^31]"));
    }
    if (!current || current->id != id) {
      flush();
      if (const auto it = closed.find(id); it != closed.end()) {
        fail_input(source, number,
                   cat("rows of example '", std::string(id),
                       "' are not contiguous (it started at line ", std::to_string(it->second),
                       ")"));
      }
      current = pending{std::string(id), number, 0, {}};
    }
    if (*f == field::text) {
      // Lengths are at most 2^31 each, so an example needs over 2^32 rows to overflow.
      current->text += *len;
    } else {
      current->media.push_back(media_item{*f, *len});
    }
  }
  if (in.bad()) {
    fail_input(source, number, "read error");
  }
  flush();
  if (!header_seen) {
    fail_input(source, number, "empty trace: no header 'example,field,length'");
  }
  if (out.empty()) {
    fail_input(source, number, "trace has no example rows");
  }
  return out;
}

trace read_trace_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    fail_input(path, 0, "cannot open the trace file");
  }
  return read_trace(in, path);
}

void write_trace(std::ostream& out, const trace& t, std::span<const std::string> comment) {
  for (const auto& c : comment) {
    out << "# " << c << '\n';
  }
  out << "example,field,length\n";
  for (std::size_t e = 0; e < t.size(); ++e) {
    const auto media = t.media(e);
    if (t.text_tokens(e) > 0 || media.empty()) {
      out << t.id(e) << ",text," << t.text_tokens(e) << '\n';
    }
    for (const auto& m : media) {
      out << t.id(e) << ',' << to_string(m.kind) << ',' << m.length << '\n';
    }
  }
}

trace_summary summarize(const trace& t) {
  trace_summary s;
  s.examples = t.size();
  for (std::size_t e = 0; e < t.size(); ++e) {
    std::array<bool, 4> has{};
    if (t.text_tokens(e) > 0) {
      has[0] = true;
      ++s.items[0];
      s.total[0] += t.text_tokens(e);
      s.max_length[0] = std::max(s.max_length[0], t.text_tokens(e));
    }
    for (const auto& m : t.media(e)) {
      const auto f = static_cast<std::size_t>(m.kind);
      has[f] = true;
      ++s.items[f];
      s.total[f] += m.length;
      s.max_length[f] = std::max(s.max_length[f], m.length);
    }
    for (std::size_t f = 0; f < 4; ++f) {
      s.examples_with[f] += has[f] ? 1U : 0U;
    }
  }
  return s;
}

} // namespace orch_bench
