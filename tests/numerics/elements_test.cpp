// Element access for functional execution: the sparse memory image with its record of written
// bytes, the logical order of access patterns, and element encodings. Expected bytes and
// addresses are worked out by hand from the formats' definitions and the pattern rules.
#include "numerics/elements.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "numerics/float_formats.hpp"
#include "numerics/memory_image.hpp"

namespace trnsim::numerics {
namespace {

using kernel::AccessPattern;
using kernel::DType;
using kernel::MemoryKind;

TEST(MemoryImage, ReadsBackWritesAcrossPagesAndNamesTheFirstUnwrittenByte) {
  MemoryImage image;
  const SpaceKey key{MemoryKind::kHbm, 0, 0};
  const std::uint8_t bytes[] = {1, 2, 3};
  image.write(key, 4094, bytes);  // two bytes in page 0, one in page 1
  std::uint8_t out[3] = {};
  EXPECT_EQ(image.read(key, 4094, out), std::nullopt);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[2], 3);
  std::uint8_t wider[6] = {9, 9, 9, 9, 9, 9};
  EXPECT_EQ(image.read(key, 4093, wider), std::optional<std::uint64_t>(4093));
  EXPECT_EQ(wider[0], 0);
  EXPECT_EQ(wider[1], 1);
  EXPECT_EQ(wider[4], 0);
  std::uint8_t after[2] = {};
  EXPECT_EQ(image.read(key, 4097, after), std::optional<std::uint64_t>(4097));
  // Another partition of the same core is another space.
  EXPECT_EQ(image.read(SpaceKey{MemoryKind::kHbm, 1, 0}, 4094, out),
            std::optional<std::uint64_t>(4094));
  EXPECT_EQ(image.resident_bytes(), 2 * MemoryImage::kPageBytes);
}

std::vector<std::pair<std::uint32_t, std::uint64_t>> walk(const AccessPattern& pattern) {
  std::vector<std::pair<std::uint32_t, std::uint64_t>> order;
  for_each_element(pattern, [&](const SpaceKey& key, std::uint64_t address) {
    order.emplace_back(key.partition, address);
  });
  return order;
}

AccessPattern on_chip(std::uint8_t partition_axis) {
  AccessPattern p;
  p.memory = MemoryKind::kSbuf;
  p.dtype = DType::kFloat32;
  p.tensor = 0;
  p.partition_start = 3;
  p.partitions = 2;
  p.partition_axis = partition_axis;
  p.offset = 8;
  p.rank = 1;
  p.sizes[0] = 3;
  p.strides[0] = 2;  // elements: 8 bytes apart
  return p;
}

TEST(ElementOrder, OnChipPatternsPutThePartitionDimensionAtItsAxis) {
  using Order = std::vector<std::pair<std::uint32_t, std::uint64_t>>;
  EXPECT_EQ(walk(on_chip(0)), (Order{{3, 8}, {3, 16}, {3, 24}, {4, 8}, {4, 16}, {4, 24}}));
  EXPECT_EQ(walk(on_chip(1)), (Order{{3, 8}, {4, 8}, {3, 16}, {4, 16}, {3, 24}, {4, 24}}));
}

TEST(ElementOrder, HbmPatternsFollowTheirStridesIncludingNegativeAndZeroOnes) {
  AccessPattern p;
  p.memory = MemoryKind::kHbm;
  p.dtype = DType::kBFloat16;
  p.tensor = 0;
  p.offset = 100;
  p.rank = 3;
  p.sizes = {2, 2, 3};
  p.strides = {10, 0, -1};  // bytes: 20, 0 (re-read), -2
  using Order = std::vector<std::pair<std::uint32_t, std::uint64_t>>;
  EXPECT_EQ(walk(p), (Order{{0, 100},
                            {0, 98},
                            {0, 96},
                            {0, 100},
                            {0, 98},
                            {0, 96},
                            {0, 120},
                            {0, 118},
                            {0, 116},
                            {0, 120},
                            {0, 118},
                            {0, 116}}));
}

TEST(ElementEncoding, FloatTypesRoundToNearestEvenAndStoreLittleEndian) {
  std::uint8_t b[4] = {};
  encode_element(DType::kBFloat16, 1.0 + std::ldexp(1.0, -8), b);  // halfway: even is 1.0
  EXPECT_EQ(b[0], 0x80);
  EXPECT_EQ(b[1], 0x3F);
  encode_element(DType::kBFloat16, 1.0 + 3 * std::ldexp(1.0, -8), b);  // halfway: up to 1+2^-6
  EXPECT_EQ(b[0], 0x82);
  EXPECT_EQ(b[1], 0x3F);
  // tfloat32 keeps 32 bits with the low 13 mantissa bits zero: 1 + 2^-10 is exact.
  encode_element(DType::kTFloat32, 1.0 + std::ldexp(1.0, -10), b);
  EXPECT_EQ(b[0], 0x00);
  EXPECT_EQ(b[1], 0x20);
  EXPECT_EQ(b[2], 0x80);
  EXPECT_EQ(b[3], 0x3F);
  EXPECT_EQ(decode_element(DType::kTFloat32, b), 1.0 + std::ldexp(1.0, -10));
  encode_element(DType::kTFloat32, 1.0 + std::ldexp(1.0, -11), b);  // halfway: even is 1.0
  EXPECT_EQ(decode_element(DType::kTFloat32, b), 1.0);
  // float32 is the host's conversion: 1 + 2^-24 is halfway between 1 and 1 + 2^-23.
  EXPECT_EQ(round_to(DType::kFloat32, 1.0 + std::ldexp(1.0, -24)), 1.0);
  encode_element(DType::kFloat8E4M3Fn, 448.0, b);
  EXPECT_EQ(b[0], 0x7E);  // S.1111.110: the largest finite value
}

TEST(ElementEncoding, Bfloat16AgreesWithTheGenericFormatOnEveryKindOfValue) {
  // The bfloat16 fast path against float_formats' generic encoder and decoder: every float32
  // exponent, mantissas near the rounding boundary and at random, both signs, NaN and infinity.
  std::uint64_t state = 12345;
  const auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(state >> 32);
  };
  std::vector<std::uint32_t> patterns = {0x7F800000u, 0xFF800000u, 0x7FC00000u, 0x00000001u,
                                         0x7F7FFFFFu, 0x7F7F8000u, 0x3F808000u, 0x3F818000u};
  for (std::uint32_t exponent = 0; exponent < 255; ++exponent) {
    for (const std::uint32_t low : {0x0000u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu}) {
      patterns.push_back(exponent << 23 | 0x10000u | low);
      patterns.push_back(exponent << 23 | (next() & 0x7F0000u) | low);
    }
  }
  for (int i = 0; i < 100000; ++i) patterns.push_back(next());
  for (const std::uint32_t bits : patterns) {
    const float value = std::bit_cast<float>(bits);
    std::uint8_t b[2] = {};
    encode_element(DType::kBFloat16, value, b);
    const std::uint32_t fast = static_cast<std::uint32_t>(b[0] | b[1] << 8);
    const std::uint32_t generic = encode(kBFloat16, value);
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(decode_element(DType::kBFloat16, b))) << std::hex << bits;
      EXPECT_EQ(fast >> 15, bits >> 31) << std::hex << bits;
      continue;
    }
    ASSERT_EQ(fast, generic) << std::hex << bits;
    EXPECT_EQ(decode_element(DType::kBFloat16, b), static_cast<double>(decode(kBFloat16, fast)));
  }
}

TEST(ElementEncoding, IntegerTypesRoundToNearestEvenAndSaturate) {
  EXPECT_EQ(round_to(DType::kInt8, 2.5), 2.0);
  EXPECT_EQ(round_to(DType::kInt8, 3.5), 4.0);
  EXPECT_EQ(round_to(DType::kInt8, -2.5), -2.0);
  EXPECT_EQ(round_to(DType::kInt8, 127.5), 127.0);
  EXPECT_EQ(round_to(DType::kInt8, -300.0), -128.0);
  EXPECT_EQ(round_to(DType::kUInt8, -3.0), 0.0);
  EXPECT_EQ(round_to(DType::kUInt16, 70000.0), 65535.0);
  EXPECT_EQ(round_to(DType::kInt32, NAN), 0.0);
  EXPECT_EQ(round_to(DType::kInt32, 2147483647.0), 2147483647.0);
  EXPECT_EQ(round_to(DType::kBool, -0.5), 1.0);
  std::uint8_t b[4] = {};
  encode_element(DType::kInt16, -2.0, b);
  EXPECT_EQ(b[0], 0xFE);
  EXPECT_EQ(b[1], 0xFF);
}

TEST(ElementEncoding, PackedMxTypesHaveNoFunctionalModel) {
  EXPECT_FALSE(is_supported(DType::kFloat8E4M3FnX4));
  EXPECT_FALSE(is_supported(DType::kFloat8E8M0Fnu));
  std::uint8_t b[4] = {};
  EXPECT_THROW(encode_element(DType::kFloat4E2M1FnX4, 1.0, b), std::invalid_argument);
}

TEST(GatherScatter, RoundTripRoundsToTheTypeAndReportsTheFirstUnwrittenElement) {
  MemoryImage image;
  AccessPattern p = on_chip(0);
  p.dtype = DType::kBFloat16;
  const std::vector<double> values = {1.0, 1.0 + std::ldexp(1.0, -8), -3.0, 0.5, 1e30, -0.0};
  scatter(image, p, values);
  std::vector<double> back;
  EXPECT_EQ(gather(image, p, back), std::nullopt);
  ASSERT_EQ(back.size(), 6u);
  EXPECT_EQ(back[1], 1.0);  // rounded to bfloat16
  EXPECT_EQ(back[2], -3.0);
  EXPECT_EQ(back[4], static_cast<double>(round_to(DType::kBFloat16, 1e30)));
  EXPECT_TRUE(std::signbit(back[5]));

  AccessPattern wider = p;
  wider.partitions = 3;  // partition 5 was never written
  const auto unwritten = gather(image, wider, back);
  ASSERT_TRUE(unwritten.has_value());
  EXPECT_EQ(unwritten->where.partition, 5u);
  EXPECT_EQ(unwritten->address, 8u);
  EXPECT_EQ(unwritten->index, 6u);
}

}  // namespace
}  // namespace trnsim::numerics
