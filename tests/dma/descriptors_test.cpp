// TransferPlan and PacketCursor: how a DMA splits over engines, descriptors and packets
// (hardware-facts.md §9.2), worked out by hand. Params are the Trn2 defaults of config::Params.
#include "dma/descriptors.hpp"

#include <gtest/gtest.h>

#include "address/address_map.hpp"
#include "dma_test_support.hpp"

namespace trnsim::dma::test {
namespace {

const std::uint64_t kHbm = address::encode(MemoryKind::kHbm, 0, 0);
const std::uint64_t kSbuf = address::encode(MemoryKind::kSbuf, 0, 0);

TransferPlan plan(const Instruction& instruction, const config::Params& params = {}) {
  const std::uint64_t src = instruction.src().on_chip() ? kSbuf : kHbm;
  const std::uint64_t dst = instruction.dst().on_chip() ? kSbuf : kHbm;
  return plan_transfer(instruction, params, src, dst);
}

TEST(TransferPlan, SingleEngineCalibrationCopy) {
  // T4: 4 partitions x 4096 bf16 from HBM: 4 rows, 8 rows per engine -> engine 0 only, one
  // descriptor per partition (8 KiB, contiguous on both sides).
  const TransferPlan p = plan(load(4, 8192, 0));
  EXPECT_EQ(p.rows, 4u);
  EXPECT_EQ(p.rows_per_engine, 8u);
  EXPECT_EQ(p.engines, 1u);
  EXPECT_EQ(p.descriptors_per_block, 1u);
  EXPECT_EQ(p.descriptors_of(0), 4u);
  EXPECT_EQ(p.descriptors_of(1), 0u);
  EXPECT_EQ(p.bytes, 32768u);
  // Packets of 4 KiB: 2 per descriptor; partition r's descriptor reads HBM [8192 r, 8192 r + 8K)
  // and writes SBUF partition r (address r * partition_bytes).
  PacketCursor cursor(p, 0);
  const config::Params defaults;
  for (std::uint64_t r = 0; r < 4; ++r) {
    for (std::uint64_t half = 0; half < 2; ++half) {
      ASSERT_FALSE(cursor.done());
      const Packet packet = cursor.next(p);
      EXPECT_EQ(packet.starts_descriptor, half == 0);
      EXPECT_EQ(packet.src_bytes, 4096u);
      EXPECT_EQ(packet.src_address, kHbm + 8192 * r + 4096 * half);
      EXPECT_EQ(packet.dst_address, kSbuf + r * defaults.sbuf.partition_bytes + 4096 * half);
    }
  }
  EXPECT_TRUE(cursor.done());
  EXPECT_TRUE(PacketCursor(p, 1).done());
}

TEST(TransferPlan, FullTileIsSixteenEnginesOfEightDescriptors) {
  // hardware-facts.md §9.2: a [128, 512] FP32 load is 16 transfers x 8 buffers.
  const TransferPlan p =
      plan(dma_copy(sbuf(DType::kFloat32, 128, {512}), hbm(DType::kFloat32, {128, 512})));
  EXPECT_EQ(p.engines, 16u);
  for (std::uint32_t e = 0; e < 16; ++e) EXPECT_EQ(p.descriptors_of(e), 8u);
  // Engine 5 owns partitions 40..47: its first packet is row 40 = HBM byte 40 * 2048.
  PacketCursor cursor(p, 5);
  EXPECT_EQ(cursor.next(p).src_address, kHbm + 40 * 2048);
}

TEST(TransferPlan, NonContiguousFreePatternNeedsADescriptorPerRun) {
  // SBUF free pattern [4, 64] with stride 128 between the 4 runs of 64 FP32: 4 descriptors per
  // partition even though the HBM side [128, 256] is contiguous.
  AccessPattern dst = sbuf(DType::kFloat32, 128, {4, 64});
  dst.strides[0] = 128;
  const TransferPlan p = plan(dma_copy(dst, hbm(DType::kFloat32, {128, 4, 64})));
  EXPECT_EQ(p.descriptors_per_block, 4u);
  EXPECT_EQ(p.descriptors_of(0), 32u);
  PacketCursor cursor(p, 0);
  cursor.next(p);
  const Packet second = cursor.next(p);  // run 1 of partition 0: 128 elements further in SBUF
  EXPECT_TRUE(second.starts_descriptor);
  EXPECT_EQ(second.dst_address, kSbuf + 128 * 4);
  EXPECT_EQ(second.src_address, kHbm + 64 * 4);
}

TEST(TransferPlan, HbmSliceWithRowStrideIsOneDescriptorPerRow) {
  // Columns 0..511 of a [128, 1024] BF16 HBM tensor: each row is one run of 1 KiB; rows are 2 KiB
  // apart in HBM.
  AccessPattern src = hbm(DType::kBFloat16, {128, 512}, 1 << 20);
  src.strides[0] = 1024;
  const TransferPlan p = plan(dma_copy(sbuf(DType::kBFloat16, 128, {512}), src));
  EXPECT_EQ(p.descriptors_per_block, 1u);
  PacketCursor cursor(p, 0);
  cursor.next(p);
  const Packet row1 = cursor.next(p);
  EXPECT_EQ(row1.src_address, kHbm + (1 << 20) + 2048);
  EXPECT_EQ(row1.src_bytes, 1024u);
}

TEST(TransferPlan, PartitionAxisInsideTheShape) {
  // Logical [2, 64 partitions, 32]: outer 2, rows 64, inner 32; engine 0 owns partitions 0..7 of
  // both outer blocks: 2 x 8 descriptors.
  AccessPattern dst = sbuf(DType::kFloat32, 64, {2, 32});
  dst.partition_axis = 1;
  const TransferPlan p = plan(dma_copy(dst, hbm(DType::kFloat32, {2, 64, 32})));
  EXPECT_EQ(p.outer, 2u);
  EXPECT_EQ(p.rows, 64u);
  EXPECT_EQ(p.inner, 32u);
  EXPECT_EQ(p.engines, 8u);
  EXPECT_EQ(p.descriptors_of(0), 16u);
  // After partitions 0..7 of outer block 0 comes outer block 1, partition 0: logical element
  // (1, 0, 0) = HBM byte 64 * 32 * 4 = 8192, SBUF free element 32 of partition 0.
  PacketCursor cursor(p, 0);
  for (int i = 0; i < 8; ++i) cursor.next(p);
  const Packet next = cursor.next(p);
  EXPECT_EQ(next.src_address, kHbm + 8192);
  EXPECT_EQ(next.dst_address, kSbuf + 32 * 4);
}

TEST(TransferPlan, HbmToHbmSplitsTheOuterDimension) {
  const TransferPlan p =
      plan(dma_copy(hbm(DType::kFloat32, {16, 4096}, 1 << 24), hbm(DType::kFloat32, {16, 4096})));
  EXPECT_EQ(p.rows, 16u);
  EXPECT_EQ(p.rows_per_engine, 1u);
  EXPECT_EQ(p.engines, 16u);
  EXPECT_EQ(p.descriptors_of(15), 1u);
  // A 1-D copy has one row: one engine.
  EXPECT_EQ(
      plan(dma_copy(hbm(DType::kFloat32, {4096}, 1 << 24), hbm(DType::kFloat32, {4096}))).engines,
      1u);
}

TEST(TransferPlan, CastMovesTheLargerElement) {
  // FP32 HBM -> BF16 SBUF: the engine moves 4 B per element; a 4 KiB packet is 1024 elements,
  // 4096 B read and 2048 B written.
  const TransferPlan p =
      plan(dma_copy(sbuf(DType::kBFloat16, 128, {2048}), hbm(DType::kFloat32, {128, 2048})));
  EXPECT_EQ(p.moved_element_bytes, 4u);
  EXPECT_EQ(p.packet_elements, 1024u);
  EXPECT_EQ(p.bytes, 128u * 2048 * 4);
  PacketCursor cursor(p, 0);
  const Packet packet = cursor.next(p);
  EXPECT_EQ(packet.src_bytes, 4096u);
  EXPECT_EQ(packet.dst_bytes, 2048u);
  EXPECT_EQ(packet.moved_bytes, 4096u);
}

TEST(TransferPlan, TransposeRunsAtItsEfficiency) {
  Instruction transpose =
      dma_copy(sbuf(DType::kBFloat16, 128, {128}), hbm(DType::kBFloat16, {128, 128}));
  transpose.opcode = Opcode::kDmaTranspose;
  const config::Params params;
  EXPECT_DOUBLE_EQ(plan(transpose).efficiency, params.dma.transpose_efficiency_hbm);
  transpose.operand(kernel::Slot::kSrc) = sbuf(DType::kBFloat16, 128, {128});
  EXPECT_DOUBLE_EQ(plan(transpose).efficiency, params.dma.transpose_efficiency_sbuf);
}

}  // namespace
}  // namespace trnsim::dma::test
