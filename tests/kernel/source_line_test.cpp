// The optional `source` ("FILE:LINE") of statements: parsing, interning, and error messages that
// cite it before the JSON pointer (statements without one keep the kernel file).
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace trnsim::kernel {
namespace {

using testing::error_of;
using testing::kernel_json;
using testing::parse_text;
using testing::prepare_text;
using testing::run_error;

const char* kSourceLineTensors =
    R"({"a": {"memory": "hbm", "dtype": "float32", "shape": [8, 128, 64]},
        "s": {"memory": "sbuf", "dtype": "float32", "shape": [128, 64]}})";

std::string source_line_parse_error(const std::string& program) {
  return error_of([&] { parse_text(kernel_json(kSourceLineTensors, program)); });
}

TEST(SourceLine, IsParsedOnInstructionsLoopsAndConditionsAndInterned) {
  const auto program = parse_text(kernel_json(kSourceLineTensors, R"([
      {"for": "t", "range": 8, "source": "nki/kernel.py:10", "body": [
        {"op": "dma_copy", "dst": "s", "src": "a[t]", "source": "nki/kernel.py:11"},
        {"if": "t > 0", "source": "nki/kernel.py:12", "then": [
          {"op": "memset", "dst": "s", "value": 0, "source": "nki/kernel.py:11"}]},
        {"op": "memset", "dst": "s", "value": 1}]}])"));
  ASSERT_EQ(program->statements.size(), 5u);
  EXPECT_TRUE(program->has_source_lines());
  // Distinct strings once each, in order of first use.
  EXPECT_EQ(program->source_lines,
            (std::vector<std::string>{"nki/kernel.py:10", "nki/kernel.py:11", "nki/kernel.py:12"}));
  EXPECT_EQ(program->source_line(0), "nki/kernel.py:10");
  EXPECT_EQ(program->source_line(1), "nki/kernel.py:11");
  EXPECT_EQ(program->source_line(2), "nki/kernel.py:12");
  EXPECT_EQ(program->statements[3].source_line, program->statements[1].source_line);
  EXPECT_EQ(program->source_line(4), "");  // absent: not inherited from the loop
  EXPECT_EQ(program->statements[4].source_line, kNoSourceLine);
  // A file name may contain ':' (the line is after the last one).
  EXPECT_EQ(parse_text(kernel_json(kSourceLineTensors, R"([{"op": "memset", "dst": "s", "value": 0,
                                       "source": "C:/kernels/k.py:7"}])"))
                ->source_line(0),
            "C:/kernels/k.py:7");
  EXPECT_FALSE(parse_text(kernel_json(kSourceLineTensors, "[]"))->has_source_lines());
}

TEST(SourceLine, InvalidSourcesAreLocatedErrors) {
  const auto error = [](const std::string& source) {
    return source_line_parse_error(R"([{"op": "memset", "dst": "s", "value": 0, "source": )" +
                                   source + "}]");
  };
  const std::string expected =
      "k.json: /program/0/source: expected \"FILE:LINE\" with a positive line number after the "
      "last ':' (e.g. \"kernel.py:42\"), found ";
  EXPECT_EQ(error(R"("kernel.py")"), expected + "the string \"kernel.py\"");
  EXPECT_EQ(error(R"("kernel.py:0")"), expected + "the string \"kernel.py:0\"");
  EXPECT_EQ(error(R"("kernel.py:-3")"), expected + "the string \"kernel.py:-3\"");
  EXPECT_EQ(error(R"("kernel.py:4x")"), expected + "the string \"kernel.py:4x\"");
  EXPECT_EQ(error(R"("kernel.py:")"), expected + "the string \"kernel.py:\"");
  EXPECT_EQ(error(R"(":42")"), expected + "the string \":42\"");
  EXPECT_EQ(error("42"), expected + "the integer 42");
  EXPECT_EQ(source_line_parse_error(R"([{"for": "i", "range": 2, "source": "k.py", "body": []}])"),
            "k.json: /program/0/source: expected \"FILE:LINE\" with a positive line number after "
            "the last ':' (e.g. \"kernel.py:42\"), found the string \"k.py\"");
  // Unknown keys are still errors, with `source` among the valid keys.
  EXPECT_EQ(source_line_parse_error(R"([{"if": 1, "then": [], "sources": "k.py:3"}])"),
            "k.json: /program/0/sources: unknown key 'sources' in a condition; did you mean "
            "'source'? (valid keys: if, then, else, source)");
}

TEST(SourceLine, ParseErrorsOfAStatementCiteItsSource) {
  EXPECT_EQ(source_line_parse_error(R"([{"for": "i", "range": 2, "source": "k.py:7", "bdy": []}])"),
            "k.py:7: /program/0/bdy: unknown key 'bdy' in a loop; did you mean 'body'? (valid "
            "keys: for, range, body, source)");
  EXPECT_EQ(source_line_parse_error(
                R"([{"op": "memset", "dst": "s[0:128, x]", "value": 0, "source": "k.py:8"}])"),
            "k.py:8: memset /program/0/dst: in expression 'x': unknown name 'x'");
  EXPECT_EQ(source_line_parse_error(R"([{"op": "memsett", "source": "k.py:9"}])"),
            "k.py:9: /program/0/op: unknown op \"memsett\"; did you mean 'memset'?");
  // The body's statements cite their own source, or the kernel file when they have none.
  EXPECT_EQ(source_line_parse_error(R"([{"for": "i", "range": 2, "source": "k.py:7", "body": [
                {"op": "memset", "dst": "s[0:128, column]", "value": 0}]}])"),
            "k.json: memset /program/0/body/0/dst: in expression 'column': unknown name "
            "'column'");
}

TEST(SourceLine, LocationsCiteTheSourceThenTheStatement) {
  const std::string program = R"([{"for": "t", "range": 9, "source": "k.py:20", "body": [
      {"op": "dma_copy", "dst": "s", "src": "a[t]", "source": "k.py:21"},
      {"op": "memset", "dst": "s", "value": 0}]}])";
  const auto parsed = parse_text(kernel_json(kSourceLineTensors, program));
  EXPECT_EQ(parsed->location(1, "/src"), "k.py:21: dma_copy /program/0/body/0/src");
  EXPECT_EQ(parsed->location(0), "k.py:20: for t /program/0");
  EXPECT_EQ(parsed->location(2), "k.json: memset /program/0/body/1");
  SourceRef ref;
  ref.statement = 1;
  ref.depth = 1;
  ref.loop_values[0] = 3;
  EXPECT_EQ(parsed->location(ref), "k.py:21: dma_copy /program/0/body/0 (t=3)");
  EXPECT_EQ(run_error(kernel_json(kSourceLineTensors, program)),
            "k.py:21: dma_copy /program/0/body/0/src (t=8): operand 'a[t]': index 't' = 8 is out "
            "of bounds for dimension 0 of tensor 'a' (size 8, valid 0-7)");
  // Checks before simulation cite it too (exponential needs NeuronCore-v4; trn2 is v3).
  const std::string message = error_of([] {
    prepare_text(kernel_json(kSourceLineTensors, R"([{"op": "exponential", "dst": "s", "src": "s",
                                            "source": "k.py:30"}])"));
  });
  EXPECT_EQ(message.rfind("k.py:30: exponential /program/0: op-generation: ", 0), 0u) << message;
}

}  // namespace
}  // namespace trnsim::kernel
