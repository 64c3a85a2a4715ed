#include "kernel/parse.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace trnsim::kernel {
namespace {

using testing::error_of;
using testing::kernel_json;
using testing::parse_text;
using testing::prepare_text;

const char* kSbufTensors =
    R"({"a_sb": {"memory": "sbuf", "dtype": "float32", "shape": [128, 64]},
        "b_sb": {"memory": "sbuf", "dtype": "float32", "shape": [128, 64]}})";

std::string parse_error(const std::string& text, const ParseOptions& options = {}) {
  return error_of([&] { parse_text(text, options); });
}

TEST(Parse, TopLevelErrors) {
  EXPECT_EQ(
      parse_error(R"({"format": "trnsim-kernel/2", "name": "x", "tensors": {}, "program": []})"),
      "k.json: /format: unsupported kernel format \"trnsim-kernel/2\"; this trnsim reads: "
      "trnsim-kernel/1");
  EXPECT_EQ(
      parse_error(R"({"format": "trnsim-kernel/1", "name": "x", "tensor": {}, "program": []})"),
      "k.json: /tensor: unknown key 'tensor' in top-level; did you mean 'tensors'? (valid "
      "keys: format, name, description, params, cores, tensors, program)");
  EXPECT_EQ(parse_error(R"({"format": "trnsim-kernel/1", "tensors": {}, "program": []})"),
            "k.json: /: missing required key 'name'");
  EXPECT_EQ(parse_error(R"({"format": "trnsim-kernel/1", "name": "x", "tensors": {}})"),
            "k.json: /: missing required key 'program'");
  EXPECT_NE(parse_error("{\"format\": ").find("k.json: invalid JSON: "), std::string::npos);
}

TEST(Parse, ProgramIsParsedInDeclarationOrder) {
  const auto program = parse_text(kernel_json(
      R"({"zeta": {"memory": "hbm", "dtype": "bf16", "shape": ["N", 4]},
          "alpha": {"memory": "sbuf", "dtype": "fp32", "shape": [4, 128, 8], "partition_dim": 1}})",
      R"([{"for": "i", "range": "N", "body": [
            {"op": "memset", "dst": "alpha[i % 4]", "value": 0, "name": "clear"}]}])",
      R"({"N": 16, "M": "N * 2"})"));
  ASSERT_EQ(program->tensors.size(), 2u);
  EXPECT_EQ(program->tensors[0].name, "zeta");  // not sorted
  EXPECT_EQ(program->tensors[0].dtype, DType::kBFloat16);
  EXPECT_EQ(program->tensors[1].partition_dim, 1u);
  EXPECT_EQ(program->params[1].name, "M");
  EXPECT_EQ(program->max_depth, 1u);
  ASSERT_EQ(program->statements.size(), 2u);
  EXPECT_EQ(program->label(1), "clear");
  EXPECT_EQ(program->label(0), "for i /program/0");
  EXPECT_EQ(program->location(1, "/dst"), "k.json: clear /program/0/body/0/dst");
}

TEST(Parse, UnknownNamesGetTheClosestValidName) {
  EXPECT_EQ(parse_error(kernel_json(kSbufTensors, R"([{"op": "tensor_tenser"}])")),
            "k.json: /program/0/op: unknown op \"tensor_tenser\"; did you mean 'tensor_tensor'?");
  EXPECT_EQ(parse_error(kernel_json(
                kSbufTensors, R"([{"op": "tensor_copy", "dst": "a_sb", "src": "a_sbb[0:128]"}])")),
            "k.json: tensor_copy /program/0/src: operand 'a_sbb[0:128]' names unknown tensor "
            "'a_sbb'; did you mean 'a_sb'?");
  EXPECT_EQ(
      parse_error(kernel_json(
          kSbufTensors,
          R"([{"op": "tensor_tensor", "dst": "a_sb", "in0": "a_sb", "in_1": "b_sb", "alu": "add"}])")),
      "k.json: /program/0/in_1: unknown key 'in_1' in op 'tensor_tensor'; did you mean 'in1'? "
      "(valid keys: op, engine, name, dst, in0, in1, alu, source)");
  EXPECT_EQ(parse_error(
                kernel_json(
                    kSbufTensors,
                    R"([{"op": "activation", "dst": "a_sb", "src": "b_sb", "func": "gelu_tanh"}])"))
                .substr(0, 100),
            std::string("k.json: activation /program/0/func: unknown activation function "
                        "\"gelu_tanh\"; did you mean 'gelu_dx'?")
                .substr(0, 100));
  EXPECT_EQ(parse_error(kernel_json(
                R"({"x": {"memory": "sbuff", "dtype": "float32", "shape": [128]}})", "[]")),
            "k.json: /tensors/x/memory: unknown memory \"sbuff\"; did you mean 'sbuf'? (expected "
            "hbm, sbuf or psum)");
  EXPECT_EQ(
      parse_error(kernel_json(
          R"({"x": {"memory": "sbuf", "dtype": "float32", "shape": [128], "ofset": 0}})", "[]")),
      "k.json: /tensors/x/ofset: unknown key 'ofset' in tensor 'x'; did you mean 'offset'? "
      "(valid keys: memory, dtype, shape, partition_dim, partition_start, offset, per_core)");
  EXPECT_EQ(parse_error(kernel_json(kSbufTensors, R"([{"for": "i", "range": 4, "body": [
               {"op": "memset", "dst": "a_sb[0:128, ii]", "value": 0}]}])")),
            "k.json: memset /program/0/body/0/dst: in expression 'ii': unknown name 'ii'; did you "
            "mean 'i'?");
}

TEST(Parse, StatementAndAttributeErrors) {
  EXPECT_EQ(parse_error(kernel_json(kSbufTensors, R"([{"loop": "i"}])")),
            "k.json: /program/0: a statement needs \"op\" (an instruction), \"for\" (a loop) or "
            "\"if\" (a condition); found keys 'loop'");
  EXPECT_EQ(parse_error(kernel_json(
                kSbufTensors,
                R"([{"op": "tensor_tensor", "dst": "a_sb", "in0": "a_sb", "in1": "b_sb"}])")),
            "k.json: tensor_tensor /program/0: op 'tensor_tensor' is missing required attribute "
            "'alu'");
  EXPECT_EQ(
      parse_error(kernel_json(
          kSbufTensors,
          R"([{"op": "activation", "engine": "vector", "dst": "a_sb", "src": "b_sb", "func": "exp"}])")),
      "k.json: activation /program/0/engine: op 'activation' cannot run on engine "
      "\"vector\"; it runs on: scalar");
  EXPECT_EQ(parse_error(kernel_json(
                kSbufTensors, R"([{"op": "tensor_copy", "dst": "a_sb[3, :]", "src": "b_sb"}])")),
            "k.json: tensor_copy /program/0/dst: operand 'a_sb[3, :]': the partition dimension "
            "(0) of 'a_sb' must be indexed with a slice, e.g. '3:3+1'");
  EXPECT_EQ(parse_error(kernel_json(
                kSbufTensors, R"([{"op": "tensor_copy", "dst": "a_sb[:, 0, 1]", "src": "b_sb"}])")),
            "k.json: tensor_copy /program/0/dst: operand 'a_sb[:, 0, 1]': tensor 'a_sb' has 2 "
            "dimensions but 3 indices are given");
  EXPECT_EQ(
      parse_error(kernel_json(
          kSbufTensors, R"([{"op": "tensor_copy", "dst": "a_sb[:, 0:8:0]", "src": "b_sb"}])")),
      "k.json: tensor_copy /program/0/dst: operand 'a_sb[:, 0:8:0]': slice step must be "
      "positive, found 0");
  EXPECT_EQ(
      parse_error(kernel_json(
          kSbufTensors,
          R"([{"op": "tensor_scalar", "dst": "a_sb", "src": "b_sb", "op0": "add", "operand0": 1, "op1": "multiply"}])")),
      "k.json: tensor_scalar /program/0: tensor_scalar needs op1 and operand1 together "
      "(found only op1)");
  EXPECT_EQ(
      parse_error(kernel_json(kSbufTensors, R"([{"for": "i", "range": [0, 4, 0], "body": []}])")),
      "k.json: for i /program/0/range: range step must not be zero");
}

TEST(Parse, NamesMayNotShadow) {
  EXPECT_EQ(parse_error(kernel_json("{}", "[]", R"({"pid": 3})")),
            "k.json: /params/pid: param 'pid' shadows the built-in name 'pid'");
  EXPECT_EQ(parse_error(kernel_json("{}", "[]", R"({"pmax": 64})")),
            "k.json: /params/pmax: param 'pmax' shadows the built-in name 'pmax'");
  EXPECT_EQ(
      parse_error(kernel_json("{}", R"([{"for": "N", "range": 2, "body": []}])", R"({"N": 4})")),
      "k.json: /program/0/for: loop variable 'N' shadows a param or an enclosing loop "
      "variable of that name");
  EXPECT_EQ(parse_error(kernel_json(R"({"N": {"memory": "hbm", "dtype": "int8", "shape": [4]}})",
                                    "[]", R"({"N": 4})")),
            "k.json: /tensors/N: tensor 'N' has the name of a param; rename one of them");
  EXPECT_EQ(
      parse_error(kernel_json(
          R"({"x": {"memory": "sbuf", "dtype": "float32", "shape": [128, "pid + 1"]}})", "[]")),
      "k.json: /tensors/x/shape/1: a tensor shape may not depend on pid, chip or local_core "
      "(every core declares the same tensors); found 'pid + 1'");
  EXPECT_EQ(parse_error(kernel_json("{}", "[]", R"({"A": "B + 1", "B": 2})")),
            "k.json: /params/A: in expression 'B + 1': unknown name 'B'");
}

TEST(Parse, ParamOverrides) {
  const std::string text =
      kernel_json(R"({"x": {"memory": "hbm", "dtype": "float32", "shape": ["N", "F"]}})", "[]",
                  R"({"N": 4, "F": "N * 2"})");
  ParseOptions options;
  options.param_overrides.push_back(parse_param_override("N=16"));
  auto kernel = prepare_text(text, testing::trn2_target(), options);
  EXPECT_EQ(kernel.layouts[0].shape, (std::vector<std::uint64_t>{16, 32}));  // F = 16 * 2

  // An override may use a param declared after it: F = 3, N = F * 4 = 12.
  ParseOptions forward;
  forward.param_overrides = {parse_param_override("F=3"), parse_param_override("N=F * 4")};
  kernel = prepare_text(text, testing::trn2_target(), forward);
  EXPECT_EQ(kernel.layouts[0].shape, (std::vector<std::uint64_t>{12, 3}));

  ParseOptions unknown;
  unknown.param_overrides.push_back(parse_param_override("n=3"));
  EXPECT_EQ(parse_error(text, unknown),
            "--param n: the kernel has no param 'n'; did you mean 'N'? (params: N, F)");

  ParseOptions cycle;
  cycle.param_overrides.push_back(parse_param_override("N=F"));
  EXPECT_EQ(parse_error(text, cycle), "--param N: params depend on each other: N -> F -> N");

  EXPECT_EQ(error_of([] { parse_param_override("N"); }),
            "--param N: expected NAME=VALUE (VALUE an integer expression), e.g. --param N=4096");
}

}  // namespace
}  // namespace trnsim::kernel
