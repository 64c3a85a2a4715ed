// Contract tests of the VectorE cost rules (hardware-facts.md §4, §7, §13). Expected cycles are
// worked out by hand in the comments; MIN_II = 64, dependent overhead = 100 on every generation.
#include <gtest/gtest.h>

#include <stdexcept>

#include "core/cost/cost_model.hpp"
#include "cost_test_support.hpp"

namespace trnsim::cost::test {
namespace {

using kernel::AluOp;

Instruction tensor_tensor(AluOp alu, const AccessPattern& in0, const AccessPattern& in1,
                          const AccessPattern& dst) {
  Instruction in = instruction(Opcode::kTensorTensor, Engine::kVector,
                               {{Slot::kDst, dst}, {Slot::kSrc, in0}, {Slot::kIn1, in1}});
  in.alu = alu;
  return in;
}

Instruction unary(Opcode opcode, const AccessPattern& src, const AccessPattern& dst) {
  return instruction(opcode, Engine::kVector, {{Slot::kDst, dst}, {Slot::kSrc, src}});
}

std::uint64_t vector_cycles(const Instruction& in, const Params& p, bool dependent = false) {
  CostContext context;
  context.depends_on_recent = dependent;
  return vector_cost(in, p, context).cycles;
}

TEST(VectorCost, Fp32TwoSbufInputsCostTwoPassesOnEveryGeneration) {
  // calibration-targets.md T3 vector add [128, 2000] FP32: max(64, 2 * 2000) = 4000 cycles;
  // 4000 / 0.96 GHz = 4166.67 ns on Trn2.
  const AccessPattern a = sbuf(DType::kFloat32, 128, {2000});
  for (const Params& p : all_generations()) {
    EXPECT_EQ(vector_cycles(tensor_tensor(AluOp::kAdd, a, a, a), p), 4000u) << p.name;
  }
  EXPECT_NEAR(vector_cost(tensor_tensor(AluOp::kAdd, a, a, a), trn2()).ns, 4166.667, 1e-3);
}

TEST(VectorCost, TensorTensorOnePassCases) {
  const Params v2 = trn1();
  const Params v3 = trn2();
  // One input in PSUM, one in SBUF: max(64, 512) = 512 (FP32, no perf mode anywhere).
  const AccessPattern ps = psum(DType::kFloat32, 128, {512});
  const AccessPattern sb = sbuf(DType::kFloat32, 128, {512});
  EXPECT_EQ(vector_cycles(tensor_tensor(AluOp::kMax, ps, sb, sb), v2), 512u);
  EXPECT_EQ(vector_cycles(tensor_tensor(AluOp::kMax, ps, sb, sb), v3), 512u);
  // All-BF16 unit-stride SBUF add: NC-v2 N = 1024; NC-v3 2x mode 1024 / 2 = 512.
  const AccessPattern bf = sbuf(DType::kBFloat16, 128, {1024});
  EXPECT_EQ(vector_cycles(tensor_tensor(AluOp::kAdd, bf, bf, bf), v2), 1024u);
  EXPECT_EQ(vector_cycles(tensor_tensor(AluOp::kAdd, bf, bf, bf), v3), 512u);
  // All-BF16 max is not add/sub/mul: NC-v2 2N = 2048; NC-v3 2x mode 2048 / 2 = 1024.
  EXPECT_EQ(vector_cycles(tensor_tensor(AluOp::kMax, bf, bf, bf), v2), 2048u);
  EXPECT_EQ(vector_cycles(tensor_tensor(AluOp::kMax, bf, bf, bf), v3), 1024u);
  // Small N hits MIN_II: max(64, 2 * 10) = 64.
  const AccessPattern tiny = sbuf(DType::kFloat32, 128, {10});
  EXPECT_EQ(vector_cycles(tensor_tensor(AluOp::kAdd, tiny, tiny, tiny), v3), 64u);
}

TEST(VectorCost, CopyAndTensorScalarPerfModes) {
  const AccessPattern bf_sb = sbuf(DType::kBFloat16, 128, {2048});
  const AccessPattern bf_ps = psum(DType::kBFloat16, 128, {2048});
  const AccessPattern f32 = sbuf(DType::kFloat32, 128, {2048});
  const AccessPattern fp16 = sbuf(DType::kFloat16, 128, {2048});
  // NC-v2: max(64, 2048) = 2048 whatever the dtype.
  EXPECT_EQ(vector_cycles(unary(Opcode::kTensorCopy, bf_sb, bf_sb), trn1()), 2048u);
  for (const Params& p : {trn2(), trn3(), trn4()}) {
    SCOPED_TRACE(p.name);
    // SBUF->SBUF BF16->FP16 unit stride: 4x mode, 2048 / 4 = 512.
    EXPECT_EQ(vector_cycles(unary(Opcode::kTensorCopy, bf_sb, fp16), p), 512u);
    EXPECT_EQ(vector_cycles(unary(Opcode::kTensorScalar, bf_sb, bf_sb), p), 512u);
    // PSUM source: 2x mode, 2048 / 2 = 1024.
    EXPECT_EQ(vector_cycles(unary(Opcode::kTensorCopy, bf_ps, bf_sb), p), 1024u);
    // FP32 anywhere: 2048.
    EXPECT_EQ(vector_cycles(unary(Opcode::kTensorCopy, bf_sb, f32), p), 2048u);
    // Non-contiguous BF16 (stride 2 elements = 4 B, full-rate access): 2x mode, 1024.
    const AccessPattern strided = sbuf_strided(DType::kBFloat16, 128, 2048, 2);
    EXPECT_EQ(vector_cycles(unary(Opcode::kTensorScalar, strided, bf_sb), p), 1024u);
  }
}

TEST(VectorCost, InnermostStrideAbove16BytesHalvesTheRate) {
  // FP32 source 8 elements apart = 32 B > 16 B: max(64, 2 * 1000) = 2000.
  const AccessPattern slow = sbuf_strided(DType::kFloat32, 128, 1000, 8);
  const AccessPattern dst = sbuf(DType::kFloat32, 128, {1000});
  EXPECT_EQ(vector_cycles(unary(Opcode::kTensorCopy, slow, dst), trn2()), 2000u);
  // 4 apart = 16 B: full rate, 1000.
  const AccessPattern ok = sbuf_strided(DType::kFloat32, 128, 1000, 4);
  EXPECT_EQ(vector_cycles(unary(Opcode::kTensorCopy, ok, dst), trn2()), 1000u);
}

TEST(VectorCost, TensorReduceHalvesForBf16AddMax) {
  auto reduce = [](DType dtype, AluOp alu, std::uint32_t n) {
    Instruction in = unary(Opcode::kTensorReduce, sbuf(dtype, 128, {n}), sbuf(dtype, 128, {1}));
    in.alu = alu;
    return in;
  };
  // BF16 add/max: 1024 / 2 = 512; BF16 min: 1024; FP32 add: 1024; BF16 add N=100: max(64, 50).
  EXPECT_EQ(vector_cycles(reduce(DType::kBFloat16, AluOp::kAdd, 1024), trn1()), 512u);
  EXPECT_EQ(vector_cycles(reduce(DType::kBFloat16, AluOp::kMax, 1024), trn2()), 512u);
  EXPECT_EQ(vector_cycles(reduce(DType::kBFloat16, AluOp::kMin, 1024), trn2()), 1024u);
  EXPECT_EQ(vector_cycles(reduce(DType::kFloat32, AluOp::kAdd, 1024), trn2()), 1024u);
  EXPECT_EQ(vector_cycles(reduce(DType::kBFloat16, AluOp::kAdd, 100), trn2()), 64u);
}

TEST(VectorCost, PerOpTable) {
  const Params p = trn1();
  auto f32 = [](std::uint32_t n) { return sbuf(DType::kFloat32, 128, {n}); };
  // reciprocal max(64, 8N): N=100 -> 800; N=4 -> max(64, 32) = 64.
  EXPECT_EQ(vector_cycles(unary(Opcode::kReciprocal, f32(100), f32(100)), p), 800u);
  EXPECT_EQ(vector_cycles(unary(Opcode::kReciprocal, f32(4), f32(4)), p), 64u);
  // bn_stats max(64, N): 512.
  EXPECT_EQ(vector_cycles(unary(Opcode::kBnStats, f32(512), f32(6)), p), 512u);
  // bn_aggr max(64, 13 * (N / 3)): N=48 -> 13 * 16 = 208; N=6 -> max(64, 26) = 64.
  EXPECT_EQ(vector_cycles(unary(Opcode::kBnAggr, f32(48), f32(2)), p), 208u);
  EXPECT_EQ(vector_cycles(unary(Opcode::kBnAggr, f32(6), f32(2)), p), 64u);
  // tensor_tensor_scan max(64, 2N): N=300 -> 600.
  Instruction scan = instruction(Opcode::kTensorTensorScan, Engine::kVector,
                                 {{Slot::kDst, f32(300)},
                                  {Slot::kSrc, f32(300)},
                                  {Slot::kIn1, f32(300)},
                                  {Slot::kAux0, f32(1)}});
  EXPECT_EQ(vector_cycles(scan, p), 600u);
  // Vector nc_transpose [32, 32]: max(64, 32) = 64.
  const AccessPattern t = sbuf(DType::kBFloat16, 32, {32});
  EXPECT_EQ(vector_cycles(unary(Opcode::kNcTranspose, t, t), p), 64u);
}

TEST(VectorCost, MemsetZeroBf16IsHalf) {
  auto memset = [](DType dtype, double value) {
    Instruction in =
        instruction(Opcode::kMemset, Engine::kVector, {{Slot::kDst, sbuf(dtype, 128, {1024})}});
    in.fill_value = value;
    return in;
  };
  // zero BF16/FP16: 1024 / 2 = 512; non-zero BF16: 1024; zero FP32: 1024.
  EXPECT_EQ(vector_cycles(memset(DType::kBFloat16, 0), trn2()), 512u);
  EXPECT_EQ(vector_cycles(memset(DType::kFloat16, 0), trn2()), 512u);
  EXPECT_EQ(vector_cycles(memset(DType::kBFloat16, 1), trn2()), 1024u);
  EXPECT_EQ(vector_cycles(memset(DType::kFloat32, 0), trn2()), 1024u);
}

TEST(VectorCost, ScalarTensorTensorFastCase) {
  auto stt = [](DType dtype, AluOp op0, AluOp op1, std::uint32_t n) {
    const AccessPattern t = sbuf(dtype, 128, {n});
    Instruction in = instruction(
        Opcode::kScalarTensorTensor, Engine::kVector,
        {{Slot::kDst, t}, {Slot::kSrc, t}, {Slot::kIn1, t}, {Slot::kAux0, sbuf(dtype, 128, {1})}});
    in.op0 = op0;
    in.op1 = op1;
    return in;
  };
  // BF16, multiply/subtract, N even: N = 1000; N odd: 2 * 1001 = 2002; FP32: 2000; add: 2000.
  EXPECT_EQ(vector_cycles(stt(DType::kBFloat16, AluOp::kMultiply, AluOp::kSubtract, 1000), trn2()),
            1000u);
  EXPECT_EQ(vector_cycles(stt(DType::kBFloat16, AluOp::kMultiply, AluOp::kSubtract, 1001), trn2()),
            2002u);
  EXPECT_EQ(vector_cycles(stt(DType::kFloat32, AluOp::kMultiply, AluOp::kSubtract, 1000), trn2()),
            2000u);
  EXPECT_EQ(vector_cycles(stt(DType::kBFloat16, AluOp::kMultiply, AluOp::kAdd, 1000), trn2()),
            2000u);
}

TEST(VectorCost, SelectCountsStreamsPerMemory) {
  auto select = [](MemoryKind pred_memory) {
    return instruction(Opcode::kSelect, Engine::kVector,
                       {{Slot::kDst, sbuf(DType::kFloat32, 128, {200})},
                        {Slot::kSrc, operand(pred_memory, DType::kUInt8, 128, {200})},
                        {Slot::kIn1, sbuf(DType::kFloat32, 128, {200})},
                        {Slot::kAux0, sbuf(DType::kFloat32, 128, {200})}});
  };
  // Three SBUF streams: 3 * 200 = 600; predicate in PSUM: max(2 SBUF, 1 PSUM) * 200 = 400.
  EXPECT_EQ(vector_cycles(select(MemoryKind::kSbuf), trn2()), 600u);
  EXPECT_EQ(vector_cycles(select(MemoryKind::kPsum), trn2()), 400u);
}

TEST(VectorCost, ExponentialIsFourTimesScalarExpOnNcV4) {
  // N=1024: 1024 * (1.2 GHz / 1.2 GHz) / 4 = 256; reduce_dst adds MIN_II: 256 + 64 = 320.
  const AccessPattern t = sbuf(DType::kBFloat16, 128, {1024});
  Instruction exp = unary(Opcode::kExponential, t, t);
  for (const Params& p : {trn3(), trn4()}) {
    SCOPED_TRACE(p.name);
    EXPECT_EQ(vector_cycles(exp, p), 256u);
    Instruction with_sum = exp;
    with_sum.operand(Slot::kReduceDst) = sbuf(DType::kFloat32, 128, {1});
    EXPECT_EQ(vector_cycles(with_sum, p), 320u);
  }
  // N=100: max(64, 25) = 64.
  const AccessPattern small = sbuf(DType::kBFloat16, 128, {100});
  EXPECT_EQ(vector_cycles(unary(Opcode::kExponential, small, small), trn3()), 64u);
}

TEST(VectorCost, TensorScalarReduceAddsMinIiForTheReadOut) {
  // NKI tensor_scalar_reduce: max(MIN_II, N) + MIN_II.
  // FP32 [128, 2048]: max(64, 2048) + 64 = 2112 cycles on every generation; 2112 / 0.96 GHz =
  // 2200 ns on Trn2.
  const AccessPattern fp32 = sbuf(DType::kFloat32, 128, {2048});
  const AccessPattern column = sbuf(DType::kFloat32, 128, {1});
  Instruction plain = unary(Opcode::kTensorScalar, fp32, fp32);
  Instruction reducing = plain;
  reducing.operand(Slot::kReduceDst) = column;
  reducing.alu = AluOp::kMax;
  for (const Params& p : all_generations()) {
    SCOPED_TRACE(p.name);
    EXPECT_EQ(vector_cycles(plain, p), 2048u);
    EXPECT_EQ(vector_cycles(reducing, p), 2112u);
  }
  EXPECT_NEAR(vector_cost(reducing, trn2()).ns, 2200.0, 1e-9);
  // BF16 in SBUF, unit stride, on Trn2 (4x fast copy): max(64, 1024 / 4) + 64 = 320.
  const AccessPattern bf16 = sbuf(DType::kBFloat16, 128, {1024});
  Instruction fast = unary(Opcode::kTensorScalar, bf16, bf16);
  fast.operand(Slot::kReduceDst) = column;
  EXPECT_EQ(vector_cycles(fast, trn2()), 320u);
  // Below the floor, N = 32: max(64, 32) + 64 = 128; a dependent one adds 100: 228.
  const AccessPattern small = sbuf(DType::kFloat32, 128, {32});
  Instruction short_row = unary(Opcode::kTensorScalar, small, small);
  short_row.operand(Slot::kReduceDst) = column;
  EXPECT_EQ(vector_cycles(short_row, trn2()), 128u);
  EXPECT_EQ(vector_cycles(short_row, trn2(), true), 228u);
}

TEST(VectorCost, DependentInstructionPaysStaticOverhead) {
  // max(64, 1) + 100 = 164 on every generation; 164 / 1.12 GHz = 146.43 ns on Trn1.
  const AccessPattern one = sbuf(DType::kFloat32, 1, {1});
  for (const Params& p : all_generations()) {
    EXPECT_EQ(vector_cycles(unary(Opcode::kTensorCopy, one, one), p, true), 164u) << p.name;
  }
  // Large N: 2048 + 100 = 2148.
  const AccessPattern big = sbuf(DType::kFloat32, 128, {2048});
  EXPECT_EQ(vector_cycles(unary(Opcode::kTensorCopy, big, big), trn2(), true), 2148u);
}

TEST(VectorCost, PartitionCountDoesNotChangeCost) {
  // 1, 64 or 128 partitions of 1000 FP32: max(64, 1000) = 1000.
  for (std::uint32_t partitions : {1u, 64u, 128u}) {
    const AccessPattern t = sbuf(DType::kFloat32, partitions, {1000});
    EXPECT_EQ(vector_cycles(unary(Opcode::kTensorCopy, t, t), trn2()), 1000u) << partitions;
  }
}

TEST(VectorCost, RejectsOpsItDoesNotRun) {
  const AccessPattern t = sbuf(DType::kFloat32, 128, {64});
  Instruction act = unary(Opcode::kActivation, t, t);
  EXPECT_THROW(vector_cost(act, trn2()), std::logic_error);
  Instruction iota = unary(Opcode::kIota, t, t);
  EXPECT_THROW(vector_cost(iota, trn2()), std::logic_error);
  Instruction on_gpsimd = unary(Opcode::kTensorCopy, t, t);
  on_gpsimd.engine = Engine::kGpSimd;
  EXPECT_THROW(vector_cost(on_gpsimd, trn2()), std::logic_error);
}

}  // namespace
}  // namespace trnsim::cost::test
