// Explicit access patterns NAME.ap(...): parse errors, resolution into AccessPatterns (numbers
// worked out by hand from the tensor layouts), bounds errors with loop values, broadcasts, and
// the byte regions of non-monotonic (transposed) patterns.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "kernel/validate.hpp"
#include "test_support.hpp"

namespace trnsim::kernel {
namespace {

using testing::collect;
using testing::error_of;
using testing::kernel_json;
using testing::parse_text;
using testing::prepare_text;
using testing::run_error;

// x: hbm float32 [8, 64] at HBM address 0 (512 elements, row-major).
// s: sbuf bfloat16 [2, 64, 10] with partition_dim 1 at partition 32, byte 1024: per partition
//    2 buffers x 10 elements = 20 elements, element b * 10 + f.
// y: sbuf float32 [128, 16] at byte 4096; d: sbuf bfloat16 [128, 12] at byte 0.
const char* kPatternTensors = R"json({
  "x": {"memory": "hbm", "dtype": "float32", "shape": [8, 64]},
  "s": {"memory": "sbuf", "dtype": "bfloat16", "shape": [2, 64, 10], "partition_dim": 1,
        "partition_start": 32, "offset": 1024},
  "y": {"memory": "sbuf", "dtype": "float32", "shape": [128, 16], "offset": 4096},
  "d": {"memory": "sbuf", "dtype": "bfloat16", "shape": [128, 12], "offset": 0},
  "b": {"memory": "sbuf", "dtype": "float32", "shape": [128, 1], "offset": 8192}})json";

std::string pattern_parse_error(const std::string& program) {
  return error_of([&] { parse_text(kernel_json(kPatternTensors, program)); });
}

std::string copy_to_y(const std::string& src) {
  return R"json([{"op": "dma_copy", "dst": "y", "src": ")json" + src + R"json("}])json";
}

void expect_pattern(const AccessPattern& p, std::uint32_t partition_start, std::uint32_t partitions,
                    std::uint64_t offset, const std::vector<std::uint32_t>& sizes,
                    const std::vector<std::int64_t>& strides) {
  EXPECT_EQ(p.partition_start, partition_start);
  EXPECT_EQ(p.partitions, partitions);
  EXPECT_EQ(p.offset, offset);
  EXPECT_EQ(p.partition_axis, 0);
  ASSERT_EQ(p.rank, sizes.size());
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    EXPECT_EQ(p.sizes[d], sizes[d]) << d;
    EXPECT_EQ(p.strides[d], strides[d]) << d;
  }
}

TEST(ExplicitPattern, ParseErrors) {
  EXPECT_EQ(pattern_parse_error(copy_to_y("missing.ap(0, [1, 16])")),
            "k.json: dma_copy /program/0/src: operand 'missing.ap(0, [1, 16])' names unknown "
            "tensor 'missing'");
  EXPECT_EQ(pattern_parse_error(copy_to_y("x.ap(0, [1])")),
            "k.json: dma_copy /program/0/src: operand 'x.ap(0, [1])': expected [STRIDE, COUNT], "
            "found '[1]'");
  EXPECT_EQ(pattern_parse_error(copy_to_y("x.ap(0, 16)")),
            "k.json: dma_copy /program/0/src: operand 'x.ap(0, 16)': expected [STRIDE, COUNT], "
            "found '16'");
  EXPECT_EQ(pattern_parse_error(copy_to_y("x.ap(0)")),
            "k.json: dma_copy /program/0/src: operand 'x.ap(0)': hbm patterns have 1 to 5 "
            "[STRIDE, COUNT] pairs, found 0");
  EXPECT_EQ(
      pattern_parse_error(copy_to_y("x.ap(0, [1, 1], [1, 1], [1, 1], [1, 1], [1, 1], [1, 16])")),
      "k.json: dma_copy /program/0/src: operand 'x.ap(0, [1, 1], [1, 1], [1, 1], [1, 1], "
      "[1, 1], [1, 16])': hbm patterns have 1 to 5 [STRIDE, COUNT] pairs, found 6");
  EXPECT_EQ(pattern_parse_error(copy_to_y("s.ap(0:16, 0, [1, 1], [1, 1], [1, 1], [1, 1], [1, 1])")),
            "k.json: dma_copy /program/0/src: operand 's.ap(0:16, 0, [1, 1], [1, 1], [1, 1], [1, "
            "1], [1, 1])': sbuf patterns have at most 4 [STRIDE, COUNT] pairs (free dimensions), "
            "found 5");
  EXPECT_EQ(pattern_parse_error(copy_to_y("s.ap(0, [1, 16])")),
            "k.json: dma_copy /program/0/src: operand 's.ap(0, [1, 16])': sbuf tensor 's' needs "
            "its partition range first: s.ap(PSTART:PSTOP, OFFSET, [STRIDE, COUNT], ...), e.g. "
            "'s.ap(0:128, 0, [1, 512])'");
  EXPECT_EQ(pattern_parse_error(copy_to_y("x.ap(0:1, 0, [1, 16])")),
            "k.json: dma_copy /program/0/src: operand 'x.ap(0:1, 0, [1, 16])': hbm tensor 'x' has "
            "no partition range: x.ap(OFFSET, [STRIDE, COUNT], ...)");
  EXPECT_EQ(pattern_parse_error(copy_to_y("s.ap(0:16:2, 0)")),
            "k.json: dma_copy /program/0/src: operand 's.ap(0:16:2, 0)': the partition range "
            "'0:16:2' must be PSTART:PSTOP (step 1)");
  EXPECT_EQ(pattern_parse_error(copy_to_y("s.ap(0:16, [1, 4])")),
            "k.json: dma_copy /program/0/src: operand 's.ap(0:16, [1, 4])': OFFSET is missing: "
            "s.ap(PSTART:PSTOP, OFFSET, [STRIDE, COUNT], ...)");
  EXPECT_EQ(pattern_parse_error(copy_to_y("x.ap[0, [1, 16]]")),
            "k.json: dma_copy /program/0/src: operand 'x.ap[0, [1, 16]]': expected "
            "x.ap(OFFSET, [STRIDE, COUNT], ...)");
  EXPECT_EQ(pattern_parse_error(copy_to_y("x.view(0, [1, 16])")),
            "k.json: dma_copy /program/0/src: operand 'x.view(0, [1, 16])': expected "
            "x.ap(OFFSET, [STRIDE, COUNT], ...)");
  EXPECT_EQ(pattern_parse_error(copy_to_y("x.ap(0, [-1, 16])")),
            "k.json: dma_copy /program/0/src: operand 'x.ap(0, [-1, 16])': stride '-1' is "
            "negative; strides are at least 0");
  EXPECT_EQ(pattern_parse_error(copy_to_y("x.ap(0, [1, 0])")),
            "k.json: dma_copy /program/0/src: operand 'x.ap(0, [1, 0])': count '0' is below 1");
  EXPECT_EQ(pattern_parse_error(copy_to_y("x.ap(0, [1, n])")),
            "k.json: dma_copy /program/0/src: in expression 'n': unknown name 'n'");
}

TEST(ExplicitPattern, ResolvesHbmAndOnChipPatterns) {
  const PreparedKernel kernel = prepare_text(kernel_json(kPatternTensors, R"json([
      {"op": "dma_copy", "dst": "y.ap(0:3, 0, [8, 2], [1, 8])",
                         "src": "x.ap(64 * 2 + 4, [64, 3], [16, 2], [1, 8])"},
      {"op": "dma_copy", "dst": "d.ap(0:16, 0, [3, 4], [1, 3])",
                         "src": "s.ap(0:16, 10 + 2, [0, 4], [2, 3])"},
      {"op": "activation", "dst": "y.ap(0:128, 0, [1, 16])", "src": "y.ap(0:128, 0, [1, 16])",
       "func": "exp", "bias": "b.ap(0:128, 0)"}])json"));
  const std::vector<Instruction> in = collect(kernel);
  ASSERT_EQ(in.size(), 3u);
  // x: element 132 (row 2, column 4) at 132 x 4 B; rows 64 apart, a split row of 2 x 8.
  expect_pattern(in[0].src(), 0, 1, 132 * 4, {3, 2, 8}, {64, 16, 1});
  EXPECT_EQ(in[0].src().memory, MemoryKind::kHbm);
  expect_pattern(in[0].dst(), 0, 3, 4096, {2, 8}, {8, 1});
  EXPECT_EQ(format_shape(in[0].src()), "[3, 2, 8]");
  EXPECT_EQ(format_shape(in[0].dst()), "[3, 2, 8]");
  EXPECT_EQ(in[0].bytes_read, 3u * 2 * 8 * 4);
  // s: partitions 0-15 of the tensor are partitions 32-47; element 12 (buffer 1, free 2) at
  // 1024 + 12 x 2 B; the outer pair [0, 4] re-reads the same three elements.
  expect_pattern(in[1].src(), 32, 16, 1024 + 12 * 2, {4, 3}, {0, 2});
  expect_pattern(in[1].dst(), 0, 16, 0, {4, 3}, {3, 1});
  EXPECT_EQ(format_shape(in[1].src()), "[16, 4, 3]");
  // Read region: elements 12, 14, 16 -> bounding box of 5 elements (10 B) per partition.
  const Region read = in[1].reads[0];
  EXPECT_EQ(read.partition_begin, 32u);
  EXPECT_EQ(read.partition_end, 48u);
  EXPECT_EQ(read.byte_begin, 1024u + 24);
  EXPECT_EQ(read.byte_end(), 1024u + 34);
  // Written: 12 contiguous bf16 elements per partition.
  EXPECT_EQ(in[1].writes[0].byte_begin, 0u);
  EXPECT_EQ(in[1].writes[0].byte_end(), 24u);
  EXPECT_EQ(in[1].writes[0].count, 1u);
  // A number-or-tensor attribute takes a pattern too: bias [128, 1] at byte 8192.
  EXPECT_EQ(in[2].bias_kind, ScalarKind::kTensor);
  expect_pattern(in[2].operand(Slot::kAux0), 0, 128, 8192, {}, {});
}

TEST(ExplicitPattern, BoundsErrorsNameTheValuesAndLoopValues) {
  // x has 8 x 64 = 512 elements: t = 3 reaches 3 x 128 + 127 + 1 = 512.
  EXPECT_EQ(run_error(kernel_json(kPatternTensors, R"json([{"for": "t", "range": 4, "body": [
                {"op": "dma_copy", "dst": "y.ap(0:8, 0, [1, 16])",
                 "src": "x.ap(t * 128 + 1, [16, 8], [1, 16])"}]}])json")),
            "k.json: dma_copy /program/0/body/0/src (t=3): operand 'x.ap(t * 128 + 1, [16, 8], [1, "
            "16])': offset 385 with the pairs given reaches element 512; tensor 'x' has 512 "
            "elements (valid 0-511)");
  EXPECT_EQ(run_error(kernel_json(kPatternTensors, R"json([{"for": "t", "range": 2, "body": [
                {"op": "dma_copy", "dst": "y.ap(0:1, 0, [1, 16])", "src": "x.ap(t - 1, [1, 16])"}]}])json")),
            "k.json: dma_copy /program/0/body/0/src (t=0): operand 'x.ap(t - 1, [1, 16])': offset "
            "-1 is negative; tensor 'x' has 512 elements (valid 0-511)");
  // s holds 20 elements per partition: 10 + (4 - 1) x 4 = 22 is past them.
  EXPECT_EQ(run_error(kernel_json(kPatternTensors,
                                  R"json([{"op": "dma_copy", "dst": "d.ap(0:2, 0, [1, 4])",
                                  "src": "s.ap(0:2, 10, [4, 4])"}])json")),
            "k.json: dma_copy /program/0/src: operand 's.ap(0:2, 10, [4, 4])': offset 10 with the "
            "pairs given reaches element 22; tensor 's' has 20 elements per partition (valid "
            "0-19)");
  EXPECT_EQ(run_error(kernel_json(kPatternTensors, R"json([{"for": "t", "range": 2, "body": [
                {"op": "dma_copy", "dst": "d.ap(0:8, 0, [1, 4])",
                 "src": "s.ap(t * 60:t * 60 + 8, 0, [1, 4])"}]}])json")),
            "k.json: dma_copy /program/0/body/0/src (t=1): operand 's.ap(t * 60:t * 60 + 8, 0, [1, "
            "4])': partition range 60:68 is out of bounds for the 64 partitions of tensor 's' "
            "(valid 0:64)");
  EXPECT_EQ(run_error(kernel_json(kPatternTensors,
                                  R"json([{"op": "dma_copy", "dst": "d.ap(4:4, 0, [1, 4])",
                                  "src": "x.ap(0, [1, 4])"}])json")),
            "k.json: dma_copy /program/0/dst: operand 'd.ap(4:4, 0, [1, 4])': partition range 4:4 "
            "is empty for the 128 partitions of tensor 'd' (valid 0:128)");
  EXPECT_EQ(run_error(kernel_json(kPatternTensors, R"json([{"for": "t", "range": 2, "body": [
                {"op": "dma_copy", "dst": "y.ap(0:1, 0, [1, 16])",
                 "src": "x.ap(0, [t - 1, 16])"}]}])json")),
            "k.json: dma_copy /program/0/body/0/src (t=0): operand 'x.ap(0, [t - 1, 16])': pair 0 "
            "[-1, 16] has a negative stride; strides are at least 0");
  EXPECT_EQ(run_error(kernel_json(kPatternTensors,
                                  R"json([{"op": "dma_copy", "dst": "y.ap(0:1, 0, [1, 16])",
                                  "src": "x.ap(0, [0, 4294967296])"}])json")),
            "k.json: dma_copy /program/0/src: operand 'x.ap(0, [0, 4294967296])': pair 0 [0, "
            "4294967296] has a count above 4294967295");
  EXPECT_EQ(run_error(kernel_json(kPatternTensors,
                                  R"json([{"op": "dma_copy", "dst": "y.ap(0:1, 0, [1, 16])",
                                  "src": "x.ap(0, [0, 4294967295], [0, 1024])"}])json")),
            "k.json: dma_copy /program/0/src: operand 'x.ap(0, [0, 4294967295], [0, 1024])': the "
            "pattern touches more than 1099511627776 elements");
}

TEST(ExplicitPattern, BroadcastReadsAreValidBroadcastWritesAreNot) {
  // One row of x read by 16 partitions: [16, 64] <- [16, 64] with stride 0 over the rows.
  const PreparedKernel kernel = prepare_text(kernel_json(kPatternTensors, R"json([
      {"op": "dma_copy", "dst": "y.ap(0:16, 0, [1, 16])", "src": "x.ap(64, [0, 16], [1, 16])"}])json"));
  const std::vector<Instruction> in = collect(kernel);
  ASSERT_EQ(in.size(), 1u);
  expect_pattern(in[0].src(), 0, 1, 64 * 4, {16, 16}, {0, 1});
  EXPECT_EQ(in[0].src().contiguous_run_elements(), 16u);
  EXPECT_EQ(in[0].bytes_read, 16u * 16 * 4);  // every element read counts
  // The region is the row, once.
  EXPECT_EQ(in[0].reads[0].byte_begin, 256u);
  EXPECT_EQ(in[0].reads[0].byte_end(), 256u + 64);

  EXPECT_EQ(run_error(kernel_json(kPatternTensors, R"json([
      {"op": "dma_copy", "dst": "y.ap(0:16, 0, [0, 4], [1, 4])", "src": "x.ap(0, [16, 16], [1, 4])"}])json")),
            "k.json: dma_copy /program/0/dst: operand 'y.ap(0:16, 0, [0, 4], [1, 4])': pair 0 [0, "
            "4] writes the same elements 4 times; a written operand may not broadcast (stride 0)");
  // A stride-0 pair of count 1 writes nothing twice.
  EXPECT_EQ(collect(prepare_text(kernel_json(kPatternTensors, R"json([
      {"op": "dma_copy", "dst": "y.ap(0:16, 0, [0, 1], [1, 4])", "src": "x.ap(0, [16, 16], [1, 4])"}])json")))
                .size(),
            1u);
}

/// Every (partition, byte) an on-chip pattern touches.
std::set<std::pair<std::uint32_t, std::uint64_t>> touched_bytes(const AccessPattern& p) {
  std::set<std::pair<std::uint32_t, std::uint64_t>> bytes;
  const std::uint32_t element = dtype_bytes(p.dtype);
  std::array<std::uint32_t, kMaxPatternDims> index{};
  const std::uint64_t elements = p.elements_per_partition();
  for (std::uint64_t n = 0; n < elements; ++n) {
    std::uint64_t rest = n;
    for (int d = p.rank - 1; d >= 0; --d) {
      index[d] = static_cast<std::uint32_t>(rest % p.sizes[d]);
      rest /= p.sizes[d];
    }
    std::int64_t offset = 0;
    for (int d = 0; d < p.rank; ++d) offset += index[d] * p.strides[d];
    for (std::uint32_t partition = p.partition_start; partition < p.partition_start + p.partitions;
         ++partition) {
      for (std::uint32_t b = 0; b < element; ++b) {
        bytes.emplace(partition, p.offset + static_cast<std::uint64_t>(offset) * element + b);
      }
    }
  }
  return bytes;
}

bool covers(const Region& region, std::uint32_t partition, std::uint64_t byte) {
  if (partition < region.partition_begin || partition >= region.partition_end) return false;
  if (byte < region.byte_begin || byte >= region.byte_end()) return false;
  return (byte - region.byte_begin) % region.stride_bytes < region.run_bytes;
}

TEST(ExplicitPattern, TransposedReadRegionCoversEveryByteTouched) {
  // in[p, i1 * F2 + i2] read with i2 outer, i1 inner (F1 = 4, F2 = 8), written contiguously to
  // out[p, i2 * F1 + i1]: the read's outer stride (1) is smaller than its inner extent (3 x 8).
  // Per partition in holds 40 float32 at byte 0; the read starts at element 3, so it touches
  // elements 3..34: bytes 12..139.
  const PreparedKernel kernel = prepare_text(kernel_json(
      R"json({"in":  {"memory": "sbuf", "dtype": "float32", "shape": [128, 40], "offset": 0},
          "out": {"memory": "sbuf", "dtype": "float32", "shape": [128, 32], "offset": 1024}})json",
      R"json([{"op": "tensor_copy", "dst": "out.ap(0:128, 0, [4, 8], [1, 4])",
                                "src": "in.ap(0:128, 3, [1, 8], [8, 4])"},
          {"op": "tensor_copy", "dst": "out.ap(0:64, 0, [3, 3], [1, 2])",
                                "src": "in.ap(0:64, 0, [4, 3], [1, 2])"}])json"));
  const std::vector<Instruction> in = collect(kernel);
  ASSERT_EQ(in.size(), 2u);
  const Region transposed = in[0].reads[0];
  EXPECT_EQ(transposed.byte_begin, 12u);
  EXPECT_EQ(transposed.byte_end(), 140u);
  EXPECT_EQ(transposed.partition_begin, 0u);
  EXPECT_EQ(transposed.partition_end, 128u);
  EXPECT_EQ(touched_bytes(in[0].src()).size(), 128u * 32 * 4);
  for (const auto& [partition, byte] : touched_bytes(in[0].src())) {
    ASSERT_TRUE(covers(transposed, partition, byte)) << partition << " " << byte;
  }
  // The write is contiguous: exactly bytes 1024..1151.
  EXPECT_EQ(in[0].writes[0].byte_begin, 1024u);
  EXPECT_EQ(in[0].writes[0].run_bytes, 128u);
  EXPECT_EQ(in[0].writes[0].count, 1u);
  // Elements {0, 1, 4, 5, 8, 9}: the region may be larger (bounding box 0..9) but covers them.
  const Region gaps = in[1].reads[0];
  EXPECT_EQ(gaps.byte_begin, 0u);
  EXPECT_EQ(gaps.byte_end(), 40u);
  for (const auto& [partition, byte] : touched_bytes(in[1].src())) {
    ASSERT_TRUE(covers(gaps, partition, byte)) << partition << " " << byte;
  }
  for (const auto& [partition, byte] : touched_bytes(in[1].dst())) {
    ASSERT_TRUE(covers(in[1].writes[0], partition, byte)) << partition << " " << byte;
  }
}

TEST(ExplicitPattern, RegionOfBroadcastsIsTheElementsOnce) {
  AccessPattern p;
  p.memory = MemoryKind::kSbuf;
  p.dtype = DType::kFloat32;
  p.tensor = 0;
  p.partitions = 4;
  p.offset = 64;
  p.rank = 1;
  p.sizes[0] = 5;
  p.strides[0] = 0;  // one element read 5 times
  Region r = p.region();
  EXPECT_EQ(r.byte_begin, 64u);
  EXPECT_EQ(r.bytes_per_partition(), 4u);
  p.rank = 2;
  p.sizes = {3, 8};
  p.strides = {0, 1};  // one row of 8 read 3 times
  r = p.region();
  EXPECT_EQ(r.byte_begin, 64u);
  EXPECT_EQ(r.byte_end(), 64u + 32);
  p.sizes = {8, 3};
  p.strides = {1, 0};  // elements 0..7, each read 3 times
  r = p.region();
  EXPECT_EQ(r.byte_begin, 64u);
  EXPECT_EQ(r.byte_end(), 64u + 32);
}

}  // namespace
}  // namespace trnsim::kernel
