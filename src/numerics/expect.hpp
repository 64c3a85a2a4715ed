// Comparing a kernel's output with a reference array, as numpy.allclose does: an element
// matches when |got - expected| <= atol + rtol * |expected| (NaN matches nothing, infinities
// only themselves). Tolerances default per element type to two units in the last place of its
// significand (rtol = atol = 2^(1 - mantissa bits)), and for float32 to NumPy's defaults
// (rtol 1e-5, atol 1e-8); integer types default to exact.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernel/instruction.hpp"
#include "numerics/npy.hpp"

namespace trnsim::numerics {

struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-8;
};

/// The default tolerance for outputs of `dtype` (see the header comment).
Tolerance default_tolerance(kernel::DType dtype);

/// One element that does not match.
struct Mismatch {
  std::vector<std::uint64_t> index;  ///< multi-index in the array's shape
  double got = 0;
  double expected = 0;
  double excess = 0;  ///< |got - expected| - (atol + rtol |expected|); infinity for NaN cases
};

struct Comparison {
  std::uint64_t elements = 0;
  std::uint64_t mismatches = 0;
  double max_abs_error = 0;     ///< over elements where both are finite
  std::vector<Mismatch> worst;  ///< up to `keep` mismatches, largest excess first
};

/// Compares two arrays of the same shape (the caller checks it), element values decoded from
/// numeric .npy types (float16/32/64, integers, bool).
Comparison compare_arrays(const NpyArray& got, const NpyArray& expected, const Tolerance& tolerance,
                          std::size_t keep = 5);

/// The values of a numeric array as double (float16/32/64, integers, bool); InputError at
/// `where` for other types.
std::vector<double> array_values(const NpyArray& array, const std::string& where);

}  // namespace trnsim::numerics
