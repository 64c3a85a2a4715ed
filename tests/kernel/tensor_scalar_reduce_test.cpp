// tensor_scalar with a free-axis reduction (`reduce_dst`, `reduce_op`; NKI
// tensor_scalar_reduce): what the stream yields, and one exact message per bad input.
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace trnsim::kernel {
namespace {

using testing::collect;
using testing::kernel_json;
using testing::prepare_text;
using testing::run_error;
using testing::trn3_target;

const char* kReduceTensors = R"({
  "s":    {"memory": "sbuf", "dtype": "float32", "shape": [128, 512]},
  "s2":   {"memory": "sbuf", "dtype": "float32", "shape": [128, 512]},
  "col":  {"memory": "sbuf", "dtype": "float32", "shape": [128, 1]},
  "col2": {"memory": "sbuf", "dtype": "float32", "shape": [128, 2]},
  "p":    {"memory": "psum", "dtype": "float32", "shape": [128, 1]}})";

std::string kernel_of(const std::string& statement) {
  return kernel_json(kReduceTensors, "[" + statement + "]");
}

// Trainium3: tensor_scalar runs on vector, scalar (NC-v4+) and gpsimd there.
Instruction only(const std::string& statement) {
  const auto instructions = collect(prepare_text(kernel_of(statement), trn3_target()));
  EXPECT_EQ(instructions.size(), 1u);
  return instructions.empty() ? Instruction{} : instructions[0];
}

std::string error_of(const std::string& statement) {
  return run_error(kernel_of(statement), trn3_target());
}

TEST(TensorScalarReduce, WritesReduceDstAsASecondResult) {
  const auto i = only(R"({"op": "tensor_scalar", "dst": "s", "src": "s2", "op0": "multiply",
                          "operand0": 0.5, "reduce_dst": "col"})");
  EXPECT_EQ(i.engine, Engine::kVector);
  EXPECT_EQ(i.alu, AluOp::kAdd);  // reduce_op defaults to add
  ASSERT_TRUE(i.operand(Slot::kReduceDst).used());
  EXPECT_EQ(i.operand(Slot::kReduceDst).partitions, 128u);
  EXPECT_EQ(i.operand(Slot::kReduceDst).elements_per_partition(), 1u);
  EXPECT_EQ(i.num_reads, 1);   // src (operand0 is a number)
  EXPECT_EQ(i.num_writes, 2);  // dst, reduce_dst
  EXPECT_EQ(i.writes[1], i.operand(Slot::kReduceDst).region());
  EXPECT_EQ(i.bytes_written, 128u * 512 * 4 + 128u * 4);
}

TEST(TensorScalarReduce, ReduceOpAcceptsAddMultiplyMaxMin) {
  for (const auto& [name, op] :
       {std::pair{"add", AluOp::kAdd}, std::pair{"multiply", AluOp::kMultiply},
        std::pair{"max", AluOp::kMax}, std::pair{"minimum", AluOp::kMin}}) {
    SCOPED_TRACE(name);
    const auto i = only(R"({"op": "tensor_scalar", "dst": "s", "src": "s2", "op0": "add",
                            "operand0": 1, "reduce_dst": "p", "reduce_op": ")" +
                        std::string(name) + R"("})");
    EXPECT_EQ(i.alu, op);
    EXPECT_EQ(i.operand(Slot::kReduceDst).memory, MemoryKind::kPsum);
  }
}

TEST(TensorScalarReduce, WithoutReduceDstNothingChanges) {
  const auto i =
      only(R"({"op": "tensor_scalar", "dst": "s", "src": "s2", "op0": "add", "operand0": 1})");
  EXPECT_EQ(i.alu, AluOp::kNone);
  EXPECT_FALSE(i.operand(Slot::kReduceDst).used());
  EXPECT_EQ(i.num_writes, 1);
}

TEST(TensorScalarReduce, OnlyTheVectorEngineReduces) {
  EXPECT_EQ(error_of(R"({"op": "tensor_scalar", "engine": "scalar", "dst": "s", "src": "s2",
                         "op0": "add", "operand0": 1, "reduce_dst": "col"})"),
            "k.json: tensor_scalar /program/0/reduce_dst: tensor-scalar-reduce: a tensor_scalar "
            "with reduce_dst runs on the vector engine only (NKI tensor_scalar_reduce), found "
            "engine 'scalar'");
  EXPECT_EQ(error_of(R"({"op": "tensor_scalar", "engine": "gpsimd", "dst": "s", "src": "s2",
                         "op0": "add", "operand0": 1, "reduce_dst": "col"})"),
            "k.json: tensor_scalar /program/0/reduce_dst: tensor-scalar-reduce: a tensor_scalar "
            "with reduce_dst runs on the vector engine only (NKI tensor_scalar_reduce), found "
            "engine 'gpsimd'");
}

TEST(TensorScalarReduce, ReduceDstIsOneColumnOnTheInputsPartitions) {
  EXPECT_EQ(error_of(R"({"op": "tensor_scalar", "dst": "s", "src": "s2", "op0": "add",
                         "operand0": 1, "reduce_dst": "col2"})"),
            "k.json: tensor_scalar /program/0/reduce_dst: shape-mismatch: reduce_dst 'col2' must "
            "be [P, 1] with P = 128 (the partitions of the input), found [128, 2]");
  EXPECT_EQ(error_of(R"({"op": "tensor_scalar", "dst": "s", "src": "s2", "op0": "add",
                         "operand0": 1, "reduce_dst": "col[0:64, :]"})"),
            "k.json: tensor_scalar /program/0/reduce_dst: shape-mismatch: reduce_dst "
            "'col[0:64, :]' must be [P, 1] with P = 128 (the partitions of the input), found "
            "[64, 1]");
}

TEST(TensorScalarReduce, ReduceOpErrors) {
  EXPECT_EQ(error_of(R"({"op": "tensor_scalar", "dst": "s", "src": "s2", "op0": "add",
                         "operand0": 1, "reduce_dst": "col", "reduce_op": "maxx"})"),
            "k.json: tensor_scalar /program/0/reduce_op: unknown alu operation \"maxx\"; did you "
            "mean 'max'? (valid: bypass, add, subtract, multiply, divide, max, min, power, mod, "
            "abs_max, abs_min, average, bitwise_and, bitwise_or, bitwise_xor, invert, left_shift, "
            "right_shift, logical_and, logical_or, logical_xor, equal, not_equal, greater, "
            "greater_equal, less, less_equal)");
  EXPECT_EQ(error_of(R"({"op": "tensor_scalar", "dst": "s", "src": "s2", "op0": "add",
                         "operand0": 1, "reduce_dst": "col", "reduce_op": "subtract"})"),
            "k.json: tensor_scalar /program/0/reduce_op: tensor_scalar reduces with add, "
            "multiply, max or min, found 'subtract'");
  EXPECT_EQ(error_of(R"({"op": "tensor_scalar", "dst": "s", "src": "s2", "op0": "add",
                         "operand0": 1, "reduce_op": "max"})"),
            "k.json: tensor_scalar /program/0/reduce_op: tensor_scalar: reduce_op needs "
            "reduce_dst (the [P, 1] result of the free-axis reduction)");
}

}  // namespace
}  // namespace trnsim::kernel
