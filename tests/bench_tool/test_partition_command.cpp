// SPDX-License-Identifier: Apache-2.0
// `orch-bench partition` and its instance-file parser: output, options, and malformed files
// rejected with the line named and exit code 2.
#include "command.hpp"
#include "instance_file.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

namespace fs = std::filesystem;

/// A file with `text` under a per-process temporary folder, removed at the end of the test.
class temp_file {
public:
  temp_file(const std::string& name, const std::string& text)
      : path_(fs::temp_directory_path() /
              ("orch_test_partition_" + std::to_string(::getpid()) + "_" + name)) {
    std::ofstream(path_) << text;
  }
  ~temp_file() {
    std::error_code ignored;
    fs::remove(path_, ignored);
  }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  [[nodiscard]] std::string path() const { return path_.string(); }

private:
  fs::path path_;
};

struct outcome {
  int code;
  std::string out;
  std::string err;
};

outcome run(std::vector<std::string> args) {
  std::ostringstream out;
  std::ostringstream err;
  const int code = orch_bench::commands().at("partition").run(args, out, err);
  return {code, out.str(), err.str()};
}

/// The value of a JSON key in a flat one-line object, as text (numbers, true/false, "strings").
std::string json_value(const std::string& json, const std::string& key) {
  const std::string needle = "\"" + key + "\":";
  const auto at = json.find(needle);
  if (at == std::string::npos) {
    return "<missing>";
  }
  const auto start = at + needle.size();
  const auto end = json.find_first_of(",}", start);
  return json.substr(start, end - start);
}

const std::string graham = "p p_cmax 7 3\n5 5 4 4 3 3 3 0\nthis line is ignored\n";

} // namespace

TEST_CASE("partition command: pcmax file, --json prints one object with every key") {
  const temp_file f("graham.txt", graham);
  const auto r = run({"--instance", f.path(), "--algo", "veomni_greedy", "--json"});
  REQUIRE(r.code == orch_bench::exit_ok);
  CHECK(r.err.empty());
  // One object on one line.
  REQUIRE(!r.out.empty());
  CHECK(r.out.front() == '{');
  CHECK(r.out.substr(r.out.size() - 2) == "}\n");
  CHECK(r.out.find('\n') == r.out.size() - 1);
  CHECK(json_value(r.out, "algo") == "\"veomni_greedy\"");
  CHECK(json_value(r.out, "n") == "7");
  CHECK(json_value(r.out, "bins") == "3");
  CHECK(json_value(r.out, "max_load") == "11"); // LPT on Graham's worst case
  CHECK(json_value(r.out, "lower_bound") == "9");
  CHECK(json_value(r.out, "proven_optimal") == "false");
  CHECK(json_value(r.out, "time_ms") != "<missing>");
}

TEST_CASE("partition command: orch's default finds the optimum of Graham's instance") {
  const temp_file f("graham_auto.txt", graham);
  const auto r = run({"--instance", f.path(), "--json"});
  REQUIRE(r.code == orch_bench::exit_ok);
  CHECK(json_value(r.out, "algo") == "\"auto\"");
  CHECK(json_value(r.out, "max_load") == "9");
  CHECK(json_value(r.out, "proven_optimal") == "true");
}

TEST_CASE("partition command: --bins overrides m, costs files need --bins") {
  const temp_file f("graham_bins.txt", graham);
  const auto r = run({"--instance", f.path(), "--bins", "1", "--json"});
  REQUIRE(r.code == orch_bench::exit_ok);
  CHECK(json_value(r.out, "bins") == "1");
  CHECK(json_value(r.out, "max_load") == "27");

  const temp_file costs("costs.txt", "5\n5\n\n4\n4\r\n3\n3\n3\n");
  const auto c = run({"--instance", costs.path(), "--format", "costs", "--bins", "3", "--algo",
                      "sorted_round_robin", "--json"});
  REQUIRE(c.code == orch_bench::exit_ok);
  CHECK(json_value(c.out, "n") == "7");
  CHECK(json_value(c.out, "max_load") == "12"); // 5+4+3 on rank 0
  const auto detected = run({"--instance", costs.path(), "--bins", "3", "--algo",
                             "sorted_round_robin", "--json"}); // --format detect: costs
  CHECK(detected.code == orch_bench::exit_ok);
  CHECK(json_value(detected.out, "max_load") == "12");
  const auto missing = run({"--instance", costs.path()});
  CHECK(missing.code == orch_bench::exit_usage);
  CHECK(missing.err.find("--bins") != std::string::npos);
}

TEST_CASE("partition command: every peer by name, and a readable line without --json") {
  const temp_file f("peers.txt", "p p_cmax 6 3\n6 5 4 3 2 1 0\n");
  for (const std::string algo :
       {"verl_kk", "verl_kk_equal", "veomni_greedy", "veomni_greedy_unsorted", "mindspeed_greedy",
        "llava_grouped", "sorted_round_robin", "no_balancing"}) {
    CAPTURE(algo);
    const auto r = run({"--instance", f.path(), "--algo", algo});
    CHECK(r.code == orch_bench::exit_ok);
    CHECK(r.out.rfind(algo + ": n=6 bins=3 max_load=", 0) == 0);
  }
  const auto none = run({"--instance", f.path(), "--algo", "no_balancing", "--json"});
  CHECK(json_value(none.out, "max_load") == "11"); // 6+5 | 4+3 | 2+1
}

TEST_CASE("partition command: bad arguments exit with code 2") {
  const temp_file f("args.txt", graham);
  const auto unknown_algo = run({"--instance", f.path(), "--algo", "no_such_algorithm"});
  CHECK(unknown_algo.code == orch_bench::exit_usage);
  CHECK(unknown_algo.err.find("no_such_algorithm") != std::string::npos);
  CHECK(run({"--instance", f.path(), "--algo", "verl_kk", "--equal-counts"}).code ==
        orch_bench::exit_usage);
  CHECK(run({"--instance", f.path(), "--algo", "verl_kk_equal"}).code == orch_bench::exit_usage);
  CHECK(run({"--instance", f.path(), "--bins", "0"}).code == orch_bench::exit_usage);
  CHECK(run({"--instance", f.path(), "--format", "xml"}).code == orch_bench::exit_usage);
  CHECK(run({"--instance"}).code == orch_bench::exit_usage);
  CHECK(run({"--json"}).code == orch_bench::exit_usage); // --instance is required
  CHECK(run({"--instance", f.path(), "--frobnicate"}).code == orch_bench::exit_usage);
  const auto absent = run({"--instance", f.path() + ".does_not_exist"});
  CHECK(absent.code == orch_bench::exit_failure);
  CHECK(absent.err.find("cannot open") != std::string::npos);
  const auto help = run({"--help"});
  CHECK(help.code == orch_bench::exit_ok);
  CHECK(help.out.find("verl_kk_equal") != std::string::npos);
}

TEST_CASE("partition command: malformed files name the line and exit with code 2") {
  struct bad_file {
    const char* text;
    const char* format;
    const char* where;  // "FILE:LINE:" suffix expected in the message
    const char* reason; // a phrase of the message
  };
  const bad_file cases[] = {
      {"", "pcmax", ":1:", "empty file"},
      {"p p_cmax 3\n1 2 3 0\n", "pcmax", ":1:", "expected 'p p_cmax <n> <m>'"},
      {"p cmax 3 2\n1 2 3 0\n", "pcmax", ":1:", "expected 'p p_cmax <n> <m>'"},
      {"p p_cmax three 2\n1 2 3 0\n", "pcmax", ":1:", "'three' is not an integer"},
      {"p p_cmax 3 0\n1 2 3 0\n", "pcmax", ":1:", "machine count m"},
      {"p p_cmax -3 2\n1 2 3 0\n", "pcmax", ":1:", "must not be negative"},
      {"p p_cmax 3 2\n", "pcmax", ":2:", "file ends after line 1"},
      {"p p_cmax 3 2\n1 2 0\n", "pcmax", ":2:", "expected 3 costs followed by 0, found 3"},
      {"p p_cmax 3 2\n1 2 3\n", "pcmax", ":2:", "expected 3 costs followed by 0, found 3"},
      {"p p_cmax 3 2\n1 2 3 4 0\n", "pcmax", ":2:", "found 5 numbers"},
      {"p p_cmax 3 2\n1 x 3 0\n", "pcmax", ":2:", "cost 2 'x' is not an integer"},
      {"p p_cmax 3 2\n1 -2 3 0\n", "pcmax", ":2:", "cost 2 is negative"},
      {"p p_cmax 3 2\n1 2 3 7\n", "pcmax", ":2:", "must end with 0"},
      {"p p_cmax 1 2\n99999999999999999999 0\n", "pcmax", ":2:", "does not fit"},
      {"4\n5\n\n6 7\n", "costs", ":4:", "one cost per line"},
      {"4\n5\n2.5\n", "costs", ":3:", "'2.5' is not an integer"},
      {"4\n-5\n", "costs", ":2:", "negative"},
      {"4\n5\n6\nx\n", "detect", ":4:", "not an integer"},
      {"\n\np p_cmax 2 2\n1 2 0\n", "detect", ":1:", "expected 'p p_cmax"},
  };
  int index = 0;
  for (const auto& c : cases) {
    CAPTURE(c.text);
    const temp_file f("bad" + std::to_string(index++) + ".txt", c.text);
    const auto r = run({"--instance", f.path(), "--format", c.format, "--bins", "2"});
    CHECK(r.code == orch_bench::exit_usage);
    CHECK(r.err.find(f.path() + c.where) != std::string::npos);
    CHECK(r.err.find(c.reason) != std::string::npos);
    // The parser itself reports the line.
    std::istringstream in(c.text);
    orch_bench::instance_format fmt{};
    REQUIRE(orch_bench::parse_instance_format(c.format, fmt));
    try {
      static_cast<void>(orch_bench::parse_instance(in, fmt, "mem"));
      FAIL("expected a parse_error");
    } catch (const orch_bench::parse_error& e) {
      CHECK(("mem:" + std::to_string(e.line()) + ":") == std::string("mem") + c.where);
    }
  }
}

TEST_CASE("instance files: pcmax round trip, later lines ignored, zero items") {
  const std::vector<orch::cost_t> costs{10, 0, 7, 123456789012};
  std::ostringstream out;
  orch_bench::write_pcmax(out, costs, 3);
  CHECK(out.str() == "p p_cmax 4 3\n10 0 7 123456789012 0\n");
  std::istringstream in(out.str() + "anything at all\n");
  const auto inst = orch_bench::parse_instance(in, orch_bench::instance_format::detect);
  CHECK(inst.costs == costs);
  CHECK(inst.bins == 3);
  CHECK(inst.format == orch_bench::instance_format::pcmax);
  std::istringstream empty("p p_cmax 0 4\n0\n");
  const auto none = orch_bench::parse_instance(empty, orch_bench::instance_format::pcmax);
  CHECK(none.costs.empty());
  CHECK(none.bins == 4);
}
