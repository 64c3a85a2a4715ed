#include "kernel/stream.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "kernel/validate.hpp"
#include "test_support.hpp"

namespace trnsim::kernel {
namespace {

using testing::collect;
using testing::error_of;
using testing::kernel_json;
using testing::prepare_text;
using testing::run_error;
using testing::trn1_target;
using testing::trn2_target;

std::string read_example(const std::string& name) {
  std::ifstream in(std::string(TRNSIM_SOURCE_DIR) + "/examples/kernels/" + name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Spec section 8: T = 8 tiles of [128, 2048] float32.
TEST(Stream, SpecExampleVectorAdd) {
  const PreparedKernel kernel = prepare_text(read_example("vector_add.json"));
  // Allocation: each SBUF tensor is 2 buffers x 2048 x 4 B = 16384 B per partition; each HBM
  // tensor 8 x 128 x 2048 x 4 B = 8 MiB.
  EXPECT_EQ(kernel.allocation.placements[3].offset, 0u);         // a_sb
  EXPECT_EQ(kernel.allocation.placements[4].offset, 16384u);     // b_sb
  EXPECT_EQ(kernel.allocation.placements[5].offset, 32768u);     // c_sb
  EXPECT_EQ(kernel.allocation.placements[1].offset, 8388608u);   // b
  EXPECT_EQ(kernel.allocation.placements[2].offset, 16777216u);  // out

  const auto instructions = collect(kernel);
  ASSERT_EQ(instructions.size(), 32u);  // 8 iterations x 4 statements

  const Instruction& load = instructions[4];  // t = 1, dma a
  EXPECT_EQ(load.opcode, Opcode::kDmaCopy);
  EXPECT_EQ(load.engine, Engine::kDma);
  EXPECT_EQ(load.sequence, 4u);
  EXPECT_EQ(load.dma_queue, 0);
  const AccessPattern& dst = load.dst();
  EXPECT_EQ(dst.memory, MemoryKind::kSbuf);
  EXPECT_EQ(dst.partition_start, 0u);
  EXPECT_EQ(dst.partitions, 128u);
  EXPECT_EQ(dst.offset, 8192u);  // buffer 1: 2048 x 4 B
  EXPECT_EQ(dst.rank, 1);
  EXPECT_EQ(dst.sizes[0], 2048u);
  EXPECT_EQ(dst.strides[0], 1);
  const AccessPattern& src = load.src();
  EXPECT_EQ(src.memory, MemoryKind::kHbm);
  EXPECT_EQ(src.offset, 1048576u);  // a[1]: 128 x 2048 x 4 B
  EXPECT_EQ(src.rank, 2);
  EXPECT_EQ(src.sizes[0], 128u);
  EXPECT_EQ(src.strides[0], 2048);
  EXPECT_EQ(load.bytes_read, 1048576u);
  EXPECT_EQ(load.hbm_bytes, 1048576u);
  ASSERT_EQ(load.num_writes, 1);
  EXPECT_EQ(load.writes[0].memory, MemoryKind::kSbuf);
  EXPECT_EQ(load.writes[0].partition_begin, 0u);
  EXPECT_EQ(load.writes[0].partition_end, 128u);
  EXPECT_EQ(load.writes[0].byte_begin, 8192u);
  EXPECT_EQ(load.writes[0].bytes_per_partition(), 8192u);
  ASSERT_EQ(load.num_reads, 1);
  EXPECT_EQ(load.reads[0].byte_begin, 1048576u);
  EXPECT_EQ(load.reads[0].byte_end(), 2097152u);  // one contiguous MiB

  const Instruction& add = instructions[22];  // t = 5
  EXPECT_EQ(add.opcode, Opcode::kTensorTensor);
  EXPECT_EQ(add.engine, Engine::kVector);
  EXPECT_EQ(add.alu, AluOp::kAdd);
  EXPECT_EQ(add.elements_per_partition, 2048u);
  EXPECT_EQ(add.partitions, 128u);
  EXPECT_EQ(add.num_reads, 2);
  EXPECT_EQ(add.bytes_read, 2097152u);                 // 2 x 128 x 2048 x 4
  EXPECT_EQ(add.reads[1].byte_begin, 16384u + 8192u);  // b_sb buffer 1
  EXPECT_EQ(kernel.prog().location(add.source), "k.json: tensor_tensor /program/0/body/2 (t=5)");
  EXPECT_EQ(instructions[1].dma_queue, 1);

  std::uint64_t hbm = 0;
  for (const auto& i : instructions) hbm += i.hbm_bytes;
  EXPECT_EQ(hbm, 3u * 8 * 1048576);  // a and b read, out written, 1 MiB per tile
}

// Three nested loops: M = 256, N = 1024, K = 512 with 128 x 128 x 512 tiles gives
// m in 0..1, n in 0..1, k in 0..3: per (m, n) 4 x 3 + 2 = 14 instructions, 56 in total.
TEST(Stream, ThreeDeepLoopNestMatmul) {
  const PreparedKernel kernel = prepare_text(read_example("matmul_tiled.json"));
  const auto instructions = collect(kernel);
  ASSERT_EQ(instructions.size(), 56u);
  std::uint64_t flops = 0;
  int matmuls = 0;
  for (const auto& i : instructions) {
    if (i.opcode != Opcode::kNcMatmul) continue;
    ++matmuls;
    const std::int64_t k = i.source.loop_values[2];
    EXPECT_EQ(i.accumulate, k > 0);
    EXPECT_EQ(i.num_reads, k > 0 ? 3 : 2);  // an accumulating matmul also reads its dst
    EXPECT_EQ(i.flops, 2ull * 128 * 128 * 512);
    EXPECT_EQ(i.elements_per_partition, 512u);
    flops += i.flops;
  }
  EXPECT_EQ(matmuls, 16);
  EXPECT_EQ(flops, 2ull * 512 * 256 * 1024);  // 2 K M N
  // Instruction 12 + 2 = 14 is the first of (m=0, n=1): dma A[0:128, 0:128].
  const Instruction& first = instructions[14];
  EXPECT_EQ(first.source.depth, 3);
  EXPECT_EQ(first.source.loop_values[0], 0);
  EXPECT_EQ(first.source.loop_values[1], 1);
  EXPECT_EQ(first.source.loop_values[2], 0);
  EXPECT_EQ(kernel.prog().location(instructions[16].source),
            "k.json: mm /program/0/body/0/body/0/body/2 (m=0, n=1, k=0)");
  // B[k*128:(k+1)*128, n*512:(n+1)*512] for k = 1, n = 1 (instruction 14 + 4): bf16 rows of
  // 1024 elements: address of B (A is 512 x 256 x 2 B = 262144) + (128 x 1024 + 512) x 2.
  const AccessPattern& b = instructions[18].src();
  EXPECT_EQ(b.offset, 262144u + (128u * 1024 + 512) * 2);
  EXPECT_EQ(b.sizes[0], 128u);
  EXPECT_EQ(b.strides[0], 1024);
  const Region region = b.region();  // 128 runs of 1024 B, 2048 B apart
  EXPECT_EQ(region.count, 128u);
  EXPECT_EQ(region.run_bytes, 1024u);
  EXPECT_EQ(region.stride_bytes, 2048u);
}

TEST(Stream, EachSliceForm) {
  // x: sbuf float32 [128, 64, 32] (per partition 64 x 32, strides 32 and 1);
  // h: hbm bfloat16 [4, 8, 16] (strides 128, 16, 1); sb: sbuf float32 [4, 128, 16], pd 1.
  const auto kernel = prepare_text(kernel_json(
      R"({"x": {"memory": "sbuf", "dtype": "float32", "shape": [128, 64, 32]},
          "h": {"memory": "hbm", "dtype": "bfloat16", "shape": [4, 8, 16]},
          "sb": {"memory": "sbuf", "dtype": "float32", "shape": [4, 128, 16], "partition_dim": 1}})",
      R"([{"op": "memset", "dst": "x", "value": 0},
          {"op": "memset", "dst": "x[0:64]", "value": 0},
          {"op": "memset", "dst": "x[:, 5]", "value": 0},
          {"op": "memset", "dst": "x[:, 2:10:4, 1:]", "value": 0},
          {"op": "memset", "dst": "x[..., 7]", "value": 0},
          {"op": "memset", "dst": "x[32:64, ::2]", "value": 0},
          {"op": "dma_copy", "dst": "x[0:2, 0, 0:16]", "src": "h[1, 2:4]"},
          {"op": "memset", "dst": "sb[1:3]", "value": 0}])"));
  const auto in = collect(kernel);
  ASSERT_EQ(in.size(), 8u);
  auto check = [](const AccessPattern& p, std::uint32_t pstart, std::uint32_t parts,
                  std::uint64_t offset, std::vector<std::uint32_t> sizes,
                  std::vector<std::int64_t> strides) {
    EXPECT_EQ(p.partition_start, pstart);
    EXPECT_EQ(p.partitions, parts);
    EXPECT_EQ(p.offset, offset);
    ASSERT_EQ(p.rank, sizes.size());
    for (std::size_t d = 0; d < sizes.size(); ++d) {
      EXPECT_EQ(p.sizes[d], sizes[d]) << d;
      EXPECT_EQ(p.strides[d], strides[d]) << d;
    }
  };
  check(in[0].dst(), 0, 128, 0, {64, 32}, {32, 1});
  check(in[1].dst(), 0, 64, 0, {64, 32}, {32, 1});                  // trailing dims omitted = ':'
  check(in[2].dst(), 0, 128, 5 * 32 * 4, {32}, {1});                // integer index drops the dim
  check(in[3].dst(), 0, 128, (2 * 32 + 1) * 4, {2, 31}, {128, 1});  // 2:10:4 -> 2, 6
  check(in[4].dst(), 0, 128, 7 * 4, {64}, {32});                    // '...' then an integer
  check(in[5].dst(), 32, 32, 0, {32, 32}, {64, 1});                 // ::2 over 64 -> 32, stride 64
  check(in[6].src(), 0, 1, (1 * 128 + 2 * 16) * 2, {2, 16}, {16, 1});  // HBM at address 0
  // sb is allocated after x (64 x 32 x 4 = 8192 B per partition); buffer 1 starts 16 x 4 B in.
  check(in[7].dst(), 0, 128, 8192 + 16 * 4, {2, 16}, {16, 1});  // buffer slice -> a free dim
  EXPECT_EQ(in[7].dst().partition_axis, 1);
  EXPECT_EQ(format_shape(in[7].dst()), "[2, 128, 16]");
  EXPECT_EQ(format_shape(in[3].dst()), "[128, 2, 31]");
  // x[:, 2:10:4, 1:]: two runs of 31 elements 128 apart: exact region.
  const Region r = in[3].dst().region();
  EXPECT_EQ(r.count, 2u);
  EXPECT_EQ(r.run_bytes, 31u * 4);
  EXPECT_EQ(r.stride_bytes, 128u * 4);
}

TEST(Stream, RangesConditionsAndTriangles) {
  // Causal triangle: i in 0..3, j in 0..i -> 1 + 2 + 3 + 4 = 10 instructions; then
  // range(2, 7, 2) = 2, 4, 6 and range(5, 0, -2) = 5, 3, 1; the if/else picks by parity.
  const auto kernel = prepare_text(
      kernel_json(R"({"x": {"memory": "sbuf", "dtype": "float32", "shape": [128, 8]}})",
                  R"([{"for": "i", "range": 4, "body": [
            {"for": "j", "range": "i + 1", "body": [{"op": "memset", "dst": "x[:, j]", "value": 1}]}]},
          {"for": "a", "range": [2, "n", 2], "body": [{"op": "memset", "dst": "x[:, a]", "value": 2}]},
          {"for": "b", "range": [5, 0, -2], "body": [
            {"if": "b % 2 == 1 and b > 1", "then": [{"op": "memset", "dst": "x[:, b]", "value": 3}],
             "else": [{"op": "memset", "dst": "x[:, 0]", "value": 4}]}]}])",
                  R"({"n": 7})"));
  const auto in = collect(kernel);
  ASSERT_EQ(in.size(), 16u);  // 10 + 3 + 3
  std::vector<std::pair<std::int64_t, std::int64_t>> ij;
  for (int k = 0; k < 10; ++k)
    ij.emplace_back(in[k].source.loop_values[0], in[k].source.loop_values[1]);
  EXPECT_EQ(ij,
            (std::vector<std::pair<std::int64_t, std::int64_t>>{
                {0, 0}, {1, 0}, {1, 1}, {2, 0}, {2, 1}, {2, 2}, {3, 0}, {3, 1}, {3, 2}, {3, 3}}));
  EXPECT_EQ(in[10].dst().offset, 2u * 4);
  EXPECT_EQ(in[12].dst().offset, 6u * 4);
  EXPECT_EQ(in[13].fill_value, 3.0);  // b = 5
  EXPECT_EQ(in[14].fill_value, 3.0);  // b = 3
  EXPECT_EQ(in[15].fill_value, 4.0);  // b = 1: else
  EXPECT_EQ(in[15].source.loop_values[0], 1);
}

TEST(Stream, PerCoreValuesAndHbmInstances) {
  // trn1 has 2 cores per chip; 4 cores on 2 chips -> core 3 is local core 1 of chip 1.
  Target target = trn1_target();
  target.chips = 2;
  const auto kernel = prepare_text(
      kernel_json(R"({"h": {"memory": "hbm", "dtype": "float32", "shape": [512], "per_core": true},
                      "g": {"memory": "hbm", "dtype": "float32", "shape": [4, 512]},
                      "s": {"memory": "sbuf", "dtype": "float32", "shape": [1, 512]}})",
                  R"([{"op": "dma_copy", "dst": "s", "src": "h"},
                      {"op": "dma_copy", "dst": "s", "src": "g[ROW:ROW+1]"}])",
                  R"({"ROW": "chip * cores_per_chip + local_core"})", "4"),
      target);
  const auto core3 = collect(kernel, 3);
  // h: 2048 B per instance, 2 instances per chip; g after them at 4096.
  EXPECT_EQ(core3[0].src().offset, 2048u);
  EXPECT_EQ(core3[0].src().space, 1u);  // chip 1
  EXPECT_EQ(core3[0].reads[0].space, 1u);
  EXPECT_EQ(core3[0].dst().space, 3u);  // core 3's SBUF
  EXPECT_EQ(core3[0].pid, 3u);
  EXPECT_EQ(core3[1].src().offset, 4096u + 3 * 2048);  // ROW = 1 * 2 + 1 = 3
  const auto core0 = collect(kernel, 0);
  EXPECT_EQ(core0[0].src().offset, 0u);
  EXPECT_EQ(core0[1].src().offset, 4096u);
}

TEST(Stream, LoopValuesInErrors) {
  const std::string tensors =
      R"({"a": {"memory": "hbm", "dtype": "float32", "shape": [8, 128, 64]},
          "s": {"memory": "sbuf", "dtype": "float32", "shape": [128, 64]}})";
  EXPECT_EQ(run_error(kernel_json(tensors, R"([{"for": "t", "range": 9, "body": [
                          {"op": "dma_copy", "dst": "s", "src": "a[t]"}]}])")),
            "k.json: dma_copy /program/0/body/0/src (t=8): operand 'a[t]': index 't' = 8 is out "
            "of bounds for dimension 0 of tensor 'a' (size 8, valid 0-7)");
  EXPECT_EQ(
      run_error(kernel_json(tensors, R"([{"for": "t", "range": 3, "body": [
                          {"op": "memset", "dst": "s[:, 0:64 // (2 - t)]", "value": 0}]}])")),
      "k.json: memset /program/0/body/0/dst (t=2): division by zero in expression '64 // (2 - t)'");
  EXPECT_EQ(
      run_error(kernel_json(tensors, R"([{"for": "t", "range": 2, "body": [
                          {"for": "u", "range": 3, "body": [
                            {"op": "memset", "dst": "s[:, t * 40 : t * 40 + 32]", "value": 0, "name": "clr"}]}]}])")),
      "k.json: clr /program/0/body/0/body/0/dst (t=1, u=0): operand 's[:, t * 40 : t * 40 + "
      "32]': slice 40:72 of dimension 1 of tensor 's' (size 64) is out of bounds (valid 0:64)");
  EXPECT_EQ(run_error(kernel_json(tensors, R"([{"for": "t", "range": 3, "body": [
                          {"op": "memset", "dst": "s[:, t:2]", "value": 0}]}])")),
            "k.json: memset /program/0/body/0/dst (t=2): operand 's[:, t:2]': slice 2:2 of "
            "dimension 1 of tensor 's' (size 64) is empty");
  EXPECT_EQ(run_error(kernel_json(tensors, R"([{"for": "t", "range": [0, 4, "n - 1"], "body": [
                          {"op": "memset", "dst": "s[:, 0:32]", "value": 0}]}])",
                                  R"({"n": 1})")),
            "k.json: for t /program/0/range: range step 'n - 1' evaluates to 0");
}

TEST(Stream, MemoryDoesNotGrowWithDynamicCount) {
  // 1000 x 1000 = 10^6 dynamic instructions from a 3-statement program.
  const auto kernel = prepare_text(
      kernel_json(R"({"x": {"memory": "sbuf", "dtype": "float32", "shape": [128, 16]}})",
                  R"([{"for": "i", "range": 1000, "body": [{"for": "j", "range": 1000, "body": [
            {"op": "memset", "dst": "x[:, j % 16]", "value": 0}]}]}])"));
  InstructionStream stream(kernel, 0);
  Instruction instruction;
  std::uint64_t count = 0;
  while (stream.next(instruction)) ++count;
  EXPECT_EQ(count, 1000000u);
  EXPECT_EQ(stream.issued(), 1000000u);
  EXPECT_EQ(instruction.source.loop_values[0], 999);
}

TEST(Stream, LoopInvariantInstructionsAreReusedWithFreshSource) {
  const auto kernel = prepare_text(kernel_json(
      R"({"x": {"memory": "sbuf", "dtype": "float32", "shape": [128, 16]}})",
      R"([{"for": "i", "range": 3, "body": [{"op": "memset", "dst": "x", "value": 1}]}])"));
  const auto in = collect(kernel);
  ASSERT_EQ(in.size(), 3u);
  EXPECT_EQ(in[2].sequence, 2u);
  EXPECT_EQ(in[2].source.loop_values[0], 2);
  EXPECT_EQ(in[2].writes[0].bytes_per_partition(), 64u);
}

TEST(Stream, CoreGroups) {
  const auto kernel = prepare_text(kernel_json("{}", R"([{"op": "core_barrier", "cores": [0, 1]},
                            {"op": "core_barrier"},
                            {"op": "core_barrier", "cores": ["pid", "(pid + 1) % ncores"]}])",
                                               "{}", "3"));
  InstructionStream stream(kernel, 1);
  Instruction in;
  ASSERT_TRUE(stream.next(in));
  ASSERT_NE(in.core_group, kAllCores);
  EXPECT_EQ(std::vector<std::uint32_t>(stream.core_group(in.core_group).begin(),
                                       stream.core_group(in.core_group).end()),
            (std::vector<std::uint32_t>{0, 1}));
  ASSERT_TRUE(stream.next(in));
  EXPECT_EQ(in.core_group, kAllCores);
  ASSERT_TRUE(stream.next(in));
  const auto group = stream.core_group(in.core_group);
  EXPECT_EQ(std::vector<std::uint32_t>(group.begin(), group.end()),
            (std::vector<std::uint32_t>{1, 2}));
  // Core 2 is not in [0, 1].
  EXPECT_EQ(error_of([&] { collect(kernel, 2); }),
            "k.json: core_barrier /program/0/cores: core-group: core 2 executes core_barrier but "
            "is not in its group [0, 1]");
}

}  // namespace
}  // namespace trnsim::kernel
