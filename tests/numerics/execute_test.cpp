// Functional semantics of instructions on a memory image. Inputs are small and chosen so that
// every expected value is worked out by hand (and is exact in the types involved, except where
// a rounding is the point of the test).
#include "numerics/execute.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "numerics/elements.hpp"

namespace trnsim::numerics {
namespace {

using kernel::AccessPattern;
using kernel::ActivationFunc;
using kernel::AluOp;
using kernel::DType;
using kernel::Instruction;
using kernel::MemoryKind;
using kernel::Opcode;
using kernel::ScalarKind;
using kernel::Slot;

/// An SBUF (or PSUM) tile [partitions, columns], row-major in each partition from `offset`.
AccessPattern tile(std::uint32_t partitions, std::uint32_t columns, std::uint64_t offset,
                   DType dtype = DType::kFloat32, MemoryKind memory = MemoryKind::kSbuf) {
  AccessPattern p;
  p.memory = memory;
  p.dtype = dtype;
  p.tensor = 0;
  p.partitions = partitions;
  p.offset = offset;
  p.rank = 1;
  p.sizes[0] = columns;
  p.strides[0] = 1;
  return p;
}

std::vector<double> values_of(const MemoryImage& image, const AccessPattern& pattern) {
  std::vector<double> values;
  gather(image, pattern, values);
  return values;
}

TEST(Execute, DmaCopyFromHbmCastsToTheDestinationType) {
  MemoryImage image;
  AccessPattern hbm;
  hbm.memory = MemoryKind::kHbm;
  hbm.dtype = DType::kFloat32;
  hbm.tensor = 0;
  hbm.offset = 64;
  hbm.rank = 2;
  hbm.sizes = {2, 2};
  hbm.strides = {2, 1};
  scatter(image, hbm, std::vector<double>{1.0, 1.0 + std::ldexp(1.0, -8), -2.0, 3.0});
  Instruction copy;
  copy.opcode = Opcode::kDmaCopy;
  copy.operand(Slot::kSrc) = hbm;
  copy.operand(Slot::kDst) = tile(2, 2, 0, DType::kBFloat16);
  ASSERT_FALSE(unsupported_reason(copy).has_value());
  const ExecutionNotes notes = execute(copy, image);
  EXPECT_FALSE(notes.unwritten.has_value());
  // 1 + 2^-8 is halfway between two bfloat16 values: ties to even gives 1.
  EXPECT_EQ(values_of(image, copy.dst()), (std::vector<double>{1.0, 1.0, -2.0, 3.0}));
}

TEST(Execute, TensorScalarAppliesBothOpsWithPerPartitionOperandsAndReverse) {
  MemoryImage image;
  const AccessPattern src = tile(2, 3, 0);
  scatter(image, src, std::vector<double>{1, 2, 3, 4, 5, 6});
  const AccessPattern column = tile(2, 1, 64);
  scatter(image, column, std::vector<double>{10, 20});
  Instruction op;
  op.opcode = Opcode::kTensorScalar;
  op.operand(Slot::kSrc) = src;
  op.operand(Slot::kDst) = tile(2, 3, 128);
  op.op0 = AluOp::kSubtract;
  op.operand0_kind = ScalarKind::kTensor;
  op.operand(Slot::kAux0) = column;
  op.reverse0 = true;  // a0 - x
  op.op1 = AluOp::kMultiply;
  op.operand1_kind = ScalarKind::kImmediate;
  op.operand1_value = 0.5;
  execute(op, image);
  // partition 0: (10 - x) / 2 for x = 1, 2, 3; partition 1: (20 - x) / 2 for x = 4, 5, 6
  EXPECT_EQ(values_of(image, op.dst()), (std::vector<double>{4.5, 4, 3.5, 8, 7.5, 7}));
}

TEST(Execute, ActivationIsFuncOfScaleTimesXPlusBias) {
  MemoryImage image;
  const AccessPattern src = tile(1, 3, 0);
  scatter(image, src, std::vector<double>{-1, 0, 2});
  Instruction op;
  op.opcode = Opcode::kActivation;
  op.func = ActivationFunc::kRelu;
  op.operand(Slot::kSrc) = src;
  op.operand(Slot::kDst) = tile(1, 3, 64);
  op.scale_kind = ScalarKind::kImmediate;
  op.scale_value = 3;
  op.bias_kind = ScalarKind::kImmediate;
  op.bias_value = -1;
  execute(op, image);
  EXPECT_EQ(values_of(image, op.dst()), (std::vector<double>{0, 0, 5}));  // relu(3x - 1)
  op.func = ActivationFunc::kExp;
  op.scale_value = 1;
  op.bias_value = 0;
  execute(op, image);
  const std::vector<double> e = values_of(image, op.dst());
  EXPECT_EQ(e[1], 1.0);
  EXPECT_EQ(e[2], static_cast<double>(static_cast<float>(std::exp(2.0))));
}

TEST(Execute, MatmulContractsOverPartitionsAndAccumulatesInPsum) {
  MemoryImage image;
  // stationary [K=2, M=2] = [[1, 2], [3, 4]], moving [K=2, N=3] = [[1, 0, 1], [0, 1, 2]]
  const AccessPattern stationary = tile(2, 2, 0, DType::kBFloat16);
  const AccessPattern moving = tile(2, 3, 64, DType::kBFloat16);
  scatter(image, stationary, std::vector<double>{1, 2, 3, 4});
  scatter(image, moving, std::vector<double>{1, 0, 1, 0, 1, 2});
  Instruction mm;
  mm.opcode = Opcode::kNcMatmul;
  mm.operand(Slot::kStationary) = stationary;
  mm.operand(Slot::kSrc) = moving;
  mm.operand(Slot::kDst) = tile(2, 3, 0, DType::kFloat32, MemoryKind::kPsum);
  execute(mm, image);
  // stationary^T = [[1, 3], [2, 4]]; times moving: [[1, 3, 7], [2, 4, 10]]
  EXPECT_EQ(values_of(image, mm.dst()), (std::vector<double>{1, 3, 7, 2, 4, 10}));
  mm.accumulate = true;
  execute(mm, image);
  EXPECT_EQ(values_of(image, mm.dst()), (std::vector<double>{2, 6, 14, 4, 8, 20}));
}

TEST(Execute, TransposeAndReduce) {
  MemoryImage image;
  const AccessPattern src = tile(2, 3, 0);
  scatter(image, src, std::vector<double>{1, 2, 3, 4, 5, 6});
  Instruction t;
  t.opcode = Opcode::kNcTranspose;
  t.operand(Slot::kSrc) = src;
  t.operand(Slot::kDst) = tile(3, 2, 0, DType::kFloat32, MemoryKind::kPsum);
  execute(t, image);
  EXPECT_EQ(values_of(image, t.dst()), (std::vector<double>{1, 4, 2, 5, 3, 6}));

  // [2 partitions, 2 x 3] reduced over the last free axis with max, negated.
  AccessPattern wide = tile(2, 6, 0);
  wide.rank = 2;
  wide.sizes = {2, 3};
  wide.strides = {3, 1};
  Instruction r;
  r.opcode = Opcode::kTensorReduce;
  r.alu = AluOp::kMax;
  r.reduce_axes = 0b10;
  r.negate = true;
  r.operand(Slot::kSrc) = wide;
  r.operand(Slot::kDst) = tile(2, 2, 256);
  scatter(image, wide, std::vector<double>{1, 5, 2, 7, 0, 3, -1, -2, -3, 4, 4, 4});
  execute(r, image);
  EXPECT_EQ(values_of(image, r.dst()), (std::vector<double>{-5, -7, 1, -4}));
}

TEST(Execute, NotesTheFirstUnwrittenReadAndTheFirstNonFiniteResult) {
  MemoryImage image;
  const AccessPattern a = tile(2, 2, 0);
  const AccessPattern b = tile(2, 2, 64);
  scatter(image, a, std::vector<double>{1, 0, 2, 3});
  Instruction div;
  div.opcode = Opcode::kTensorTensor;
  div.alu = AluOp::kDivide;
  div.operand(Slot::kSrc) = a;
  div.operand(Slot::kIn1) = b;  // never written: reads as zeros
  div.operand(Slot::kDst) = tile(2, 2, 128);
  const ExecutionNotes notes = execute(div, image);
  ASSERT_TRUE(notes.unwritten.has_value());
  EXPECT_EQ(notes.unwritten_slot, Slot::kIn1);
  EXPECT_EQ(notes.unwritten->index, 0u);
  ASSERT_TRUE(notes.first_non_finite.has_value());
  EXPECT_EQ(*notes.first_non_finite, 0u);  // 1 / 0 = inf

  // A NaN that was already in an input is not a first appearance.
  scatter(image, b, std::vector<double>{1, 1, 1, 1});
  scatter(image, a, std::vector<double>{NAN, 1, 1, 1});
  EXPECT_FALSE(execute(div, image).first_non_finite.has_value());
}

TEST(Execute, ReductionsIntoReduceDstAndAcrossPartitions) {
  MemoryImage image;
  const AccessPattern src = tile(2, 3, 0);
  scatter(image, src, std::vector<double>{1, 2, 3, -1, 0, 4});
  Instruction act;
  act.opcode = Opcode::kActivation;
  act.func = ActivationFunc::kSquare;
  act.operand(Slot::kSrc) = src;
  act.operand(Slot::kDst) = tile(2, 3, 64);
  act.operand(Slot::kReduceDst) = tile(2, 1, 128);
  execute(act, image);
  EXPECT_EQ(values_of(image, act.operand(Slot::kReduceDst)), (std::vector<double>{14, 17}));

  Instruction ts;
  ts.opcode = Opcode::kTensorScalar;
  ts.op0 = AluOp::kAdd;
  ts.operand0_kind = ScalarKind::kImmediate;
  ts.operand0_value = 1;
  ts.alu = AluOp::kMax;  // reduce_op
  ts.operand(Slot::kSrc) = src;
  ts.operand(Slot::kDst) = tile(2, 3, 64);
  ts.operand(Slot::kReduceDst) = tile(2, 1, 128);
  execute(ts, image);
  EXPECT_EQ(values_of(image, ts.operand(Slot::kReduceDst)), (std::vector<double>{4, 5}));

  Instruction pr;
  pr.opcode = Opcode::kTensorPartitionReduce;
  pr.alu = AluOp::kAverage;
  pr.operand(Slot::kSrc) = src;
  pr.operand(Slot::kDst) = tile(1, 3, 256);
  execute(pr, image);
  EXPECT_EQ(values_of(image, pr.dst()), (std::vector<double>{0, 1, 3.5}));
}

TEST(Execute, ScalarTensorTensorScanAndSelect) {
  MemoryImage image;
  const AccessPattern data = tile(1, 4, 0);
  const AccessPattern in1 = tile(1, 4, 64);
  scatter(image, data, std::vector<double>{1, 2, 3, 4});
  scatter(image, in1, std::vector<double>{10, 20, 30, 40});
  Instruction stt;
  stt.opcode = Opcode::kScalarTensorTensor;
  stt.op0 = AluOp::kMultiply;
  stt.operand0_kind = ScalarKind::kImmediate;
  stt.operand0_value = 2;
  stt.op1 = AluOp::kSubtract;
  stt.operand(Slot::kSrc) = data;
  stt.operand(Slot::kIn1) = in1;
  stt.operand(Slot::kDst) = tile(1, 4, 128);
  execute(stt, image);  // 2x - in1
  EXPECT_EQ(values_of(image, stt.dst()), (std::vector<double>{-8, -16, -24, -32}));

  Instruction scan;
  scan.opcode = Opcode::kTensorTensorScan;
  scan.op0 = AluOp::kMultiply;
  scan.op1 = AluOp::kAdd;
  scan.operand0_kind = ScalarKind::kImmediate;
  scan.operand0_value = 1;  // r[-1]
  scan.operand(Slot::kSrc) = data;
  scan.operand(Slot::kIn1) = in1;
  scan.operand(Slot::kDst) = tile(1, 4, 128);
  execute(scan, image);  // r = x * r + in1: 1*1+10 = 11, 2*11+20 = 42, 3*42+30 = 156, 4*156+40
  EXPECT_EQ(values_of(image, scan.dst()), (std::vector<double>{11, 42, 156, 664}));

  const AccessPattern pred = tile(1, 4, 192);
  scatter(image, pred, std::vector<double>{1, 0, 0, 2});
  Instruction select;
  select.opcode = Opcode::kSelect;
  select.operand(Slot::kSrc) = pred;
  select.operand0_kind = ScalarKind::kTensor;
  select.operand(Slot::kIn1) = data;  // on_true
  select.operand1_kind = ScalarKind::kImmediate;
  select.operand1_value = -5;  // on_false
  select.operand(Slot::kDst) = tile(1, 4, 256);
  execute(select, image);
  EXPECT_EQ(values_of(image, select.dst()), (std::vector<double>{1, -5, -5, 4}));
}

TEST(Execute, BatchNormStatisticsAndAggregation) {
  MemoryImage image;
  // One partition, 6 elements: even ones 1, 3, 5 (mean 3, squares 8), odd 2, 6, 10 (mean 6,
  // squares 32).
  const AccessPattern src = tile(1, 6, 0);
  scatter(image, src, std::vector<double>{1, 2, 3, 6, 5, 10});
  Instruction stats;
  stats.opcode = Opcode::kBnStats;
  stats.operand(Slot::kSrc) = src;
  stats.operand(Slot::kDst) = tile(1, 6, 64);
  execute(stats, image);
  EXPECT_EQ(values_of(image, stats.dst()), (std::vector<double>{3, 3, 8, 3, 6, 32}));
  Instruction aggr;
  aggr.opcode = Opcode::kBnAggr;
  aggr.operand(Slot::kSrc) = stats.dst();
  aggr.operand(Slot::kDst) = tile(1, 2, 128);
  execute(aggr, image);
  // All six: mean 4.5; squares about it 8 + 32 + 6 * 2.25 = 53.5; variance 53.5 / 6.
  EXPECT_EQ(values_of(image, aggr.dst()), (std::vector<double>{4.5, static_cast<float>(53.5 / 6)}));
}

TEST(Execute, DmaTransposeExponentialAndDoubleRowMatmul) {
  MemoryImage image;
  const AccessPattern src = tile(1, 6, 0, DType::kBFloat16);
  scatter(image, src, std::vector<double>{1, 2, 3, 4, 5, 6});
  AccessPattern as_2x3 = src;  // [1 partition, 2, 3]: size-1 dimensions are dropped
  as_2x3.rank = 2;
  as_2x3.sizes = {2, 3};
  as_2x3.strides = {3, 1};
  Instruction t;
  t.opcode = Opcode::kDmaTranspose;
  t.operand(Slot::kSrc) = as_2x3;
  t.operand(Slot::kDst) = tile(3, 2, 64, DType::kBFloat16);
  execute(t, image);
  EXPECT_EQ(values_of(image, t.dst()), (std::vector<double>{1, 4, 2, 5, 3, 6}));

  Instruction e;
  e.opcode = Opcode::kExponential;
  e.operand(Slot::kSrc) = tile(1, 2, 128);
  scatter(image, e.src(), std::vector<double>{2, 3});
  e.operand0_kind = ScalarKind::kImmediate;
  e.operand0_value = 2;  // max
  e.operand(Slot::kDst) = tile(1, 2, 192);
  e.operand(Slot::kReduceDst) = tile(1, 1, 256);
  execute(e, image);
  const float e1 = static_cast<float>(std::exp(1.0));
  EXPECT_EQ(values_of(image, e.dst()), (std::vector<double>{1, e1}));
  EXPECT_EQ(values_of(image, e.operand(Slot::kReduceDst)), (std::vector<double>{1.0f + e1}));

  // double_row: stationary [1 partition, 2 rows, M = 1], moving [1, 2, N = 2]: K = 2.
  Instruction mm;
  mm.opcode = Opcode::kNcMatmul;
  mm.double_row = true;
  mm.operand(Slot::kStationary) = tile(1, 2, 320, DType::kFloat8E4M3);
  mm.operand(Slot::kSrc) = tile(1, 4, 384, DType::kFloat8E4M3);
  scatter(image, mm.operand(Slot::kStationary), std::vector<double>{2, 3});
  scatter(image, mm.src(), std::vector<double>{1, 2, 4, 8});  // rows [1, 2] and [4, 8]
  mm.operand(Slot::kDst) = tile(1, 2, 0, DType::kFloat32, MemoryKind::kPsum);
  execute(mm, image);
  EXPECT_EQ(values_of(image, mm.dst()), (std::vector<double>{2 * 1 + 3 * 4, 2 * 2 + 3 * 8}));
}

TEST(Execute, IotaAndAffineSelectEvaluateTheirPatternPerElement) {
  MemoryImage image;
  // dst [2 partitions, 2 x 3]: free indices f0 in 0..1, f1 in 0..2, f = 3 f0 + f1.
  AccessPattern dst = tile(2, 6, 0);
  dst.rank = 2;
  dst.sizes = {2, 3};
  dst.strides = {3, 1};
  const PatternFunction pattern = [](std::uint32_t p, std::uint64_t f, const std::uint64_t* free) {
    return static_cast<std::int64_t>(100 * p + 10 * free[0] + free[1]) -
           static_cast<std::int64_t>(f);  // 100 p + 7 f0: f = 3 f0 + f1
  };
  Instruction iota;
  iota.opcode = Opcode::kIota;
  iota.operand(Slot::kDst) = dst;
  execute(iota, image, pattern);
  EXPECT_EQ(values_of(image, dst),
            (std::vector<double>{0, 0, 0, 7, 7, 7, 100, 100, 100, 107, 107, 107}));
  // Causal mask: keep src where p - f >= 0, else fill.
  const AccessPattern src = tile(2, 3, 128);
  scatter(image, src, std::vector<double>{1, 2, 3, 4, 5, 6});
  Instruction select;
  select.opcode = Opcode::kAffineSelect;
  select.cmp = kernel::CompareOp::kGe;
  select.fill_value = -9;
  select.operand(Slot::kSrc) = src;
  select.operand(Slot::kDst) = tile(2, 3, 256);
  execute(select, image, [](std::uint32_t p, std::uint64_t f, const std::uint64_t*) {
    return static_cast<std::int64_t>(p) - static_cast<std::int64_t>(f);
  });
  EXPECT_EQ(values_of(image, select.dst()), (std::vector<double>{1, -9, -9, 4, 5, -9}));
}

AccessPattern hbm_vector(std::uint64_t address, std::uint32_t count) {
  AccessPattern p;
  p.memory = MemoryKind::kHbm;
  p.dtype = DType::kFloat32;
  p.tensor = 0;
  p.offset = address;
  p.rank = 1;
  p.sizes[0] = count;
  p.strides[0] = 1;
  return p;
}

TEST(Execute, CollectivesCombineTheRanksInGroupOrder) {
  MemoryImage image;
  // Three ranks, src of rank r at 1000 r: [r + 1, 10 (r + 1), 100 (r + 1)].
  std::vector<Instruction> ranks(3);
  for (std::uint32_t r = 0; r < 3; ++r) {
    ranks[r].opcode = Opcode::kReduceScatter;
    ranks[r].alu = AluOp::kAdd;
    ranks[r].operand(Slot::kSrc) = hbm_vector(1000 * r, 3);
    ranks[r].operand(Slot::kDst) = hbm_vector(1000 * r + 500, 1);
    const double v = r + 1;
    scatter(image, ranks[r].src(), std::vector<double>{v, 10 * v, 100 * v});
  }
  const std::vector<const Instruction*> members = {&ranks[0], &ranks[1], &ranks[2]};
  execute_collective(members, image);
  // The sum is [6, 60, 600]; rank r gets chunk r.
  EXPECT_EQ(values_of(image, ranks[0].dst()), (std::vector<double>{6}));
  EXPECT_EQ(values_of(image, ranks[2].dst()), (std::vector<double>{600}));

  for (std::uint32_t r = 0; r < 3; ++r) {
    ranks[r].opcode = Opcode::kAllToAll;
    ranks[r].operand(Slot::kDst) = hbm_vector(1000 * r + 600, 3);
  }
  execute_collective(members, image);
  // Chunk j of rank i's dst = chunk i of rank j's src: rank 1 gets [10, 20, 30].
  EXPECT_EQ(values_of(image, ranks[1].dst()), (std::vector<double>{10, 20, 30}));

  for (std::uint32_t r = 0; r < 3; ++r) {
    ranks[r].opcode = Opcode::kAllReduce;
    ranks[r].alu = AluOp::kMax;
  }
  execute_collective(members, image);
  EXPECT_EQ(values_of(image, ranks[0].dst()), (std::vector<double>{3, 30, 300}));

  Instruction send;
  send.opcode = Opcode::kSend;
  send.operand(Slot::kSrc) = hbm_vector(0, 3);
  Instruction recv;
  recv.opcode = Opcode::kRecv;
  recv.operand(Slot::kDst) = hbm_vector(4000, 3);
  execute_transfer(send, recv, image);
  EXPECT_EQ(values_of(image, recv.dst()), (std::vector<double>{1, 10, 100}));
}

TEST(Execute, MxMatmulDequantisesEachGroupWithItsScale) {
  MemoryImage image;
  // One scaling group: 8 partitions of float8_e4m3fn_x4 containers, K = 32 values. Partition 0
  // holds K values 0-3: stationary [1, 2, 0, 0] (codes 0x38, 0x40), moving [1, 1, 0, 0].
  AccessPattern stationary = tile(8, 1, 0, DType::kFloat8E4M3FnX4);
  AccessPattern moving = tile(8, 1, 64, DType::kFloat8E4M3FnX4);
  std::vector<std::uint8_t> st_bytes(32, 0);
  std::vector<std::uint8_t> mv_bytes(32, 0);
  st_bytes[0] = 0x38;
  st_bytes[1] = 0x40;
  mv_bytes[0] = 0x38;
  mv_bytes[1] = 0x38;
  scatter_bytes(image, stationary, st_bytes);
  scatter_bytes(image, moving, mv_bytes);
  // Scales: group 0 in partition 0 of each scale tile: 2^(128 - 127) and 2^(127 - 127).
  const AccessPattern st_scale = tile(1, 1, 128, DType::kUInt8);
  const AccessPattern mv_scale = tile(1, 1, 192, DType::kUInt8);
  scatter(image, st_scale, std::vector<double>{128});
  scatter(image, mv_scale, std::vector<double>{127});
  Instruction mm;
  mm.opcode = Opcode::kNcMatmulMx;
  mm.operand(Slot::kStationary) = stationary;
  mm.operand(Slot::kSrc) = moving;
  mm.operand(Slot::kAux0) = st_scale;
  mm.operand(Slot::kAux1) = mv_scale;
  mm.operand(Slot::kDst) = tile(1, 1, 0, DType::kFloat32, MemoryKind::kPsum);
  ASSERT_FALSE(unsupported_reason(mm).has_value());
  execute(mm, image);
  EXPECT_EQ(values_of(image, mm.dst()), (std::vector<double>{2 * (1 * 1 + 2 * 1)}));
  // float4_e2m1fn: nibble 0b0111 is 1.5 x 2^2 = 6, 0b1001 is -0.5.
  EXPECT_EQ(mx_value(DType::kFloat4E2M1FnX4, 0x97u, 0), 6.0);
  EXPECT_EQ(mx_value(DType::kFloat4E2M1FnX4, 0x97u, 1), -0.5);
}

TEST(Execute, OpsWithoutAFunctionalModelSayWhich) {
  Instruction op;
  op.opcode = Opcode::kNcMatmul;
  op.is_transpose = true;
  EXPECT_EQ(unsupported_reason(op), std::optional<std::string>("nc_matmul with is_transpose"));
  op.opcode = Opcode::kActivation;
  op.func = ActivationFunc::kPrelu;
  EXPECT_EQ(unsupported_reason(op), std::optional<std::string>("activation function prelu"));
}

}  // namespace
}  // namespace trnsim::numerics
