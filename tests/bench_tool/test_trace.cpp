// SPDX-License-Identifier: Apache-2.0
// The trace reader and writer of orch-bench (docs/trace-format.md).
#include "input_error.hpp"
#include "trace.hpp"

#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

namespace {

orch_bench::trace parse(const std::string& text) {
  std::istringstream in(text);
  return orch_bench::read_trace(in, "t.csv");
}

// The message of the input_error that parsing `text` throws ("" when it does not throw).
std::string error_of(const std::string& text) {
  try {
    (void)parse(text);
  } catch (const orch_bench::input_error& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("a well-formed trace: text rows summed, media in row order, comments skipped") {
  const auto t = parse("# a comment\n"
                       "example,field,length\r\n"
                       "a,text,10\n"
                       "a,image,1564\n"
                       "a,text,5\n"
                       "\n"
                       "a,audio,300\n"
                       "b,text,0\n"
                       "c,video,40000\n"
                       "c,image,16\n"
                       "# trailing comment\n");
  REQUIRE(t.size() == 3);
  CHECK(t.id(0) == "a");
  CHECK(t.text_tokens(0) == 15);
  REQUIRE(t.media(0).size() == 2);
  CHECK(t.media(0)[0].kind == orch_bench::field::image);
  CHECK(t.media(0)[0].length == 1564);
  CHECK(t.media(0)[1].kind == orch_bench::field::audio);
  CHECK(t.media(0)[1].length == 300);
  CHECK(t.text_tokens(1) == 0);
  CHECK(t.media(1).empty());
  CHECK(t.text_tokens(2) == 0);
  REQUIRE(t.media(2).size() == 2);
  CHECK(t.media(2)[0].kind == orch_bench::field::video);
  CHECK(t.media(2)[1].kind == orch_bench::field::image);
  CHECK(t.media_items() == 4);

  const auto s = orch_bench::summarize(t);
  CHECK(s.examples == 3);
  CHECK(s.items[0] == 1); // only a has text > 0
  CHECK(s.total[0] == 15);
  CHECK(s.items[1] == 2);
  CHECK(s.max_length[1] == 1564);
  CHECK(s.examples_with[1] == 2);
  CHECK(s.examples_with[3] == 1);
}

TEST_CASE("write_trace then read_trace gives the same trace") {
  orch_bench::trace t;
  const std::vector<orch_bench::media_item> m1{{orch_bench::field::image, 100},
                                               {orch_bench::field::audio, 7}};
  t.add_example("x1", 42, m1);
  t.add_example("x2", 0, {});
  const std::vector<orch_bench::media_item> m3{{orch_bench::field::video, 9}};
  t.add_example("x3", 0, m3);
  std::ostringstream out;
  const std::vector<std::string> comment{"hello"};
  orch_bench::write_trace(out, t, comment);
  CHECK(out.str().rfind("# hello\nexample,field,length\n", 0) == 0);
  const auto back = parse(out.str());
  REQUIRE(back.size() == t.size());
  for (std::size_t e = 0; e < t.size(); ++e) {
    CAPTURE(e);
    CHECK(back.id(e) == t.id(e));
    CHECK(back.text_tokens(e) == t.text_tokens(e));
    REQUIRE(back.media(e).size() == t.media(e).size());
    for (std::size_t m = 0; m < t.media(e).size(); ++m) {
      CHECK(back.media(e)[m].kind == t.media(e)[m].kind);
      CHECK(back.media(e)[m].length == t.media(e)[m].length);
    }
  }
}

TEST_CASE("malformed traces are rejected with the line number") {
  const std::string h = "example,field,length\n";
  CHECK(error_of("") == "t.csv: empty trace: no header 'example,field,length'");
  CHECK(error_of("# only a comment\n").find("no header") != std::string::npos);
  CHECK(error_of("example,field\n") ==
        "t.csv:1: expected the header 'example,field,length', got 'example,field'");
  CHECK(error_of(h) == "t.csv:1: trace has no example rows");
  CHECK(error_of(h + "a,text,1\na,text\n") ==
        "t.csv:3: expected 3 comma-separated cells (example,field,length)");
  CHECK(error_of(h + "a,text,1,2\n").find("t.csv:2: expected 3") == 0);
  CHECK(error_of(h + "a,text,1\n,text,4\n").find("t.csv:3: example id ''") == 0);
  CHECK(error_of(h + "a b,text,4\n").find("t.csv:2: example id 'a b'") == 0);
  CHECK(error_of(h + "a,pixels,4\n") ==
        "t.csv:2: unknown field 'pixels' (expected text, image, audio or video)");
  CHECK(error_of(h + "a,text,-1\n").find("t.csv:2: length '-1' of field text") == 0);
  CHECK(error_of(h + "a,text,1.5\n").find("t.csv:2: length '1.5'") == 0);
  CHECK(error_of(h + "a,text,x\n").find("t.csv:2: length 'x'") == 0);
  CHECK(error_of(h + "a,text,\n").find("t.csv:2: length ''") == 0);
  CHECK(error_of(h + "a,image,0\n").find("t.csv:2: length '0' of field image") == 0);
  CHECK(error_of(h + "a,audio,99999999999\n").find("t.csv:2:") == 0);
  CHECK(error_of(h + "a,text,99999999999999999999999\n").find("t.csv:2:") == 0);
  CHECK(error_of(h + "a,text,1\nb,text,2\n\na,image,3\n") ==
        "t.csv:5: rows of example 'a' are not contiguous (it started at line 2)");
  // Zero text is fine; the largest row length is accepted.
  CHECK(error_of(h + "a,text,0\nb,image,2147483648\n").empty());
}

TEST_CASE("read_trace_file reports a missing file as an input error") {
  CHECK_THROWS_AS((void)orch_bench::read_trace_file("/nonexistent/trace.csv"),
                  orch_bench::input_error);
}

TEST_CASE("field names round-trip") {
  for (const auto name : orch_bench::field_names) {
    const auto f = orch_bench::parse_field(name);
    REQUIRE(f.has_value());
    CHECK(orch_bench::to_string(*f) == name);
  }
  CHECK_FALSE(orch_bench::parse_field("Text").has_value());
}
