// SPDX-License-Identifier: Apache-2.0
// orch-bench subcommands end to end through the registry: exit codes, messages with line
// numbers, exactly one JSON object from simulate --json, calibrate's output as simulate's input.
#include "command.hpp"
#include "model_json.hpp"

#include <support/generators.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

struct run_result {
  int code = 0;
  std::string out;
  std::string err;
};

run_result run(const std::string& name, const std::vector<std::string>& args) {
  const auto it = orch_bench::commands().find(name);
  REQUIRE(it != orch_bench::commands().end());
  std::ostringstream out;
  std::ostringstream err;
  const int code = it->second.run(args, out, err);
  return {code, out.str(), err.str()};
}

// A scratch directory for this test process, removed when the process exits.
std::filesystem::path scratch() {
  struct directory {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("orch_bench_test_" + std::to_string(::getpid()));
    directory() { std::filesystem::create_directories(path); }
    directory(const directory&) = delete;
    directory& operator=(const directory&) = delete;
    ~directory() {
      std::error_code ec; // never throw from a destructor
      std::filesystem::remove_all(path, ec);
    }
  };
  static const directory dir;
  return dir.path;
}

std::string write(const std::string& name, const std::string& text) {
  const auto path = (scratch() / name).string();
  std::ofstream(path) << text;
  return path;
}

const std::string small_trace = "example,field,length\n"
                                "0,text,120\n1,text,30\n1,image,1564\n2,text,40\n2,audio,900\n"
                                "3,text,700\n4,text,20\n4,image,400\n4,image,900\n5,text,60\n"
                                "5,audio,4200\n6,text,300\n7,text,15\n7,image,3000\n";

} // namespace

TEST_CASE("simulate --json prints exactly one JSON object") {
  const auto trace = write("t.csv", small_trace);
  const auto r =
      run("simulate", {"--trace", trace, "--ranks", "8", "--ranks-per-node", "4",
                       "--examples-per-rank", "4", "--steps", "2", "--seed", "3", "--json"});
  CAPTURE(r.err);
  REQUIRE(r.code == orch_bench::exit_ok);
  const auto j = nlohmann::json::parse(r.out); // throws on anything but one JSON value
  CHECK(j.is_object());
  CHECK(j.at("strategies").size() == 4);
  CHECK(j.at("config").at("steps") == 2);
}

TEST_CASE("simulate --slack-ppm reaches the plans and the JSON config") {
  const auto trace = write("t.csv", small_trace);
  const auto with_slack = [&](const std::string& ppm) {
    return run("simulate", {"--trace", trace, "--ranks", "8", "--ranks-per-node", "4",
                            "--examples-per-rank", "4", "--steps", "2", "--seed", "3",
                            "--strategies", "per_phase,orch", "--slack-ppm", ppm, "--json"});
  };
  const auto r = with_slack("250000");
  CAPTURE(r.err);
  REQUIRE(r.code == orch_bench::exit_ok);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("config").at("slack_ppm") == 250000);
  // Every phase of orch ends within its target, LB + 25 % of LB or, when no placement meets
  // that, the partition's largest load (what per_phase runs) + 25 % of LB: so, averaged over
  // the steps, max / LB of orch ≤ that of per_phase + 0.25.
  const auto& per_phase = j.at("strategies").at(0).at("phases");
  const auto& orch = j.at("strategies").at(1).at("phases");
  REQUIRE(per_phase.size() == orch.size());
  for (std::size_t p = 0; p < orch.size(); ++p) {
    CAPTURE(orch.at(p).at("name"));
    CHECK(orch.at(p).at("max_over_lower_bound").get<double>() <=
          per_phase.at(p).at("max_over_lower_bound").get<double>() + 0.25 + 1e-9);
  }
  const auto bad = with_slack("-1");
  CHECK(bad.code == orch_bench::exit_usage);
  CHECK(bad.err.find("--slack-ppm") != std::string::npos);
}

TEST_CASE("simulate tables and --csv") {
  const auto trace = write("t.csv", small_trace);
  const auto csv = (scratch() / "steps.csv").string();
  const auto r = run("simulate", {"--trace", trace, "--ranks", "4", "--ranks-per-node", "2",
                                  "--examples-per-rank", "3", "--steps", "3", "--strategies",
                                  "orch,none", "--csv", csv});
  CAPTURE(r.err);
  REQUIRE(r.code == orch_bench::exit_ok);
  CHECK(r.out.find("strategy") != std::string::npos);
  CHECK(r.out.find("orch") != std::string::npos);
  CHECK(r.out.find("inter-node") != std::string::npos);
  std::ifstream in(csv);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
  }
  CHECK(lines == 1 + 3 * 2);
}

TEST_CASE("simulate rejects bad input with exit code 2") {
  const auto bad = write("bad.csv", "example,field,length\na,text,5\nb,photo,3\n");
  auto r = run("simulate", {"--trace", bad, "--ranks", "8"});
  CHECK(r.code == orch_bench::exit_usage);
  CHECK(r.err.find("bad.csv:3: unknown field 'photo'") != std::string::npos);
  const auto trace = write("t.csv", small_trace);
  r = run("simulate", {"--trace", trace, "--ranks", "12", "--ranks-per-node", "8"});
  CHECK(r.code == orch_bench::exit_usage);
  CHECK(r.err.find("not a multiple") != std::string::npos);
  r = run("simulate", {"--trace", trace, "--strategies", "none,best"});
  CHECK(r.code == orch_bench::exit_usage);
  CHECK(r.err.find("unknown strategy 'best'") != std::string::npos);
  r = run("simulate", {"--trace", trace, "--ranks", "zero"});
  CHECK(r.code == orch_bench::exit_usage);
  r = run("simulate", {"--trace", trace, "--frobnicate"});
  CHECK(r.code == orch_bench::exit_usage);
  CHECK(r.err.find("unknown option --frobnicate") != std::string::npos);
  // A field the model has no encoder for.
  const auto model = write("m.json", R"({"encoders": [], "llm": {"cost": {"linear": 1}}})");
  r = run("simulate", {"--trace", trace, "--model", model});
  CHECK(r.code == orch_bench::exit_usage);
  CHECK(r.err.find("no encoder of model 'custom' consumes") != std::string::npos);
  CHECK(run("simulate", {"--help"}).code == orch_bench::exit_ok);
}

TEST_CASE("make-trace: exit codes") {
  auto r = run("make-trace", {"--recipe", "nope", "--out", (scratch() / "x.csv").string()});
  CHECK(r.code == orch_bench::exit_usage);
  CHECK(r.err.find("unknown recipe 'nope'") != std::string::npos);
  r = run("make-trace", {"--recipe", "omni"});
  CHECK(r.code == orch_bench::exit_usage);
  CHECK(r.err.find("--out is required") != std::string::npos);
}

TEST_CASE("calibrate: samples with known coefficients → a model simulate accepts") {
  // LLM batches timed at a = 2e-11 s/token, b = 1e-15 s/token² (cost unit of omni-7b: 1e3
  // FLOPs × 3 / 4e14 FLOP/s = 7.5e-12 s), with 1 % noise.
  std::mt19937_64 rng(9);
  std::string samples = "# measured on nothing: synthetic\nphase,time_s,lengths\n";
  for (int i = 0; i < 80; ++i) {
    std::string lengths;
    double t = 0.0;
    const auto n = orch::test::uniform_int(rng, 1, 8);
    for (std::int64_t k = 0; k < n; ++k) {
      const auto l = orch::test::uniform_int(rng, 100, 8000);
      lengths += (k > 0 ? " " : "") + std::to_string(l);
      t += 2e-11 * static_cast<double>(l) + 1e-15 * static_cast<double>(l) * static_cast<double>(l);
    }
    t *= 1.0 + 0.01 * orch::test::normal(rng);
    std::ostringstream row;
    row.precision(12);
    row << "llm," << t << ',' << lengths << '\n';
    samples += row.str();
  }
  const auto file = write("samples.csv", samples);
  const auto r = run("calibrate", {"--samples", file});
  CAPTURE(r.err);
  REQUIRE(r.code == orch_bench::exit_ok);
  CHECK(r.err.find("R²") != std::string::npos);
  const auto model = orch_bench::model_from_json(nlohmann::json::parse(r.out), "calibrated");
  // 2e-11 / 7.5e-12 = 2.67 → 3 units; 1e-15 / 7.5e-12 = 1.3e-4 → rounds to 0 (a warning).
  CHECK(model.model.llm.cost.linear == 3);
  CHECK(r.err.find("rounds to 0") != std::string::npos);
  // A finer unit keeps the quadratic term: 1e-15 / 1e-16 = 10.
  const auto fine = run("calibrate", {"--samples", file, "--unit-seconds", "1e-16"});
  REQUIRE(fine.code == orch_bench::exit_ok);
  const auto m2 = orch_bench::model_from_json(nlohmann::json::parse(fine.out), "calibrated");
  CHECK(m2.model.llm.cost.quadratic == doctest::Approx(10).epsilon(0.1));
  CHECK(m2.model.llm.cost.linear == doctest::Approx(200'000).epsilon(0.05));
  // Uncalibrated phases were rescaled to the new unit: vision's cost in seconds is unchanged.
  const auto base = orch_bench::default_model();
  const double ratio = static_cast<double>(m2.model.encoders[0].cost.linear) /
                       static_cast<double>(base.model.encoders[0].cost.linear);
  CHECK(ratio == doctest::Approx(7.5e-12 / 1e-16).epsilon(1e-6));
  // The calibrated model runs in simulate.
  const auto model_file = write("calibrated.json", fine.out);
  const auto trace = write("t.csv", small_trace);
  const auto sim = run("simulate", {"--trace", trace, "--model", model_file, "--ranks", "4",
                                    "--ranks-per-node", "4", "--steps", "1", "--json"});
  CAPTURE(sim.err);
  CHECK(sim.code == orch_bench::exit_ok);
}

TEST_CASE("calibrate rejects malformed samples with the line number") {
  const auto bad = write("bad_samples.csv", "phase,time_s,lengths\nllm,0.1,10 20\nllm,x,5\n");
  auto r = run("calibrate", {"--samples", bad});
  CHECK(r.code == orch_bench::exit_usage);
  CHECK(r.err.find("bad_samples.csv:3: time_s") != std::string::npos);
  const auto unknown = write("unknown.csv", "phase,time_s,lengths\nvit,0.1,10\n");
  r = run("calibrate", {"--samples", unknown});
  CHECK(r.code == orch_bench::exit_usage);
  CHECK(r.err.find("phase 'vit'") != std::string::npos);
  const auto neg = write("neg.csv", "phase,time_s,lengths\nllm,0.1,10 -2\n");
  r = run("calibrate", {"--samples", neg});
  CHECK(r.code == orch_bench::exit_usage);
  CHECK(r.err.find("neg.csv:2: length '-2'") != std::string::npos);
}

TEST_CASE("model prints a preset that loads back") {
  const auto r = run("model", {"--preset", "omni-72b"});
  REQUIRE(r.code == orch_bench::exit_ok);
  const auto m = orch_bench::model_from_json(nlohmann::json::parse(r.out), "printed");
  CHECK(m.name == "omni-72b");
  CHECK(run("model", {"--preset", "x"}).code == orch_bench::exit_usage);
}

TEST_CASE("demo runs on the bundled trace") {
  const auto r = run("demo", {"--scales", "8,16", "--steps", "1"});
  CAPTURE(r.err);
  REQUIRE(r.code == orch_bench::exit_ok);
  CHECK(r.out.find("llm max/mean") != std::string::npos);
  for (const char* s : {"none", "llm_only", "per_phase", "orch"}) {
    CHECK(r.out.find(s) != std::string::npos);
  }
  CHECK(run("demo", {"--scales", "12"}).code == orch_bench::exit_usage);
}
