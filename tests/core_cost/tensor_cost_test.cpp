// Contract tests of the TensorE cost rules (hardware-facts.md §3.2-3.5, §13). Expected cycles are
// worked out by hand in the comments from the Params set in cost_test_support.hpp.
#include <gtest/gtest.h>

#include <stdexcept>

#include "core/cost/cost_model.hpp"
#include "cost_test_support.hpp"

namespace trnsim::cost::test {
namespace {

TEST(TensorCost, Bf16FullTileIsMovingFreeSizeOnEveryGeneration) {
  // MM = max(min(64, 128), 512) = 512; LS = 128 / 4 = 32; latency = pipeline_latency_cycles 256.
  for (const Params& p : all_generations()) {
    SCOPED_TRACE(p.name);
    const EngineCost cost = tensor_cost(matmul(DType::kBFloat16, 128, 128, 512), p);
    EXPECT_EQ(cost.cycles, 512u);
    EXPECT_EQ(cost.load_stationary_cycles, 32u);
    EXPECT_EQ(cost.latency_cycles, 256u);
    EXPECT_DOUBLE_EQ(cost.ns, 512.0 / p.tensor.clock_ghz);
  }
  // 512 / 2.8 GHz = 182.857 ns on Trn1, 512 / 2.4 = 213.333 ns on Trn2.
  EXPECT_NEAR(tensor_cost(matmul(DType::kBFloat16, 128, 128, 512), trn1()).ns, 182.857, 1e-3);
  EXPECT_NEAR(tensor_cost(matmul(DType::kBFloat16, 128, 128, 512), trn2()).ns, 213.333, 1e-3);
}

TEST(TensorCost, ShortMovingIsBoundByMinimumInitiationInterval) {
  // hardware-facts.md §3.2 perf-guide example: LS_II = 128 / 4 = 32, MM_II = max(min(64, 128), 1)
  // = 64.
  const EngineCost cost = tensor_cost(matmul(DType::kBFloat16, 128, 128, 1), trn2());
  EXPECT_EQ(cost.cycles, 64u);
  EXPECT_EQ(cost.load_stationary_cycles, 32u);
}

TEST(TensorCost, ShortStationaryLowersTheFloor) {
  // max(min(64, 16), 16) = 16; max(min(64, 16), 128) = 128; max(min(64, 100), 65) = 65.
  EXPECT_EQ(tensor_cost(matmul(DType::kBFloat16, 128, 16, 16), trn2()).cycles, 16u);
  EXPECT_EQ(tensor_cost(matmul(DType::kBFloat16, 128, 16, 128), trn2()).cycles, 128u);
  EXPECT_EQ(tensor_cost(matmul(DType::kBFloat16, 128, 100, 65), trn1()).cycles, 65u);
  // LS of a 16-column stationary: 16 / 4 = 4.
  EXPECT_EQ(tensor_cost(matmul(DType::kBFloat16, 128, 16, 16), trn2()).load_stationary_cycles, 4u);
}

TEST(TensorCost, Fp32IsFourTimesAndTf32Fp16Fp8AreBf16Rate) {
  for (const Params& p : all_generations()) {
    SCOPED_TRACE(p.name);
    // 4 * max(min(64, 128), 512) = 2048; LS = 4 * 128 / 4 = 128.
    const EngineCost fp32 = tensor_cost(matmul(DType::kFloat32, 128, 128, 512), p);
    EXPECT_EQ(fp32.cycles, 2048u);
    EXPECT_EQ(fp32.load_stationary_cycles, 128u);
    // 4 * max(min(64, 128), 1) = 256.
    EXPECT_EQ(tensor_cost(matmul(DType::kFloat32, 128, 128, 1), p).cycles, 256u);
    EXPECT_EQ(tensor_cost(matmul(DType::kTFloat32, 128, 128, 512), p).cycles, 512u);
    EXPECT_EQ(tensor_cost(matmul(DType::kFloat16, 128, 128, 512), p).cycles, 512u);
    EXPECT_EQ(tensor_cost(matmul(DType::kFloat8E4M3, 128, 128, 512), p).cycles, 512u);
  }
}

TEST(TensorCost, PartitionCountDoesNotChangeCost) {
  // K = 1, 32 or 128 contraction rows: all max(min(64, 128), 512) = 512.
  for (std::uint32_t k : {1u, 32u, 128u}) {
    EXPECT_EQ(tensor_cost(matmul(DType::kBFloat16, k, 128, 512), trn2()).cycles, 512u) << k;
  }
}

TEST(TensorCost, StationaryReuseSkipsLoadStationary) {
  CostContext reused;
  reused.stationary_reused = true;
  const EngineCost cost = tensor_cost(matmul(DType::kBFloat16, 128, 128, 512), trn2(), reused);
  EXPECT_EQ(cost.cycles, 512u);
  EXPECT_EQ(cost.load_stationary_cycles, 0u);
}

Instruction double_row_matmul(std::uint32_t m, std::uint32_t n) {
  // stationary [128, 2, M], moving [128, 2, N] FP8 (hardware-facts.md §3.4), dst [M, N] FP32.
  Instruction in = instruction(Opcode::kNcMatmul, Engine::kTensor,
                               {{Slot::kDst, psum(DType::kFloat32, m, {n})},
                                {Slot::kStationary, sbuf(DType::kFloat8E4M3, 128, {2, m})},
                                {Slot::kSrc, sbuf(DType::kFloat8E5M2, 128, {2, n})}});
  in.double_row = true;
  return in;
}

TEST(TensorCost, Fp8DoubleRowDoesK256InTheTimeOfBf16K128) {
  // Trn2/Trn3 rate 2: moving 2 * 512 = 1024 values / 2 = 512 = max(min(64, 128), 512), the
  // BF16 K=128 cost; LS = 2 * 128 / 2 / 4 = 32 (BF16 LS of 128 columns).
  for (const Params& p : {trn2(), trn3()}) {
    SCOPED_TRACE(p.name);
    const EngineCost cost = tensor_cost(double_row_matmul(128, 512), p);
    EXPECT_EQ(cost.cycles, 512u);
    EXPECT_EQ(cost.load_stationary_cycles, 32u);
    // Short moving keeps the 64-cycle floor: max(min(64, 128), 2 * 1 / 2) = 64.
    EXPECT_EQ(tensor_cost(double_row_matmul(128, 1), p).cycles, 64u);
  }
  // Trn4 projected rate 6: 1024 / 6 = 170.67 -> 171; LS = 256 / 6 / 4 = 10.67 -> 11.
  const EngineCost trn4_cost = tensor_cost(double_row_matmul(128, 512), trn4());
  EXPECT_EQ(trn4_cost.cycles, 171u);
  EXPECT_EQ(trn4_cost.load_stationary_cycles, 11u);
  // No double row on NeuronCore-v2: the validator rejects it, the cost model refuses it.
  EXPECT_THROW(tensor_cost(double_row_matmul(128, 512), trn1()), std::logic_error);
}

Instruction mx_matmul(DType stationary_dtype, DType moving_dtype) {
  // stationary [128, 128] and moving [128, 512] in x4 containers (hardware-facts.md §3.5), dst
  // FP32.
  return instruction(Opcode::kNcMatmulMx, Engine::kTensor,
                     {{Slot::kDst, psum(DType::kFloat32, 128, {512})},
                      {Slot::kStationary, sbuf(stationary_dtype, 128, {128})},
                      {Slot::kSrc, sbuf(moving_dtype, 128, {512})},
                      {Slot::kAux0, sbuf(DType::kUInt8, 128, {128})},
                      {Slot::kAux1, sbuf(DType::kUInt8, 128, {512})}});
}

TEST(TensorCost, MxMatmulRunsAtItsRate) {
  const DType fp8 = DType::kFloat8E4M3FnX4;
  const DType fp4 = DType::kFloat4E2M1FnX4;
  // Trn3: 512 containers x 4 values / 4 = 512 = BF16 [128,128]x[128,512] with 4x the MACs;
  // LS = 128 x 4 / 4 / 4 = 32. MXFP4 same rate on Trn3.
  const EngineCost trn3_fp8 = tensor_cost(mx_matmul(fp8, fp8), trn3());
  EXPECT_EQ(trn3_fp8.cycles, 512u);
  EXPECT_EQ(trn3_fp8.load_stationary_cycles, 32u);
  EXPECT_EQ(tensor_cost(mx_matmul(fp4, fp4), trn3()).cycles, 512u);
  // Trn4 projected: MXFP8 2048 / 12 = 170.67 -> 171; MXFP4 2048 / 24 = 85.33 -> 86; a mixed
  // pair runs at the slower MXFP8 rate -> 171.
  EXPECT_EQ(tensor_cost(mx_matmul(fp8, fp8), trn4()).cycles, 171u);
  EXPECT_EQ(tensor_cost(mx_matmul(fp4, fp4), trn4()).cycles, 86u);
  EXPECT_EQ(tensor_cost(mx_matmul(fp8, fp4), trn4()).cycles, 171u);
  EXPECT_THROW(tensor_cost(mx_matmul(fp8, fp8), trn2()), std::logic_error);
}

Instruction tensor_transpose(DType dtype, std::uint32_t p, std::uint32_t f) {
  return instruction(Opcode::kNcTranspose, Engine::kTensor,
                     {{Slot::kDst, psum(dtype, f, {p})}, {Slot::kSrc, sbuf(dtype, p, {f})}});
}

TEST(TensorCost, TransposeIsMaxOfPartitionsAndClampedFree) {
  // max(P, min(64, F)): [128,128] -> 128; [32,32] -> 32; [128,16] -> 128; [16,128] -> 64.
  const Params p = trn2();
  EXPECT_EQ(tensor_cost(tensor_transpose(DType::kBFloat16, 128, 128), p).cycles, 128u);
  EXPECT_EQ(tensor_cost(tensor_transpose(DType::kBFloat16, 32, 32), p).cycles, 32u);
  EXPECT_EQ(tensor_cost(tensor_transpose(DType::kBFloat16, 128, 16), p).cycles, 128u);
  EXPECT_EQ(tensor_cost(tensor_transpose(DType::kBFloat16, 16, 128), p).cycles, 64u);
  // The data is the stationary: LS = F / 4 = 128 / 4 = 32.
  EXPECT_EQ(tensor_cost(tensor_transpose(DType::kBFloat16, 128, 128), p).load_stationary_cycles,
            32u);
}

TEST(TensorCost, Fp32TransposeModeIsTwiceAsFastFromNcV3) {
  // NC-v2 (no transpose mode): 4 * max(128, min(64, 128)) = 512; LS 4 * 128 / 4 = 128.
  const EngineCost v2 = tensor_cost(tensor_transpose(DType::kFloat32, 128, 128), trn1());
  EXPECT_EQ(v2.cycles, 512u);
  EXPECT_EQ(v2.load_stationary_cycles, 128u);
  // NC-v3+: 4 / 2 * 128 = 256.
  for (const Params& p : {trn2(), trn3(), trn4()}) {
    EXPECT_EQ(tensor_cost(tensor_transpose(DType::kFloat32, 128, 128), p).cycles, 256u) << p.name;
  }
  // nc_matmul with is_transpose (data as stationary, identity as moving), FP32 [128,128]:
  // NC-v3: 4 / 2 * max(min(64, 128), 128) = 256; NC-v2: 4 * 128 = 512.
  Instruction transpose_mm = matmul(DType::kFloat32, 128, 128, 128);
  transpose_mm.is_transpose = true;
  EXPECT_EQ(tensor_cost(transpose_mm, trn2()).cycles, 256u);
  EXPECT_EQ(tensor_cost(transpose_mm, trn1()).cycles, 512u);
}

TEST(TensorCost, StrideAbove16BytesHalvesTheMovingStream) {
  // BF16 moving, 512 elements 16 apart = 32 B > 16 B: stream 2 * 512 = 1024.
  Instruction slow = matmul(DType::kBFloat16, 128, 128, 512);
  slow.operand(Slot::kSrc) = sbuf_strided(DType::kBFloat16, 128, 512, 16);
  EXPECT_EQ(tensor_cost(slow, trn2()).cycles, 1024u);
  // 8 apart = 16 B: still full rate, 512.
  Instruction ok = matmul(DType::kBFloat16, 128, 128, 512);
  ok.operand(Slot::kSrc) = sbuf_strided(DType::kBFloat16, 128, 512, 8);
  EXPECT_EQ(tensor_cost(ok, trn2()).cycles, 512u);
}

TEST(TensorCost, PeTileFollowsContractionAndOutputPartitions) {
  // Stationary on partitions [32, 64) (PE rows), dst on partitions [64, 96) (PE columns).
  Instruction in = instruction(Opcode::kNcMatmul, Engine::kTensor,
                               {{Slot::kDst, psum(DType::kFloat32, 32, {512}, 64)},
                                {Slot::kStationary, sbuf(DType::kBFloat16, 32, {32}, 32)},
                                {Slot::kSrc, sbuf(DType::kBFloat16, 32, {512}, 32)}});
  // 32-PE granularity (NC-v3): exactly rows [32, 64), columns [64, 96).
  const PeTile v3 = pe_tile(in, trn2());
  EXPECT_EQ(v3.row_begin, 32u);
  EXPECT_EQ(v3.rows, 32u);
  EXPECT_EQ(v3.col_begin, 64u);
  EXPECT_EQ(v3.cols, 32u);
  // 64-PE granularity (NC-v2): rounded out to rows [0, 64), columns [64, 128).
  const PeTile v2 = pe_tile(in, trn1());
  EXPECT_EQ(v2.row_begin, 0u);
  EXPECT_EQ(v2.rows, 64u);
  EXPECT_EQ(v2.col_begin, 64u);
  EXPECT_EQ(v2.cols, 64u);
  // A small matmul on a tile costs what the formula says: max(min(64, 32), 512) = 512.
  EXPECT_EQ(tensor_cost(in, trn2()).cycles, 512u);
  // Tiles on other rows or columns are disjoint; the full array overlaps everything.
  const PeTile other_rows{64, 32, 64, 32};
  const PeTile other_cols{32, 32, 96, 32};
  EXPECT_FALSE(v3.overlaps(other_rows));
  EXPECT_FALSE(v3.overlaps(other_cols));
  EXPECT_TRUE(v3.overlaps(PeTile{0, 128, 0, 128}));
  // Double row cannot be column-tiled: all 128 columns.
  const PeTile dr = pe_tile(double_row_matmul(32, 512), trn2());
  EXPECT_EQ(dr.col_begin, 0u);
  EXPECT_EQ(dr.cols, 128u);
}

TEST(TensorCost, ALargerArrayDoesMoreWorkPerMatmulInTheSameCycles) {
  // A 256 x 256 array (tensor.rows = 256; Params::derive() sets cols, partitions, latency):
  // [256, 256] stationary x [256, 512] moving = max(min(64, 256), 512) = 512 cycles, as a
  // [128, 128] x [128, 512] on 128 x 128, for 2 x 256 x 256 x 512 FLOPs, 4 times as many.
  Params wide = trn2();
  wide.tensor.rows = 256;
  wide.derive();
  const EngineCost big = tensor_cost(matmul(DType::kBFloat16, 256, 256, 512), wide);
  EXPECT_EQ(big.cycles, 512u);
  EXPECT_EQ(big.cycles, tensor_cost(matmul(DType::kBFloat16, 128, 128, 512), trn2()).cycles);
  // LS = 256 / 4 = 64; fill/drain latency = rows + cols = 512.
  EXPECT_EQ(big.load_stationary_cycles, 64u);
  EXPECT_EQ(big.latency_cycles, 512u);
  // The PE tile of the full matmul is the whole 256 x 256 array.
  const PeTile tile = pe_tile(matmul(DType::kBFloat16, 256, 256, 512), wide);
  EXPECT_EQ(tile.rows, 256u);
  EXPECT_EQ(tile.cols, 256u);
  // On a 64 x 64 array a [64, 64] x [64, 512] matmul also takes 512 cycles, for a quarter of the
  // work of the 128 x 128 one.
  Params narrow = trn2();
  narrow.tensor.rows = 64;
  narrow.derive();
  EXPECT_EQ(tensor_cost(matmul(DType::kBFloat16, 64, 64, 512), narrow).cycles, 512u);
}

TEST(TensorCost, RejectsOpsOfOtherEngines) {
  Instruction copy = instruction(Opcode::kTensorCopy, Engine::kVector,
                                 {{Slot::kDst, sbuf(DType::kFloat32, 128, {64})},
                                  {Slot::kSrc, sbuf(DType::kFloat32, 128, {64})}});
  EXPECT_THROW(tensor_cost(copy, trn2()), std::logic_error);
  copy.engine = Engine::kTensor;
  EXPECT_THROW(tensor_cost(copy, trn2()), std::logic_error);
}

}  // namespace
}  // namespace trnsim::cost::test
