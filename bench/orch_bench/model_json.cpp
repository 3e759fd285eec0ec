// SPDX-License-Identifier: Apache-2.0
#include "model_json.hpp"

#include "input_error.hpp"

#include <orch/config.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <limits>

namespace orch_bench {

using nlohmann::json;

namespace {

json cost_json(const orch::attention_cost& c) {
  return json{{"linear", c.linear}, {"quadratic", c.quadratic}, {"per_item", c.per_item}};
}

} // namespace

json to_json(const bench_model& m) {
  json encoders = json::array();
  for (const auto& e : m.model.encoders) {
    json chunks = json::object();
    json fields = json::array();
    for (const auto& f : e.fields) {
      fields.push_back(f.name);
      if (f.chunk_length > 0) {
        chunks[f.name] = f.chunk_length;
      }
    }
    encoders.push_back(json{{"name", e.name},
                            {"fields", fields},
                            {"cost", cost_json(e.cost)},
                            {"output_divisor", e.output_divisor},
                            {"output_extra", e.output_extra},
                            {"max_output_tokens", e.max_output_tokens},
                            {"input_bytes_per_unit", e.input_bytes_per_unit},
                            {"feature_bytes_per_token", e.feature_bytes_per_token},
                            {"chunk_input_length", chunks}});
  }
  return json{{"name", m.name},
              {"description", m.description},
              {"encoders", encoders},
              {"llm",
               {{"name", m.model.llm.name},
                {"cost", cost_json(m.model.llm.cost)},
                {"text_bytes_per_token", m.model.llm.text_bytes_per_token}}},
              {"simulation",
               {{"cost_unit_flops", m.sim.cost_unit_flops},
                {"achieved_flops", m.sim.achieved_flops},
                {"backward_factor", m.sim.backward_factor},
                {"nvlink_bytes_per_s", m.sim.nvlink_bytes_per_s},
                {"network_bytes_per_s", m.sim.network_bytes_per_s}}}};
}

namespace {

// Reads one JSON object strictly: every key must be known, and each getter checks its type.
class reader {
public:
  reader(const json& j, std::string source, std::string path)
      : j_(j), source_(std::move(source)), path_(std::move(path)) {
    if (!j_.is_object()) {
      fail("expected an object");
    }
  }

  [[noreturn]] void fail(const std::string& message) const {
    fail_input(source_, 0, (path_.empty() ? std::string("model") : path_) + ": " + message);
  }

  void only(std::initializer_list<const char*> keys) const {
    for (const auto& [key, value] : j_.items()) {
      bool known = false;
      for (const char* k : keys) {
        known = known || key == k;
      }
      if (!known) {
        fail(cat("unknown key '", key, "'"));
      }
    }
  }

  [[nodiscard]] bool has(const char* key) const { return j_.contains(key); }

  [[nodiscard]] const json& at(const char* key) const {
    if (!j_.contains(key)) {
      fail(cat("missing key '", std::string(key), "'"));
    }
    return j_.at(key);
  }

  [[nodiscard]] reader child(const char* key) const { return reader(at(key), source_, sub(key)); }

  [[nodiscard]] std::string sub(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }

  [[nodiscard]] std::string string(const char* key, const std::string& fallback) const {
    if (!has(key)) {
      return fallback;
    }
    const auto& v = j_.at(key);
    if (!v.is_string()) {
      fail(cat("'", std::string(key), "' must be a string"));
    }
    return v.get<std::string>();
  }

  [[nodiscard]] std::int64_t integer(const char* key, std::int64_t fallback, bool required) const {
    if (!has(key)) {
      if (required) {
        fail(cat("missing key '", std::string(key), "'"));
      }
      return fallback;
    }
    const auto& v = j_.at(key);
    if (!v.is_number_integer() ||
        (v.is_number_unsigned() &&
         v.get<std::uint64_t>() >
             static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))) {
      fail(cat("'", std::string(key), "' must be an integer"));
    }
    const auto x = v.get<std::int64_t>();
    if (x < 0) {
      fail(cat("'", std::string(key), "' must be non-negative, got ", std::to_string(x)));
    }
    return x;
  }

  [[nodiscard]] double number(const char* key, double fallback) const {
    if (!has(key)) {
      return fallback;
    }
    const auto& v = j_.at(key);
    if (!v.is_number()) {
      fail(cat("'", std::string(key), "' must be a number"));
    }
    return v.get<double>();
  }

  [[nodiscard]] const json& raw() const noexcept { return j_; }
  [[nodiscard]] const std::string& source() const noexcept { return source_; }

private:
  const json& j_;
  std::string source_;
  std::string path_;
};

orch::attention_cost read_cost(const reader& r) {
  r.only({"linear", "quadratic", "per_item"});
  return {r.integer("linear", 0, true), r.integer("quadratic", 0, false),
          r.integer("per_item", 0, false)};
}

} // namespace

bench_model model_from_json(const json& j, std::string_view source) {
  const reader root(j, std::string(source), "");
  root.only({"name", "description", "encoders", "llm", "simulation"});
  bench_model m;
  m.name = root.string("name", "custom");
  m.description = root.string("description", "");
  const json& encs = root.at("encoders");
  if (!encs.is_array()) {
    root.fail("'encoders' must be an array");
  }
  for (std::size_t i = 0; i < encs.size(); ++i) {
    const reader e(encs[i], root.source(), cat("encoders[", std::to_string(i), "]"));
    e.only({"name", "fields", "cost", "output_divisor", "output_extra", "max_output_tokens",
            "input_bytes_per_unit", "feature_bytes_per_token", "chunk_input_length"});
    orch::encoder_model enc;
    enc.name = e.string("name", "");
    const json& fields = e.at("fields");
    if (!fields.is_array()) {
      e.fail("'fields' must be an array of strings");
    }
    for (const auto& f : fields) {
      if (!f.is_string()) {
        e.fail("'fields' must be an array of strings");
      }
      enc.fields.push_back(f.get<std::string>());
    }
    enc.cost = read_cost(e.child("cost"));
    enc.output_divisor = e.integer("output_divisor", 1, false);
    enc.output_extra = e.integer("output_extra", 0, false);
    enc.max_output_tokens = e.integer("max_output_tokens", 0, false);
    enc.input_bytes_per_unit = e.integer("input_bytes_per_unit", 0, false);
    enc.feature_bytes_per_token = e.integer("feature_bytes_per_token", 0, false);
    if (e.has("chunk_input_length")) {
      const reader chunks = e.child("chunk_input_length");
      for (const auto& entry : chunks.raw().items()) {
        // A named copy: clang 14 cannot capture a structured binding in a lambda.
        const std::string f = entry.key();
        const auto it = std::find_if(enc.fields.begin(), enc.fields.end(),
                                     [&](const orch::media_field& g) { return g.name == f; });
        if (it == enc.fields.end()) {
          chunks.fail(cat("field '", f, "' is not one of this encoder's fields"));
        }
        it->chunk_length = chunks.integer(f.c_str(), 0, true);
        if (it->chunk_length <= 0) {
          chunks.fail(cat("chunk_input_length of field '", f, "' is ",
                          std::to_string(it->chunk_length), " (must be positive)"));
        }
      }
    }
    m.model.encoders.push_back(std::move(enc));
  }
  const reader llm = root.child("llm");
  llm.only({"name", "cost", "text_bytes_per_token"});
  m.model.llm.name = llm.string("name", "llm");
  m.model.llm.cost = read_cost(llm.child("cost"));
  m.model.llm.text_bytes_per_token = llm.integer("text_bytes_per_token", 8, false);
  if (root.has("simulation")) {
    const reader s = root.child("simulation");
    s.only({"cost_unit_flops", "achieved_flops", "backward_factor", "nvlink_bytes_per_s",
            "network_bytes_per_s"});
    const simulation_constants d;
    m.sim.cost_unit_flops = s.number("cost_unit_flops", d.cost_unit_flops);
    m.sim.achieved_flops = s.number("achieved_flops", d.achieved_flops);
    m.sim.backward_factor = s.number("backward_factor", d.backward_factor);
    m.sim.nvlink_bytes_per_s = s.number("nvlink_bytes_per_s", d.nvlink_bytes_per_s);
    m.sim.network_bytes_per_s = s.number("network_bytes_per_s", d.network_bytes_per_s);
  }
  try {
    m.validate();
  } catch (const orch::error& e) {
    fail_input(source, 0, e.what());
  }
  return m;
}

bench_model load_model_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    fail_input(path, 0, "cannot open the model file");
  }
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    fail_input(path, 0, std::string("not valid JSON: ") + e.what());
  }
  return model_from_json(j, path);
}

} // namespace orch_bench
