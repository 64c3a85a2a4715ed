#include "numerics/float_formats.hpp"

#include <cmath>
#include <limits>

namespace trnsim::numerics {

namespace {

std::uint32_t all_ones(int bits) {
  return (std::uint32_t{1} << bits) - 1;
}

/// The largest exponent field a finite value may have.
std::uint32_t max_finite_field(const FloatFormat& format) {
  return all_ones(format.exponent_bits) - (format.has_infinity ? 1 : 0);
}

std::uint32_t nan_bits(const FloatFormat& format, bool negative) {
  const std::uint32_t sign =
      negative ? std::uint32_t{1} << (format.exponent_bits + format.mantissa_bits) : 0;
  const std::uint32_t exponent = all_ones(format.exponent_bits) << format.mantissa_bits;
  // A quiet NaN: the top mantissa bit (all mantissa bits in the fn formats).
  const std::uint32_t mantissa = format.has_infinity
                                     ? std::uint32_t{1} << (format.mantissa_bits - 1)
                                     : all_ones(format.mantissa_bits);
  return sign | exponent | mantissa;
}

}  // namespace

double largest_finite(const FloatFormat& format) {
  const int exponent = static_cast<int>(max_finite_field(format)) - format.bias;
  // The fn formats give the all-ones mantissa of the top exponent to NaN.
  const std::uint32_t mantissa = all_ones(format.mantissa_bits) - (format.has_infinity ? 0 : 1);
  return std::ldexp(1.0 + std::ldexp(static_cast<double>(mantissa), -format.mantissa_bits),
                    exponent);
}

std::uint32_t encode(const FloatFormat& format, float value) {
  const bool negative = std::signbit(value);
  const std::uint32_t sign =
      negative ? std::uint32_t{1} << (format.exponent_bits + format.mantissa_bits) : 0;
  if (std::isnan(value)) return nan_bits(format, negative);
  const std::uint32_t infinity = all_ones(format.exponent_bits) << format.mantissa_bits;
  if (std::isinf(value)) return format.has_infinity ? sign | infinity : nan_bits(format, negative);
  const double magnitude = std::fabs(static_cast<double>(value));
  if (magnitude == 0) return sign;

  // The quantum of the value's binade (of the subnormal range below the smallest normal),
  // then the magnitude rounded to a multiple of it, ties to even: exact in double, where
  // dividing and multiplying by a power of two are exact and nearbyint rounds ties to even.
  const int min_exponent = 1 - format.bias;
  const int exponent = std::max(std::ilogb(magnitude), min_exponent);
  const int quantum_exponent = exponent - format.mantissa_bits;
  const double units = std::nearbyint(std::ldexp(magnitude, -quantum_exponent));
  const double rounded = std::ldexp(units, quantum_exponent);
  if (rounded > largest_finite(format)) {
    return format.has_infinity ? sign | infinity : nan_bits(format, negative);
  }
  if (rounded == 0) return sign;
  const int rounded_exponent = std::ilogb(rounded);
  if (rounded_exponent < min_exponent) {  // subnormal: exponent field 0
    return sign |
           static_cast<std::uint32_t>(std::ldexp(rounded, format.mantissa_bits - min_exponent));
  }
  const auto field = static_cast<std::uint32_t>(rounded_exponent + format.bias);
  const auto mantissa =
      static_cast<std::uint32_t>(std::ldexp(rounded, format.mantissa_bits - rounded_exponent) -
                                 std::ldexp(1.0, format.mantissa_bits));
  return sign | field << format.mantissa_bits | mantissa;
}

float decode(const FloatFormat& format, std::uint32_t bits) {
  const bool negative = (bits >> (format.exponent_bits + format.mantissa_bits) & 1u) != 0;
  const std::uint32_t field = bits >> format.mantissa_bits & all_ones(format.exponent_bits);
  const std::uint32_t mantissa = bits & all_ones(format.mantissa_bits);
  double magnitude;
  if (field == all_ones(format.exponent_bits) &&
      (format.has_infinity || mantissa == all_ones(format.mantissa_bits))) {
    if (format.has_infinity && mantissa == 0) {
      magnitude = std::numeric_limits<double>::infinity();
    } else {
      return negative ? -std::numeric_limits<float>::quiet_NaN()
                      : std::numeric_limits<float>::quiet_NaN();
    }
  } else if (field == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - format.bias - format.mantissa_bits);
  } else {
    magnitude = std::ldexp(1.0 + std::ldexp(static_cast<double>(mantissa), -format.mantissa_bits),
                           static_cast<int>(field) - format.bias);
  }
  return static_cast<float>(negative ? -magnitude : magnitude);
}

}  // namespace trnsim::numerics
