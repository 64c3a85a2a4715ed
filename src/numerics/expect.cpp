#include "numerics/expect.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "numerics/elements.hpp"
#include "util/error.hpp"

namespace trnsim::numerics {

namespace {

using kernel::DType;

std::vector<std::uint64_t> multi_index(std::uint64_t flat,
                                       const std::vector<std::uint64_t>& shape) {
  std::vector<std::uint64_t> index(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] == 0 ? 0 : flat % shape[d];
    flat = shape[d] == 0 ? 0 : flat / shape[d];
  }
  return index;
}

}  // namespace

Tolerance default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return {1e-5, 1e-8};
    case DType::kTFloat32:
      return {std::ldexp(1.0, -9), std::ldexp(1.0, -9)};
    case DType::kBFloat16:
      return {std::ldexp(1.0, -6), std::ldexp(1.0, -6)};
    case DType::kFloat16:
      return {std::ldexp(1.0, -9), std::ldexp(1.0, -9)};
    case DType::kFloat8E4M3:
    case DType::kFloat8E4M3Fn:
      return {std::ldexp(1.0, -2), std::ldexp(1.0, -2)};
    case DType::kFloat8E5M2:
      return {std::ldexp(1.0, -1), std::ldexp(1.0, -1)};
    default:
      return {0.0, 0.0};
  }
}

std::vector<double> array_values(const NpyArray& array, const std::string& where) {
  std::vector<double> values(array.elements());
  if (array.descr == "<f8") {
    std::memcpy(values.data(), array.data.data(), values.size() * sizeof(double));
    return values;
  }
  const std::optional<DType> type = dtype_of_npy(array.descr);
  if (!type) {
    throw InputError(where, "expected a float16/32/64, integer or bool array, found '" +
                                array.descr + "' (save bfloat16 and FP8 references as float32)");
  }
  const std::uint32_t item = npy_item_bytes(array.descr);
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = decode_element(*type, array.data.data() + i * item);
  }
  return values;
}

Comparison compare_arrays(const NpyArray& got, const NpyArray& expected, const Tolerance& tolerance,
                          std::size_t keep) {
  const std::vector<double> a = array_values(got, "output");
  const std::vector<double> b = array_values(expected, "reference");
  Comparison result;
  result.elements = a.size();
  std::vector<Mismatch> all;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double x = a[i];
    const double y = b[i];
    double excess;
    if (std::isnan(x) || std::isnan(y)) {
      excess = INFINITY;
    } else if (std::isinf(x) || std::isinf(y)) {
      excess = x == y ? -1.0 : INFINITY;
    } else {
      const double error = std::fabs(x - y);
      result.max_abs_error = std::max(result.max_abs_error, error);
      excess = error - (tolerance.atol + tolerance.rtol * std::fabs(y));
    }
    if (excess > 0) {
      ++result.mismatches;
      all.push_back(Mismatch{{}, x, y, excess});
      all.back().index.push_back(i);  // flat for now
      // Keep the list short: the largest `keep` so far.
      if (all.size() > 4 * keep + 64) {
        std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep), all.end(),
                          [](const Mismatch& l, const Mismatch& r) { return l.excess > r.excess; });
        all.resize(keep);
      }
    }
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const Mismatch& l, const Mismatch& r) { return l.excess > r.excess; });
  if (all.size() > keep) all.resize(keep);
  for (Mismatch& m : all) m.index = multi_index(m.index.front(), got.shape);
  result.worst = std::move(all);
  return result;
}

}  // namespace trnsim::numerics
