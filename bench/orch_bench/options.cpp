// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include "input_error.hpp"

#include <ostream>
#include <sstream>
#include <utility>

namespace orch_bench {

option_parser::option_parser(std::string usage, std::string description)
    : usage_(std::move(usage)), description_(std::move(description)) {}

void option_parser::flag(const std::string& name, const std::string& help) {
  order_.push_back(name);
  specs_[name] = spec{false, "", help, ""};
}

void option_parser::value(const std::string& name, const std::string& metavar,
                          const std::string& help, const std::string& fallback) {
  order_.push_back(name);
  specs_[name] = spec{true, metavar, help, fallback};
}

void option_parser::parse(const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--help" || arg == "-h") {
      help_ = true;
      return;
    }
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) {
      throw input_error(cat("unexpected argument '", arg, "' (options start with --)"));
    }
    std::string name = arg.substr(2);
    std::string val;
    bool inline_value = false;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      val = name.substr(eq + 1);
      name.resize(eq);
      inline_value = true;
    }
    const auto it = specs_.find(name);
    if (it == specs_.end()) {
      throw input_error(cat("unknown option --", name, " (see --help)"));
    }
    if (values_.count(name) != 0) {
      throw input_error(cat("option --", name, " given twice"));
    }
    if (it->second.takes_value) {
      if (!inline_value) {
        if (i + 1 >= args.size()) {
          throw input_error(cat("option --", name, " needs a value (", it->second.metavar, ")"));
        }
        val = args[++i];
      }
      values_[name] = val;
    } else {
      if (inline_value) {
        throw input_error(cat("option --", name, " takes no value"));
      }
      values_[name] = std::string(1, '1'); // not = "1": GCC 12 -O2 false -Wrestrict
    }
  }
}

void option_parser::print_help(std::ostream& out) const {
  out << "usage: orch-bench " << usage_ << "\n\n" << description_ << "\n\noptions:\n";
  for (const auto& name : order_) {
    const auto& s = specs_.at(name);
    std::string left = cat("  --", name);
    if (s.takes_value) {
      left += ' ';
      left += s.metavar;
    }
    out << left;
    if (left.size() < 28) {
      out << std::string(28 - left.size(), ' ');
    } else {
      out << "\n" << std::string(28, ' ');
    }
    out << s.help;
    if (s.takes_value && !s.fallback.empty()) {
      out << " [default: " << s.fallback << ']';
    }
    out << '\n';
  }
}

bool option_parser::given(const std::string& name) const {
  return values_.count(name) != 0;
}

std::string option_parser::get(const std::string& name) const {
  if (const auto it = values_.find(name); it != values_.end()) {
    return it->second;
  }
  const auto s = specs_.find(name);
  if (s == specs_.end() || s->second.fallback.empty()) {
    throw input_error(cat("option --", name, " is required (see --help)"));
  }
  return s->second.fallback;
}

std::int64_t option_parser::get_int(const std::string& name, std::int64_t min,
                                    std::int64_t max) const {
  const std::string text = get(name);
  const auto v = parse_int(text);
  if (!v || *v < min || *v > max) {
    std::ostringstream msg;
    msg << "option --" << name << ": '" << text << "' is not an integer in [" << min << ", " << max
        << ']';
    throw input_error(msg.str());
  }
  return *v;
}

double option_parser::get_double(const std::string& name, double min, double max) const {
  const std::string text = get(name);
  const auto v = parse_double(text);
  if (!v || *v < min || *v > max) {
    std::ostringstream msg;
    msg << "option --" << name << ": '" << text << "' is not a number in [" << min << ", " << max
        << ']';
    throw input_error(msg.str());
  }
  return *v;
}

} // namespace orch_bench
