// Bit patterns of the element formats (numerics/float_formats.hpp), worked by hand from each
// format's layout: sign | exponent field | mantissa, value (-1)^s x 2^(field - bias) x 1.m for
// normal numbers, 2^(1 - bias) x 0.m for subnormals; rounding to nearest, ties to even.
#include "numerics/float_formats.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace trnsim::numerics {
namespace {

float from_bits(std::uint32_t bits) {
  return std::bit_cast<float>(bits);
}
constexpr float kInfinity = std::numeric_limits<float>::infinity();

TEST(BFloat16, KeepsTheHighHalfOfFloat32RoundedToNearestEven) {
  EXPECT_EQ(encode(kBFloat16, 1.0f), 0x3F80u);  // 0x3F800000
  // pi = 0x40490FDB: the low half 0x0FDB is below half (0x8000): rounds down to 3.140625.
  EXPECT_EQ(encode(kBFloat16, from_bits(0x40490FDBu)), 0x4049u);
  EXPECT_EQ(decode(kBFloat16, 0x4049u), 3.140625f);
  // 1 + 2^-8 = 0x3F808000 lies halfway between 0x3F80 and 0x3F81: the even one, 0x3F80.
  EXPECT_EQ(encode(kBFloat16, from_bits(0x3F808000u)), 0x3F80u);
  // 0x3F818000 lies halfway between 0x3F81 and 0x3F82: the even one, 0x3F82.
  EXPECT_EQ(encode(kBFloat16, from_bits(0x3F818000u)), 0x3F82u);
  // Just above half rounds up.
  EXPECT_EQ(encode(kBFloat16, from_bits(0x3F808001u)), 0x3F81u);
  // The largest float32 (0x7F7FFFFF) rounds past the largest bfloat16 (0x7F7F): infinity.
  EXPECT_EQ(encode(kBFloat16, from_bits(0x7F7FFFFFu)), 0x7F80u);
  EXPECT_EQ(encode(kBFloat16, -kInfinity), 0xFF80u);
  EXPECT_EQ(encode(kBFloat16, -0.0f), 0x8000u);
  // Subnormal float32 2^-133 = 0x00040000 is a bfloat16 subnormal: 0x0004.
  EXPECT_EQ(encode(kBFloat16, from_bits(0x00040000u)), 0x0004u);
  EXPECT_TRUE(std::isnan(decode(kBFloat16, encode(kBFloat16, std::nanf("")))));
}

TEST(Float16, IsIeeeBinary16) {
  EXPECT_EQ(encode(kFloat16, 1.0f), 0x3C00u);      // 0 01111 0000000000
  EXPECT_EQ(encode(kFloat16, -2.0f), 0xC000u);     // 1 10000 0000000000
  EXPECT_EQ(encode(kFloat16, 65504.0f), 0x7BFFu);  // largest finite: 1.1111111111 x 2^15
  // 65,520 is halfway between 65,504 (odd mantissa) and 65,536, past the largest finite:
  // ties to even go up, and the result overflows to infinity.
  EXPECT_EQ(encode(kFloat16, 65520.0f), 0x7C00u);
  EXPECT_EQ(encode(kFloat16, 65519.0f), 0x7BFFu);
  // Subnormals: 2^-24 is the smallest (0x0001); 2^-25 is halfway to 0 and goes to the even 0;
  // 3 x 2^-26 = 0.75 x 2^-24 rounds to 2^-24.
  EXPECT_EQ(encode(kFloat16, std::ldexp(1.0f, -24)), 0x0001u);
  EXPECT_EQ(encode(kFloat16, std::ldexp(1.0f, -25)), 0x0000u);
  EXPECT_EQ(encode(kFloat16, std::ldexp(3.0f, -26)), 0x0001u);
  EXPECT_EQ(encode(kFloat16, std::ldexp(1.0f, -14)), 0x0400u);  // smallest normal
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: even, 1.
  EXPECT_EQ(encode(kFloat16, 1.0f + std::ldexp(1.0f, -11)), 0x3C00u);
  EXPECT_EQ(decode(kFloat16, 0x3555u), 0.333251953125f);  // 1.0101010101 x 2^-2
}

TEST(TFloat32, KeepsTenMantissaBits) {
  // 1 + 3 x 2^-11 is halfway between 1 + 2^-10 and 1 + 2^-9: the even mantissa, 1 + 2^-9.
  EXPECT_EQ(round_to(kTFloat32, 1.0f + std::ldexp(3.0f, -11)), 1.0f + std::ldexp(1.0f, -9));
  EXPECT_EQ(round_to(kTFloat32, 1.0f + std::ldexp(1.0f, -11)), 1.0f);
  EXPECT_EQ(encode(kTFloat32, 1.0f), 0x1FC00u);  // 0 01111111 0000000000
}

TEST(Float8E5M2, HasInfinitiesAndAMaximumOf57344) {
  EXPECT_EQ(encode(kFloat8E5M2, 1.0f), 0x3Cu);      // 0 01111 00
  EXPECT_EQ(encode(kFloat8E5M2, 57344.0f), 0x7Bu);  // 1.11 x 2^15
  EXPECT_EQ(largest_finite(kFloat8E5M2), 57344.0);
  // 61,440 = 1.111 x 2^15 is halfway between 57,344 (odd) and 65,536: up, overflow.
  EXPECT_EQ(encode(kFloat8E5M2, 61440.0f), 0x7Cu);
  EXPECT_EQ(encode(kFloat8E5M2, -kInfinity), 0xFCu);
  EXPECT_EQ(encode(kFloat8E5M2, std::ldexp(1.0f, -16)), 0x01u);  // smallest subnormal
  EXPECT_EQ(decode(kFloat8E5M2, 0x3Du), 1.25f);
}

TEST(Float8E4M3Fn, HasNoInfinitiesAndAMaximumOf448) {
  EXPECT_EQ(encode(kFloat8E4M3Fn, 1.0f), 0x38u);    // 0 0111 000
  EXPECT_EQ(encode(kFloat8E4M3Fn, 448.0f), 0x7Eu);  // 1.110 x 2^8: exponent 15 is finite here
  EXPECT_EQ(largest_finite(kFloat8E4M3Fn), 448.0);
  EXPECT_EQ(encode(kFloat8E4M3Fn, 256.0f), 0x78u);  // 1.000 x 2^8
  // 464 is halfway between 448 (mantissa 110, even) and 480: down to 448.
  EXPECT_EQ(encode(kFloat8E4M3Fn, 464.0f), 0x7Eu);
  // 480 is past the largest finite value: NaN (S.1111.111), as is infinity.
  EXPECT_EQ(encode(kFloat8E4M3Fn, 480.0f), 0x7Fu);
  EXPECT_EQ(encode(kFloat8E4M3Fn, -kInfinity), 0xFFu);
  EXPECT_TRUE(std::isnan(decode(kFloat8E4M3Fn, 0x7Fu)));
  EXPECT_EQ(encode(kFloat8E4M3Fn, std::ldexp(1.0f, -9)), 0x01u);  // smallest subnormal
  EXPECT_EQ(decode(kFloat8E4M3Fn, 0x07u), std::ldexp(7.0f, -9));  // largest subnormal
}

TEST(Float8E4M3, IsIeeeLikeWithAMaximumOf240) {
  EXPECT_EQ(encode(kFloat8E4M3, 1.0f), 0x38u);
  EXPECT_EQ(encode(kFloat8E4M3, 240.0f), 0x77u);  // 1.111 x 2^7: exponent 15 is reserved
  EXPECT_EQ(largest_finite(kFloat8E4M3), 240.0);
  // 248 is halfway between 240 (odd) and 256: up, overflow to infinity (0 1111 000).
  EXPECT_EQ(encode(kFloat8E4M3, 248.0f), 0x78u);
  EXPECT_EQ(decode(kFloat8E4M3, 0x78u), kInfinity);
}

TEST(FloatFormats, RoundingTwiceChangesNothing) {
  for (const FloatFormat* format :
       {&kBFloat16, &kFloat16, &kTFloat32, &kFloat8E5M2, &kFloat8E4M3, &kFloat8E4M3Fn}) {
    for (float value : {0.1f, -3.7f, 1000.5f, 1e-6f, 12345.678f}) {
      const float once = round_to(*format, value);
      if (std::isnan(once)) continue;
      EXPECT_EQ(round_to(*format, once), once) << value;
    }
  }
}

}  // namespace
}  // namespace trnsim::numerics
