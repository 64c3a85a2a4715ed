// Contract tests of the ScalarE (hardware-facts.md §5) and GpSimdE (§6) cost rules, the engine
// dispatch and the placeholder DMA time (§9). Expected values are worked out by hand in the
// comments.
#include <gtest/gtest.h>

#include <stdexcept>

#include "core/cost/cost_model.hpp"
#include "cost_test_support.hpp"

namespace trnsim::cost::test {
namespace {

Instruction activation(const AccessPattern& src, const AccessPattern& dst) {
  Instruction in =
      instruction(Opcode::kActivation, Engine::kScalar, {{Slot::kDst, dst}, {Slot::kSrc, src}});
  in.func = kernel::ActivationFunc::kExp;
  return in;
}

TEST(ScalarCost, DependentOneElementActivationMatchesMeasured189Ns) {
  // hardware-facts.md §5: dependent back-to-back 1-element activations, II = 189 ns = 264 cycles
  // (NC-v2): max(64, 1) + 200 = 264 cycles; 264 / 1.4 GHz = 188.57 ns.
  const AccessPattern one = sbuf(DType::kFloat32, 1, {1});
  CostContext dependent;
  dependent.depends_on_recent = true;
  const EngineCost cost = scalar_cost(activation(one, one), trn1(), dependent);
  EXPECT_EQ(cost.cycles, 264u);
  EXPECT_NEAR(cost.ns, 188.571, 1e-3);
  // Independent: MIN_II only, 64.
  EXPECT_EQ(scalar_cost(activation(one, one), trn1()).cycles, 64u);
}

TEST(ScalarCost, ActivationIsFreeSizeWithOrWithoutScaleAndBias) {
  const AccessPattern t = sbuf(DType::kBFloat16, 128, {2048});
  Instruction plain = activation(t, t);
  Instruction fused = plain;
  fused.scale_kind = kernel::ScalarKind::kTensor;
  fused.operand(Slot::kAux1) = sbuf(DType::kFloat32, 128, {1});
  fused.bias_kind = kernel::ScalarKind::kTensor;
  fused.operand(Slot::kAux0) = sbuf(DType::kFloat32, 128, {1});
  // max(64, 2048) = 2048 on every generation (no activation perf mode is documented).
  for (const Params& p : all_generations()) {
    SCOPED_TRACE(p.name);
    EXPECT_EQ(scalar_cost(plain, p).cycles, 2048u);
    EXPECT_EQ(scalar_cost(fused, p).cycles, 2048u);
  }
}

TEST(ScalarCost, ReduceAddsAccumulatorReadOutAndTableSwitchAddsReload) {
  const AccessPattern t = sbuf(DType::kFloat32, 128, {2048});
  Instruction reduce = activation(t, t);
  reduce.operand(Slot::kReduceDst) = sbuf(DType::kFloat32, 128, {1});
  // activation_reduce: max(64, 2048) + 64 = 2112.
  EXPECT_EQ(scalar_cost(reduce, trn2()).cycles, 2112u);
  // Table switch: 2048 + 500 = 2548.
  CostContext switch_table;
  switch_table.activation_table_switch = true;
  EXPECT_EQ(scalar_cost(activation(t, t), trn2(), switch_table).cycles, 2548u);
}

TEST(ScalarCost, StridedInputHalvesTheRate) {
  // FP32 source 8 elements apart = 32 B > 16 B: 2 * 1000 = 2000.
  EXPECT_EQ(scalar_cost(activation(sbuf_strided(DType::kFloat32, 128, 1000, 8),
                                   sbuf(DType::kFloat32, 128, {1000})),
                        trn2())
                .cycles,
            2000u);
}

TEST(ScalarCost, CopyAndTensorScalarTwiceAsFastForBf16OnNcV4) {
  const AccessPattern bf = sbuf(DType::kBFloat16, 128, {2048});
  const AccessPattern f32 = sbuf(DType::kFloat32, 128, {2048});
  const Instruction copy =
      instruction(Opcode::kTensorCopy, Engine::kScalar, {{Slot::kDst, bf}, {Slot::kSrc, bf}});
  const Instruction scalar_op =
      instruction(Opcode::kTensorScalar, Engine::kScalar, {{Slot::kDst, bf}, {Slot::kSrc, bf}});
  const Instruction copy_f32 =
      instruction(Opcode::kTensorCopy, Engine::kScalar, {{Slot::kDst, f32}, {Slot::kSrc, f32}});
  // NC-v3 tensor_copy: max(64, 2048) = 2048. NC-v4: BF16 2048 / 2 = 1024, FP32 2048.
  EXPECT_EQ(scalar_cost(copy, trn2()).cycles, 2048u);
  for (const Params& p : {trn3(), trn4()}) {
    SCOPED_TRACE(p.name);
    EXPECT_EQ(scalar_cost(copy, p).cycles, 1024u);
    EXPECT_EQ(scalar_cost(scalar_op, p).cycles, 1024u);
    EXPECT_EQ(scalar_cost(copy_f32, p).cycles, 2048u);
  }
  Instruction memset = copy;
  memset.opcode = Opcode::kMemset;
  EXPECT_THROW(scalar_cost(memset, trn3()), std::logic_error);
}

TEST(GpSimdCost, StartCostPlusOneCyclePerElementPerStream) {
  const AccessPattern t512 = sbuf(DType::kInt32, 128, {512});
  const AccessPattern t1024 = sbuf(DType::kFloat32, 128, {1024});
  const AccessPattern t100 = sbuf(DType::kFloat32, 128, {100});
  // iota 150 + 512 = 662 cycles; 662 / 1.4 GHz = 472.857 ns on Trn1.
  const Instruction iota = instruction(Opcode::kIota, Engine::kGpSimd, {{Slot::kDst, t512}});
  EXPECT_EQ(gpsimd_cost(iota, trn1()).cycles, 662u);
  EXPECT_NEAR(gpsimd_cost(iota, trn1()).ns, 472.857, 1e-3);
  for (const Params& p : all_generations()) {
    SCOPED_TRACE(p.name);
    EXPECT_EQ(gpsimd_cost(iota, p).cycles, 662u);
    // affine_select 150 + 1024 = 1174.
    EXPECT_EQ(gpsimd_cost(instruction(Opcode::kAffineSelect, Engine::kGpSimd,
                                      {{Slot::kDst, t1024}, {Slot::kSrc, t1024}}),
                          p)
                  .cycles,
              1174u);
    // tensor_tensor: two input streams, 150 + 2 * 100 = 350.
    EXPECT_EQ(gpsimd_cost(instruction(Opcode::kTensorTensor, Engine::kGpSimd,
                                      {{Slot::kDst, t100}, {Slot::kSrc, t100}, {Slot::kIn1, t100}}),
                          p)
                  .cycles,
              350u);
    // tensor_partition_reduce (assumed two passes): 150 + 2 * 512 = 1174.
    EXPECT_EQ(
        gpsimd_cost(instruction(Opcode::kTensorPartitionReduce, Engine::kGpSimd,
                                {{Slot::kDst, sbuf(DType::kInt32, 1, {512})}, {Slot::kSrc, t512}}),
                    p)
            .cycles,
        1174u);
    // memset 150 + 64 = 214, tensor_copy 150 + 100 = 250, on one partition as on 128.
    EXPECT_EQ(gpsimd_cost(instruction(Opcode::kMemset, Engine::kGpSimd,
                                      {{Slot::kDst, sbuf(DType::kFloat32, 1, {64})}}),
                          p)
                  .cycles,
              214u);
    EXPECT_EQ(gpsimd_cost(instruction(Opcode::kTensorCopy, Engine::kGpSimd,
                                      {{Slot::kDst, t100}, {Slot::kSrc, t100}}),
                          p)
                  .cycles,
              250u);
  }
  EXPECT_THROW(gpsimd_cost(instruction(Opcode::kReciprocal, Engine::kGpSimd,
                                       {{Slot::kDst, t100}, {Slot::kSrc, t100}}),
                           trn2()),
               std::logic_error);
}

TEST(EngineCost, DispatchesOnTheInstructionsEngine) {
  const AccessPattern t = sbuf(DType::kFloat32, 128, {100});
  const Instruction copy_vector =
      instruction(Opcode::kTensorCopy, Engine::kVector, {{Slot::kDst, t}, {Slot::kSrc, t}});
  Instruction copy_gpsimd = copy_vector;
  copy_gpsimd.engine = Engine::kGpSimd;
  // VectorE max(64, 100) = 100; GpSimd 150 + 100 = 250; TensorE bf16 matmul 512.
  EXPECT_EQ(engine_cost(copy_vector, trn2()).cycles, 100u);
  EXPECT_EQ(engine_cost(copy_gpsimd, trn2()).cycles, 250u);
  EXPECT_EQ(engine_cost(matmul(DType::kBFloat16, 128, 128, 512), trn2()).cycles, 512u);
  Instruction dma = instruction(Opcode::kDmaCopy, Engine::kDma, {{Slot::kDst, t}, {Slot::kSrc, t}});
  EXPECT_THROW(engine_cost(dma, trn2()), std::logic_error);
}

TEST(InstantCost, IsOneCycleOfTheInstructionsEngineClock) {
  const AccessPattern t = sbuf(DType::kFloat32, 128, {100});
  const Instruction copy_vector =
      instruction(Opcode::kTensorCopy, Engine::kVector, {{Slot::kDst, t}, {Slot::kSrc, t}});
  Instruction copy_gpsimd = copy_vector;
  copy_gpsimd.engine = Engine::kGpSimd;
  // trn2: VectorE at 0.96 GHz, GpSimdE at 1.2 GHz, TensorE at 2.4 GHz (configs/trn2.json).
  EXPECT_EQ(instant_cost(copy_vector, trn2()).cycles, 1u);
  EXPECT_NEAR(instant_cost(copy_vector, trn2()).ns, 1 / 0.96, 1e-12);
  EXPECT_NEAR(instant_cost(copy_gpsimd, trn2()).ns, 1 / 1.2, 1e-12);
  const EngineCost matmul_cost = instant_cost(matmul(DType::kBFloat16, 128, 128, 512), trn2());
  EXPECT_EQ(matmul_cost.cycles, 1u);
  EXPECT_NEAR(matmul_cost.ns, 1 / 2.4, 1e-12);
  EXPECT_EQ(matmul_cost.load_stationary_cycles, 0u);
  EXPECT_EQ(matmul_cost.latency_cycles, 0u);
  Instruction dma = instruction(Opcode::kDmaCopy, Engine::kDma, {{Slot::kDst, t}, {Slot::kSrc, t}});
  EXPECT_THROW(instant_cost(dma, trn2()), std::logic_error);
}

}  // namespace
}  // namespace trnsim::cost::test
