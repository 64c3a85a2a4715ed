// The floating-point storage formats of Trainium's element types, bit-exact: encoding a float32
// value into a format rounds to nearest, ties to even (IEEE 754 roundTiesToEven), with
// subnormals; decoding is exact (every value of these formats is a float32). The first piece of
// functional execution (values alongside timing).
//
// Formats (sign, exponent, mantissa bits; bias):
//   bfloat16      1, 8, 7;  127  IEEE-like: infinities and NaNs at exponent 255.
//   float16       1, 5, 10; 15   IEEE 754 binary16. Largest finite 65,504.
//   tfloat32      1, 8, 10; 127  Kept in 32 bits with the low 13 mantissa bits zero.
//   float8_e5m2   1, 5, 2;  15   IEEE-like. Largest finite 57,344.
//   float8_e4m3   1, 4, 3;  7    Neuron's legacy FP8 ("cFP8"), taken as IEEE-like (exponent 15
//                                for infinities and NaNs, largest finite 240), as the ml_dtypes
//                                type of that name that NKI's CPU simulator uses.
//   float8_e4m3fn 1, 4, 3;  7    OCP FP8 E4M3: no infinities, one NaN pattern per sign
//                                (S.1111.111), largest finite 448.
// Overflow (a rounded magnitude above the largest finite value) gives infinity, or NaN in
// float8_e4m3fn. Conversions of infinities and NaNs keep them (NaN in float8_e4m3fn for an
// infinity).
// Left out, because it is not published: whether the hardware's own conversions saturate,
// round differently (for example truncate to tfloat32) or flush subnormals.
#pragma once

#include <cstdint>

namespace trnsim::numerics {

/// A binary floating-point storage format of at most 16 bits of exponent and mantissa.
struct FloatFormat {
  int exponent_bits = 8;
  int mantissa_bits = 7;
  int bias = 127;
  /// Exponent field all ones is infinity (mantissa 0) or NaN; false: it holds normal numbers
  /// and only all-ones exponent and mantissa is NaN (the "fn" formats).
  bool has_infinity = true;
};

inline constexpr FloatFormat kBFloat16{8, 7, 127, true};
inline constexpr FloatFormat kFloat16{5, 10, 15, true};
inline constexpr FloatFormat kTFloat32{8, 10, 127, true};
inline constexpr FloatFormat kFloat8E5M2{5, 2, 15, true};
inline constexpr FloatFormat kFloat8E4M3{4, 3, 7, true};
inline constexpr FloatFormat kFloat8E4M3Fn{4, 3, 7, false};

/// The format's bits (sign in bit exponent_bits + mantissa_bits) for `value`, rounded to
/// nearest, ties to even.
std::uint32_t encode(const FloatFormat& format, float value);

/// The value of the format's `bits`.
float decode(const FloatFormat& format, std::uint32_t bits);

/// `value` rounded to the nearest value the format stores (decode(encode(value))).
inline float round_to(const FloatFormat& format, float value) {
  return decode(format, encode(format, value));
}

/// The largest finite value of the format.
double largest_finite(const FloatFormat& format);

}  // namespace trnsim::numerics
