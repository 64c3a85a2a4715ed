// NKI Python kernels in sweep specs and regression baselines: inputs, kwargs (lists are grids),
// grid and the kwarg/input axes expand into worker command lines; mixing them with JSON-kernel
// params is a located spec error.
#include <gtest/gtest.h>

#include <string>

#include "sweep/regress.hpp"
#include "sweep/run_request.hpp"
#include "sweep/spec.hpp"
#include "util/error.hpp"

namespace trnsim::sweep {
namespace {

using nlohmann::ordered_json;

const std::string kKernels = std::string(TRNSIM_SOURCE_DIR) + "/tests/nki/kernels";
const std::string kScaledCopy = kKernels + "/scaled_copy.py::scaled_copy";
const std::string kVectorAddJson =
    std::string(TRNSIM_SOURCE_DIR) + "/examples/kernels/vector_add.json";

SweepSpec parse(const std::string& text) {
  return parse_sweep_spec(ordered_json::parse(text), "spec.json", {});
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(NkiSweepSpec, InputsKwargsAndGridExpandIntoWorkerArguments) {
  const SweepSpec spec = parse(R"({
    "kernel": {"file": ")" + kScaledCopy +
                               R"(",
               "inputs": {"a": ["float32[128,512]", "bfloat16[128,512]"]},
               "kwargs": {"T": [1, 2, 4], "scale": 0.5, "mode": "fast mode", "flag": true},
               "grid": "2,1"},
    "axes": [{"kwarg": "unroll", "values": [false, null]}]})");
  // 2 inputs x 3 values of T x 2 of the axis.
  ASSERT_EQ(point_count(spec), 12u);
  const SweepPoint point = make_point(spec, 7);  // radices [2, 3, 2]: a=1, T=0, unroll=1
  EXPECT_EQ(point.values.dump(), R"({"a":"bfloat16[128,512]","T":1,"unroll":null})");
  EXPECT_EQ(point.request.inputs, (Assignments{{"a", "bfloat16[128,512]"}}));
  EXPECT_EQ(point.request.kwargs, (Assignments{{"scale", "0.5"},
                                               {"mode", "'fast mode'"},
                                               {"flag", "True"},
                                               {"T", "1"},
                                               {"unroll", "None"}}));
  EXPECT_TRUE(point.request.params.empty());
  EXPECT_EQ(run_command_line(point.request, "/bin/trnsim"),
            (std::vector<std::string>{"/bin/trnsim",
                                      "run",
                                      kScaledCopy,
                                      "--config",
                                      "trn2",
                                      "--input",
                                      "a=bfloat16[128,512]",
                                      "--kwarg",
                                      "scale=0.5",
                                      "--kwarg",
                                      "mode='fast mode'",
                                      "--kwarg",
                                      "flag=True",
                                      "--kwarg",
                                      "T=1",
                                      "--kwarg",
                                      "unroll=None",
                                      "--grid",
                                      "2,1",
                                      "--json"}));
}

TEST(NkiSweepSpec, FilesResolveAgainstTheSpecDirectoryKeepingTheFunction) {
  const SweepSpec spec = parse_sweep_spec(ordered_json::parse(R"({
    "kernel": {"file": "scaled_copy.py::scaled_copy",
               "inputs": {"a": "a.npy", "b": "float32[4]"}},
    "axes": [{"input": "c", "values": ["data/c.npy"]}]})"),
                                          "spec.json", kKernels);
  const SweepPoint point = make_point(spec, 0);
  EXPECT_EQ(point.request.kernel, "scaled_copy.py::scaled_copy");
  EXPECT_EQ(point.request.kernel_path, kScaledCopy);
  EXPECT_EQ(point.request.inputs,
            (Assignments{
                {"a", kKernels + "/a.npy"}, {"b", "float32[4]"}, {"c", kKernels + "/data/c.npy"}}));
}

TEST(NkiSweepSpec, KindsOfArgumentsDoNotMix) {
  EXPECT_EQ(error_of(R"({"kernel": {"file": ")" + kScaledCopy + R"(", "params": {"T": 2}}})"),
            "spec.json: /kernel/params: '" + kScaledCopy +
                "' is an NKI Python kernel: give its arguments as \"kwargs\" and its tensors as "
                "\"inputs\", not \"params\"");
  EXPECT_EQ(error_of(R"({"kernel": {"file": ")" + kVectorAddJson + R"(", "kwargs": {"T": 2}}})"),
            "spec.json: /kernel/kwargs: '" + kVectorAddJson +
                "' is a JSON kernel: \"inputs\", \"kwargs\" and \"grid\" are for NKI Python "
                "kernels (FILE.py::FUNCTION); a JSON kernel takes \"params\"");
  EXPECT_EQ(error_of(R"({"kernel": ")" + kVectorAddJson +
                     R"(", "axes": [{"kwarg": "T", "values": [1]}]})"),
            "spec.json: /axes: 'T' is varied as an NKI kernel argument, but kernel '" +
                kVectorAddJson + "' is a JSON kernel: vary its params with {\"param\": NAME}");
  EXPECT_EQ(
      error_of(R"({"kernel": ")" + kScaledCopy + R"(", "axes": [{"param": "T", "values": [1]}]})"),
      "spec.json: /axes: 'T' is varied as a param, but kernel '" + kScaledCopy +
          "' is an NKI Python kernel: vary its arguments with {\"kwarg\": NAME} or "
          "{\"input\": NAME}");
}

TEST(NkiSweepSpec, BadValuesAreLocated) {
  const std::string kernel = R"({"kernel": {"file": ")" + kScaledCopy + R"(", )";
  EXPECT_EQ(error_of(kernel + R"("inputs": {"a": 4}}})"),
            "spec.json: /kernel/inputs/a: expected an NKI kernel input: \"DTYPE[D0,D1,..]\" (e.g. "
            "\"float32[128,512]\") or a .npy file, found the integer 4");
  EXPECT_EQ(error_of(kernel + R"("kwargs": {"T": []}}})"),
            "spec.json: /kernel/kwargs/T: expected a non-empty list of values");
  EXPECT_EQ(error_of(kernel + R"("kwargs": {"2x": 1}}})"),
            "spec.json: /kernel/kwargs/2x: expected an NKI kernel argument name (a Python "
            "identifier), found \"2x\"");
  EXPECT_EQ(error_of(kernel + R"("grid": "2,,2"}})"),
            "spec.json: /kernel/grid: expected a launch grid: a positive integer or \"D0,D1\" "
            "(e.g. \"2,2\"), found the string \"2,,2\"");
  EXPECT_EQ(error_of(kernel + R"("kwargs": {"T": 1}}, "axes": [{"kwarg": "T", "values": [2]}]})"),
            "spec.json: /kernel/kwargs/T: kwarg 'T' is both fixed here and varied by an axis");
  EXPECT_EQ(
      error_of(R"({"kernel": ")" + kScaledCopy + R"(", "axes": [{"input": "a", "range": {}}]})"),
      "spec.json: /axes/0/range: unknown key 'range'; expected one of input, values");
  EXPECT_EQ(error_of(R"({"kernel": ")" + kKernels + R"(/missing.py::f"})"),
            "spec.json: /kernel: cannot open the kernel file '" + kKernels + "/missing.py'");
}

TEST(NkiSweepSpec, TheIdentityHashCoversTheArguments) {
  RunRequest request;
  request.kernel_path = kScaledCopy;
  const std::string bare = kernel_hash("source", request);
  request.kwargs = {{"T", "2"}};
  const std::string with_kwarg = kernel_hash("source", request);
  request.inputs = {{"a", "float32[4]"}};
  const std::string with_input = kernel_hash("source", request);
  request.grid = "2";
  const std::string with_grid = kernel_hash("source", request);
  EXPECT_NE(bare, with_kwarg);
  EXPECT_NE(with_kwarg, with_input);
  EXPECT_NE(with_input, with_grid);
  EXPECT_NE(with_grid, kernel_hash("other source", request));
}

TEST(PythonLiteral, JsonValuesAsTheTracerReadsThem) {
  const auto literal = [](const char* json) { return python_literal(ordered_json::parse(json)); };
  EXPECT_EQ(literal("4"), "4");
  EXPECT_EQ(literal("-2.5"), "-2.5");
  EXPECT_EQ(literal("true"), "True");
  EXPECT_EQ(literal("null"), "None");
  EXPECT_EQ(literal(R"("bfloat16")"), "bfloat16");  // a dotted name reads back as this string
  EXPECT_EQ(literal(R"("nl.bfloat16")"), "nl.bfloat16");
  EXPECT_EQ(literal(R"("4")"), "'4'");  // would read back as a number
  EXPECT_EQ(literal(R"("True")"), "'True'");
  EXPECT_EQ(literal(R"("it's a\\b")"), R"('it\'s a\\b')");
  EXPECT_EQ(literal(R"([128, [1, "x y"]])"), "[128, [1, 'x y']]");
  EXPECT_EQ(literal(R"({"k": false})"), "{'k': False}");
  EXPECT_EQ(kwargs_json({{"T", "4"}, {"on", "True"}, {"none", "None"}, {"s", "'x'"}}).dump(),
            R"({"T":4,"on":true,"none":null,"s":"'x'"})");
}

TEST(NkiBaseline, CasesTakeInputsKwargsAndGrid) {
  const Baseline baseline = parse_baseline(ordered_json::parse(R"({
    "format": "trnsim-baseline/1",
    "cases": [{"kernel": "scaled_copy.py::scaled_copy", "inputs": {"a": "float32[128,512]"},
               "kwargs": {"T": 2}, "grid": 2,
               "metrics": {"time_us": {"expected": null}}}]})"),
                                           kKernels + "/base.json");
  const RunRequest& request = baseline.cases.at(0).request;
  EXPECT_EQ(request.kernel_path, kScaledCopy);
  EXPECT_EQ(request.inputs, (Assignments{{"a", "float32[128,512]"}}));
  EXPECT_EQ(request.kwargs, (Assignments{{"T", "2"}}));
  EXPECT_EQ(request.grid, "2");
  EXPECT_EQ(baseline.cases.at(0).label, "scaled_copy on trn2 a=float32[128,512] T=2 grid=2");
  try {
    parse_baseline(ordered_json::parse(R"({"format": "trnsim-baseline/1", "cases": [
      {"kernel": "k.json", "kwargs": {"T": 2}, "metrics": {"time_us": {}}}]})"),
                   "base.json");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "base.json: /cases/0/kwargs: 'k.json' is a JSON kernel: \"inputs\", \"kwargs\" and "
              "\"grid\" are for NKI Python kernels (FILE.py::FUNCTION); a JSON kernel takes "
              "\"params\"");
  }
}

}  // namespace
}  // namespace trnsim::sweep
