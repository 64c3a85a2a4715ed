#include "kernel/allocate.hpp"

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace trnsim::kernel {
namespace {

using testing::error_of;
using testing::kernel_json;
using testing::prepare_text;
using testing::trn2_target;

TEST(Allocate, FirstFitAlignedInDeclarationOrder) {
  // a: 100 float32 = 400 B per partition at 0; b: 3 bf16 = 6 B, next 64-byte boundary after 400
  // is 448; c: [2, 128, 16] float32 = 2 * 16 * 4 = 128 B at align(454, 64) = 512.
  const auto kernel = prepare_text(kernel_json(
      R"({"a": {"memory": "sbuf", "dtype": "float32", "shape": [128, 100]},
          "b": {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 3]},
          "c": {"memory": "sbuf", "dtype": "float32", "shape": [2, 128, 16], "partition_dim": 1}})",
      "[]"));
  const auto& p = kernel.allocation.placements;
  EXPECT_EQ(p[0].offset, 0u);
  EXPECT_EQ(p[1].offset, 448u);
  EXPECT_EQ(p[2].offset, 512u);
  EXPECT_EQ(kernel.layouts[2].bytes_per_partition, 128u);
  EXPECT_EQ(kernel.allocation.sbuf_bytes_used, 640u);
}

TEST(Allocate, PartitionRangesShareBytes) {
  // lo on partitions 0-63 and hi on 64-127 do not intersect: both at offset 0.
  const auto kernel = prepare_text(kernel_json(
      R"({"lo": {"memory": "sbuf", "dtype": "float32", "shape": [64, 256]},
          "hi": {"memory": "sbuf", "dtype": "float32", "shape": [64, 256], "partition_start": 64}})",
      "[]"));
  EXPECT_EQ(kernel.allocation.placements[1].offset, 0u);
  EXPECT_EQ(kernel.allocation.placements[1].partition_start, 64u);
}

TEST(Allocate, ExplicitPlacementHonouredOverlapsListedAndAvoided) {
  // x fixed at 0 (1024 B), y fixed at 512 (overlaps x), z automatic: the first 64-aligned byte
  // after both fixed tensors is max(1024, 512 + 1024) = 1536.
  const auto kernel = prepare_text(kernel_json(
      R"({"z": {"memory": "sbuf", "dtype": "float32", "shape": [128, 16]},
          "x": {"memory": "sbuf", "dtype": "float32", "shape": [128, 256], "offset": 0},
          "y": {"memory": "sbuf", "dtype": "float32", "shape": [128, 256], "offset": 512}})",
      "[]"));
  const auto& p = kernel.allocation.placements;
  EXPECT_EQ(p[1].offset, 0u);
  EXPECT_EQ(p[2].offset, 512u);
  EXPECT_TRUE(p[2].explicitly_placed);
  EXPECT_EQ(p[0].offset, 1536u);
  ASSERT_EQ(kernel.allocation.overlaps.size(), 1u);
  EXPECT_EQ(kernel.allocation.overlaps[0], (std::pair<std::uint32_t, std::uint32_t>{1, 2}));
  const std::string map =
      format_allocation(kernel.prog(), kernel.layouts, kernel.allocation, kernel.target);
  EXPECT_NE(map.find("overlap: 'x' and 'y' share bytes (explicit placement)"), std::string::npos);
  EXPECT_NE(map.find("512 (fixed)"), std::string::npos);
}

TEST(Allocate, PsumTensorsStayInsideBanks) {
  // a: 100 float32 = 400 B at 0. b: 512 float32 = 2048 B = one bank: does not fit in bank 0
  // after a, so it starts at bank 1 (2048). c: 8 B fits after a at 400 (4-byte alignment).
  const auto kernel = prepare_text(kernel_json(
      R"({"a": {"memory": "psum", "dtype": "float32", "shape": [128, 100]},
          "b": {"memory": "psum", "dtype": "float32", "shape": [128, 512]},
          "c": {"memory": "psum", "dtype": "float32", "shape": [128, 2]}})",
      "[]"));
  const auto& p = kernel.allocation.placements;
  EXPECT_EQ(p[1].offset, 2048u);
  EXPECT_EQ(p[2].offset, 400u);
}

TEST(Allocate, HbmAddressesAlignedAndPerCoreInstances) {
  // a: 100 B -> next 64-aligned address 128. pc (per_core, 2 cores on trn2): 256 B x 2 instances
  // at 128 and 384. b at 128 + 512 = 640.
  const auto kernel =
      prepare_text(kernel_json(R"({"a": {"memory": "hbm", "dtype": "uint8", "shape": [100]},
                      "pc": {"memory": "hbm", "dtype": "float32", "shape": [64], "per_core": true},
                      "b": {"memory": "hbm", "dtype": "float32", "shape": [4]}})",
                               "[]", "{}", "2"));
  const auto& alloc = kernel.allocation;
  EXPECT_EQ(alloc.placements[0].offset, 0u);
  EXPECT_EQ(alloc.hbm_address(1, 0, 8), 128u);
  EXPECT_EQ(alloc.hbm_address(1, 1, 8), 384u);
  EXPECT_EQ(alloc.placements[2].offset, 640u);
  EXPECT_EQ(alloc.hbm_bytes_used, 704u);
}

TEST(Allocate, SbufCapacityErrorNamesTensorsAndBytes) {
  // 192 KiB = 196608 B per partition on trn2: big (131072 B) fits, more (98304 B) does not.
  const std::string message = error_of([] {
    prepare_text(kernel_json(
        R"({"big": {"memory": "sbuf", "dtype": "float32", "shape": [128, 32768]},
            "more": {"memory": "sbuf", "dtype": "float32", "shape": [128, 24576]}})",
        "[]"));
  });
  EXPECT_EQ(message,
            "k.json: /tensors/more: SBUF capacity exceeded: tensor 'more' needs 98304 bytes per "
            "partition (partitions 0-127) but no free 64-byte-aligned range of that size is left "
            "in the 196608 usable SBUF bytes per partition of trn2; already placed: big 131072 B "
            "at 0 (partitions 0-127) (together with 'more': 229376 bytes)");
}

TEST(Allocate, PsumAndExplicitCapacityErrors) {
  // PSUM holds 8 x 2048 = 16384 B per partition; 4097 float32 = 16388 B.
  EXPECT_EQ(
      error_of([] {
        prepare_text(kernel_json(
            R"({"acc": {"memory": "psum", "dtype": "float32", "shape": [128, 4097]}})", "[]"));
      }),
      "k.json: /tensors/acc: PSUM capacity exceeded: tensor 'acc' needs 16388 bytes per "
      "partition (partitions 0-127) but no free 4-byte-aligned range of that size is left "
      "in the 16384 PSUM bytes per partition of trn2; already placed: none (together with "
      "'acc': 16388 bytes)");
  EXPECT_EQ(
      error_of([] {
        prepare_text(kernel_json(
            R"({"x": {"memory": "sbuf", "dtype": "float32", "shape": [128, 1024], "offset": 194560}})",
            "[]"));
      }),
      "k.json: /tensors/x/offset: SBUF capacity exceeded: tensor 'x' at offset 194560 with "
      "4096 bytes per partition ends at byte 198656, beyond the 196608 usable SBUF bytes "
      "per partition of trn2");
}

TEST(Allocate, HbmCapacityError) {
  auto target = trn2_target();
  target.hbm_bytes = 1024;
  EXPECT_EQ(
      error_of([&] {
        prepare_text(
            kernel_json(R"({"x": {"memory": "hbm", "dtype": "float32", "shape": [300]}})", "[]"),
            target);
      }),
      "k.json: /tensors/x: HBM capacity exceeded: tensor 'x' (1200 bytes) ends at byte 1216 "
      "of the chip's HBM, beyond the 1024 bytes of trn2");
}

}  // namespace
}  // namespace trnsim::kernel
