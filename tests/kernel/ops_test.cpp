// One kernel per op of the spec's table: it parses, validates, and the stream yields the
// expected instruction (engine, attributes, derived numbers, read and write regions).
#include <gtest/gtest.h>

#include <cmath>

#include "test_support.hpp"

namespace trnsim::kernel {
namespace {

using testing::collect;
using testing::kernel_json;
using testing::prepare_text;
using testing::trn3_target;

// Trainium3 (every op available), 2 cores.
const char* kOpsTensors = R"({
  "h":    {"memory": "hbm",  "dtype": "float32",  "shape": [128, 512]},
  "hb":   {"memory": "hbm",  "dtype": "bfloat16", "shape": [128, 128]},
  "hc":   {"memory": "hbm",  "dtype": "float32",  "shape": [1024], "per_core": true},
  "hd":   {"memory": "hbm",  "dtype": "float32",  "shape": [1024], "per_core": true},
  "hall": {"memory": "hbm",  "dtype": "float32",  "shape": [2048]},
  "s":    {"memory": "sbuf", "dtype": "float32",  "shape": [128, 512]},
  "s2":   {"memory": "sbuf", "dtype": "float32",  "shape": [128, 512]},
  "sbf":  {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 128]},
  "sbt":  {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 128]},
  "col":  {"memory": "sbuf", "dtype": "float32",  "shape": [128, 1]},
  "col2": {"memory": "sbuf", "dtype": "float32",  "shape": [128, 1]},
  "st8":  {"memory": "sbuf", "dtype": "float8_e4m3", "shape": [128, 2, 128]},
  "mv8":  {"memory": "sbuf", "dtype": "float8_e4m3", "shape": [128, 2, 512]},
  "mxs":  {"memory": "sbuf", "dtype": "float8_e4m3fn_x4", "shape": [128, 128]},
  "mxm":  {"memory": "sbuf", "dtype": "float8_e4m3fn_x4", "shape": [128, 512]},
  "scs":  {"memory": "sbuf", "dtype": "uint8", "shape": [128, 128]},
  "scm":  {"memory": "sbuf", "dtype": "uint8", "shape": [128, 512]},
  "stats":{"memory": "sbuf", "dtype": "float32", "shape": [128, 6]},
  "mv":   {"memory": "sbuf", "dtype": "float32", "shape": [128, 2]},
  "red":  {"memory": "sbuf", "dtype": "float32", "shape": [1, 512]},
  "ints": {"memory": "sbuf", "dtype": "int32",   "shape": [128, 512]},
  "p":    {"memory": "psum", "dtype": "float32", "shape": [128, 512]}})";

// The single instruction of core 0 for one statement.
Instruction only(const std::string& statement) {
  const auto kernel =
      prepare_text(kernel_json(kOpsTensors, "[" + statement + "]", "{}", "2"), trn3_target());
  const auto core1 = collect(kernel, 1);  // core 1 must validate too
  EXPECT_EQ(core1.size(), 1u);
  const auto instructions = collect(kernel, 0);
  EXPECT_EQ(instructions.size(), 1u);
  return instructions.empty() ? Instruction{} : instructions[0];
}

// 128 x 512 float32 = 262144 bytes.
constexpr std::uint64_t kTileBytes = 128 * 512 * 4;

TEST(Ops, DmaCopy) {
  const auto i = only(
      R"({"op": "dma_copy", "dst": "s", "src": "h", "queue": 3, "trigger": "scalar", "dge": "hwdge"})");
  EXPECT_EQ(i.opcode, Opcode::kDmaCopy);
  EXPECT_EQ(i.engine, Engine::kDma);
  EXPECT_EQ(i.dma_queue, 3);
  EXPECT_EQ(i.dma_trigger, Engine::kScalar);
  EXPECT_EQ(i.dge, DgeMode::kHwdge);
  EXPECT_EQ(i.num_reads, 1);
  EXPECT_EQ(i.num_writes, 1);
  EXPECT_EQ(i.hbm_bytes, kTileBytes);
  EXPECT_EQ(i.reads[0].memory, MemoryKind::kHbm);
  EXPECT_EQ(i.writes[0].memory, MemoryKind::kSbuf);
}

TEST(Ops, DmaTranspose) {
  const auto i = only(R"({"op": "dma_transpose", "dst": "sbt", "src": "hb"})");
  EXPECT_EQ(i.opcode, Opcode::kDmaTranspose);
  EXPECT_EQ(i.engine, Engine::kDma);
  EXPECT_EQ(i.bytes_read, 128u * 128 * 2);
}

TEST(Ops, NcMatmul) {
  const auto i = only(
      R"({"op": "nc_matmul", "dst": "p[:, 0:512]", "stationary": "s[:, 0:128]", "moving": "s2", "accumulate": true})");
  EXPECT_EQ(i.engine, Engine::kTensor);
  EXPECT_TRUE(i.accumulate);
  EXPECT_EQ(i.flops, 2ull * 128 * 128 * 512);  // 2 K M N
  EXPECT_EQ(i.elements_per_partition, 512u);
  ASSERT_EQ(i.num_reads, 3);  // the accumulated dst, moving, stationary (slot order)
  EXPECT_EQ(i.reads[0].memory, MemoryKind::kPsum);
  EXPECT_EQ(i.reads[0].byte_begin, i.writes[0].byte_begin);
  EXPECT_EQ(i.reads[1].memory, MemoryKind::kSbuf);
  EXPECT_EQ(i.num_writes, 1);
}

TEST(Ops, NcMatmulDoubleRow) {
  // stationary [128, 2, 128] and moving [128, 2, 512] FP8: K = 256, M = 128, N = 512.
  const auto i = only(
      R"({"op": "nc_matmul", "dst": "p", "stationary": "st8", "moving": "mv8", "perf_mode": "double_row"})");
  EXPECT_TRUE(i.double_row);
  EXPECT_EQ(i.flops, 2ull * 256 * 128 * 512);
  EXPECT_EQ(i.elements_per_partition, 512u);
}

TEST(Ops, NcMatmulMx) {
  // x4 containers hold 4 values along K: K = 128 x 4 = 512, M = 128, N = 512.
  const auto i = only(R"({"op": "nc_matmul_mx", "dst": "p", "stationary": "mxs", "moving": "mxm",
                          "stationary_scale": "scs", "moving_scale": "scm"})");
  EXPECT_EQ(i.flops, 2ull * 512 * 128 * 512);
  EXPECT_EQ(i.num_reads, 4);
  EXPECT_TRUE(i.operand(Slot::kAux0).used());
  EXPECT_TRUE(i.operand(Slot::kAux1).used());
}

TEST(Ops, NcTransposeOnBothEngines) {
  const auto t = only(R"({"op": "nc_transpose", "dst": "p[:, 0:128]", "src": "sbf"})");
  EXPECT_EQ(t.engine, Engine::kTensor);
  EXPECT_EQ(t.writes[0].memory, MemoryKind::kPsum);
  const auto v = only(
      R"({"op": "nc_transpose", "engine": "vector", "dst": "s[0:32, 0:32]", "src": "s2[0:32, 0:32]"})");
  EXPECT_EQ(v.engine, Engine::kVector);
  EXPECT_EQ(v.partitions, 32u);
}

TEST(Ops, Activation) {
  const auto i = only(
      R"({"op": "activation", "dst": "s", "src": "s2", "func": "gelu", "scale": 2.5, "bias": "col", "reduce_dst": "col2"})");
  EXPECT_EQ(i.engine, Engine::kScalar);
  EXPECT_EQ(i.func, ActivationFunc::kGelu);
  EXPECT_EQ(i.scale_kind, ScalarKind::kImmediate);
  EXPECT_EQ(i.scale_value, 2.5);
  EXPECT_EQ(i.bias_kind, ScalarKind::kTensor);
  EXPECT_EQ(i.num_reads, 2);   // src, bias
  EXPECT_EQ(i.num_writes, 2);  // dst, reduce_dst
  EXPECT_EQ(i.elements_per_partition, 512u);
}

TEST(Ops, TensorTensor) {
  const auto i = only(
      R"({"op": "tensor_tensor", "engine": "gpsimd", "dst": "s", "in0": "s2", "in1": "s", "alu": "maximum"})");
  EXPECT_EQ(i.engine, Engine::kGpSimd);
  EXPECT_EQ(i.alu, AluOp::kMax);
  EXPECT_EQ(i.num_reads, 2);
  EXPECT_EQ(i.bytes_read, 2 * kTileBytes);
}

TEST(Ops, TensorScalar) {
  const auto i = only(
      R"({"op": "tensor_scalar", "engine": "scalar", "dst": "s", "src": "s2", "op0": "multiply",
                          "operand0": "col", "op1": "add", "operand1": 1.5, "reverse1": "1"})");
  EXPECT_EQ(i.engine, Engine::kScalar);
  EXPECT_EQ(i.op0, AluOp::kMultiply);
  EXPECT_EQ(i.op1, AluOp::kAdd);
  EXPECT_EQ(i.operand0_kind, ScalarKind::kTensor);
  EXPECT_EQ(i.operand1_kind, ScalarKind::kImmediate);
  EXPECT_EQ(i.operand1_value, 1.5);
  EXPECT_TRUE(i.reverse1);
  EXPECT_FALSE(i.reverse0);
  EXPECT_EQ(i.num_reads, 2);
}

TEST(Ops, ScalarTensorTensor) {
  const auto i = only(
      R"({"op": "scalar_tensor_tensor", "dst": "s", "data": "s2", "op0": "multiply", "operand0": 2,
                          "op1": "add", "in1": "s"})");
  EXPECT_EQ(i.engine, Engine::kVector);
  EXPECT_EQ(i.operand0_value, 2.0);
  EXPECT_EQ(i.num_reads, 2);
}

TEST(Ops, TensorReduce) {
  const auto i = only(
      R"({"op": "tensor_reduce", "dst": "col", "src": "s", "alu": "max", "axis": [1], "negate": true})");
  EXPECT_EQ(i.alu, AluOp::kMax);
  EXPECT_EQ(i.reduce_axes, 1);
  EXPECT_TRUE(i.negate);
  EXPECT_EQ(i.bytes_written, 128u * 4);
}

TEST(Ops, TensorPartitionReduce) {
  const auto i =
      only(R"({"op": "tensor_partition_reduce", "dst": "red", "src": "s", "alu": "add"})");
  EXPECT_EQ(i.engine, Engine::kGpSimd);
  EXPECT_EQ(i.partitions, 128u);
  EXPECT_EQ(i.bytes_written, 512u * 4);
}

TEST(Ops, TensorTensorScan) {
  const auto i =
      only(R"({"op": "tensor_tensor_scan", "dst": "s", "in0": "s2", "in1": "s", "initial": 0,
                          "op0": "multiply", "op1": "add"})");
  EXPECT_EQ(i.engine, Engine::kVector);
  EXPECT_EQ(i.operand0_kind, ScalarKind::kImmediate);
  EXPECT_EQ(i.num_reads, 2);
}

TEST(Ops, TensorCopyOnScalar) {
  const auto i = only(R"({"op": "tensor_copy", "engine": "scalar", "dst": "s", "src": "p"})");
  EXPECT_EQ(i.engine, Engine::kScalar);
  EXPECT_EQ(i.reads[0].memory, MemoryKind::kPsum);
}

TEST(Ops, Memset) {
  const auto i = only(R"({"op": "memset", "engine": "gpsimd", "dst": "s", "value": -1.25})");
  EXPECT_EQ(i.engine, Engine::kGpSimd);
  EXPECT_EQ(i.fill_value, -1.25);
  EXPECT_EQ(i.num_reads, 0);
  EXPECT_EQ(i.elements_per_partition, 512u);  // of dst
  EXPECT_EQ(i.partitions, 128u);
}

TEST(Ops, Iota) {
  const auto i = only(R"({"op": "iota", "dst": "ints", "expr": "p * 512 + f"})");
  EXPECT_EQ(i.engine, Engine::kGpSimd);
  EXPECT_EQ(i.num_writes, 1);
}

TEST(Ops, AffineSelect) {
  const auto i = only(
      R"({"op": "affine_select", "dst": "s", "src": "s2", "pred": "p - f", "cmp": "gt", "fill": "-inf"})");
  EXPECT_EQ(i.cmp, CompareOp::kGt);
  EXPECT_TRUE(std::isinf(i.fill_value) && i.fill_value < 0);
}

TEST(Ops, BnStatsAndAggr) {
  const auto stats = only(R"({"op": "bn_stats", "dst": "stats", "src": "s"})");
  EXPECT_EQ(stats.engine, Engine::kVector);
  const auto aggr = only(R"({"op": "bn_aggr", "dst": "mv", "src": "stats"})");
  EXPECT_EQ(aggr.elements_per_partition, 6u);
}

TEST(Ops, Reciprocal) {
  const auto i = only(R"({"op": "reciprocal", "dst": "s", "src": "s2"})");
  EXPECT_EQ(i.opcode, Opcode::kReciprocal);
}

TEST(Ops, Exponential) {
  const auto i =
      only(R"({"op": "exponential", "dst": "s", "src": "s2", "max": "col", "reduce_dst": "col2"})");
  EXPECT_EQ(i.engine, Engine::kVector);
  EXPECT_EQ(i.operand0_kind, ScalarKind::kTensor);
  EXPECT_EQ(i.num_reads, 2);
  EXPECT_EQ(i.num_writes, 2);
}

TEST(Ops, Select) {
  const auto i =
      only(R"({"op": "select", "dst": "s", "pred": "s2", "on_true": "s", "on_false": 0})");
  EXPECT_EQ(i.num_reads, 2);
  EXPECT_EQ(i.operand1_kind, ScalarKind::kImmediate);
}

TEST(Ops, CoreBarrier) {
  const auto i = only(R"({"op": "core_barrier"})");
  EXPECT_EQ(i.engine, Engine::kSync);
  EXPECT_EQ(i.core_group, kAllCores);
  EXPECT_EQ(i.num_reads + i.num_writes, 0);
}

TEST(Ops, Collectives) {
  const auto reduce =
      only(R"({"op": "all_reduce", "dst": "hd", "src": "hc", "alu": "max", "algorithm": "ring"})");
  EXPECT_EQ(reduce.engine, Engine::kCollective);
  EXPECT_EQ(reduce.alu, AluOp::kMax);
  EXPECT_EQ(reduce.algorithm, CollectiveAlgorithm::kRing);
  EXPECT_EQ(reduce.hbm_bytes, 2u * 1024 * 4);
  const auto gather = only(R"({"op": "all_gather", "dst": "hall", "src": "hc", "group": "all"})");
  EXPECT_EQ(gather.alu, AluOp::kAdd);  // default
  EXPECT_EQ(gather.bytes_written, 2048u * 4);
  const auto scatter =
      only(R"({"op": "reduce_scatter", "dst": "hc", "src": "hall", "group": [0, 1]})");
  EXPECT_NE(scatter.core_group, kAllCores);
  const auto all_to_all = only(R"({"op": "all_to_all", "dst": "hd", "src": "hc"})");
  EXPECT_EQ(all_to_all.opcode, Opcode::kAllToAll);
}

TEST(Ops, SendRecv) {
  const auto kernel =
      prepare_text(kernel_json(kOpsTensors, R"([{"op": "send", "src": "hc", "peer": "1 - pid"},
                               {"op": "recv", "dst": "s", "peer": "1 - pid"}])",
                               "{}", "2"),
                   trn3_target());
  const auto core1 = collect(kernel, 1);
  ASSERT_EQ(core1.size(), 2u);
  EXPECT_EQ(core1[0].peer, 0u);
  EXPECT_EQ(core1[0].num_reads, 1);
  EXPECT_EQ(core1[1].num_writes, 1);
  // HBM: h (128 x 512 x 4 = 262144 B) at 0, hb (128 x 128 x 2 = 32768 B) at 262144, hc at
  // 294912 with one 4096 B instance per core: core 1's at 294912 + 4096.
  EXPECT_EQ(core1[0].src().offset, 294912u + 4096);
}

}  // namespace
}  // namespace trnsim::kernel
