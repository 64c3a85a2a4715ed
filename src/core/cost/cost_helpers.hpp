// Helpers shared by the per-engine cost functions (internal to trnsim_cost): rounding, operand
// properties the cost rules test (dtype families, unit stride, slow strides), and the
// std::logic_error for an op on an engine that does not run it.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>

#include "core/cost/cost_model.hpp"

namespace trnsim::cost::detail {

/// ceil(x) for a non-negative cycle count computed in floating point; a relative tolerance of
/// 1e-9 keeps 512.0000000001 (from e.g. 4 * 128.0) at 512. Negative inputs give 0.
inline std::uint64_t ceil_cycles(double x) {
  if (x <= 0) return 0;
  return static_cast<std::uint64_t>(std::ceil(x * (1.0 - 1e-9)));
}

inline std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}

inline EngineCost make_cost(std::uint64_t cycles, double clock_ghz) {
  EngineCost cost;
  cost.cycles = cycles;
  cost.ns = static_cast<double>(cycles) / clock_ghz;
  return cost;
}

inline bool is_bf16(kernel::DType dtype) {
  return dtype == kernel::DType::kBFloat16;
}
/// BF16 or FP16: the dtypes of the NC-v3+ VectorE/ScalarE performance modes (hardware-facts.md §4,
/// §5).
inline bool is_half_float(kernel::DType dtype) {
  return dtype == kernel::DType::kBFloat16 || dtype == kernel::DType::kFloat16;
}

/// Byte distance between neighbours of the innermost dimension that has more than one element
/// (0 for a single element or a broadcast).
inline std::uint64_t innermost_stride_bytes(const kernel::AccessPattern& pattern) {
  for (int d = static_cast<int>(pattern.rank) - 1; d >= 0; --d) {
    if (pattern.sizes[d] > 1) {
      return static_cast<std::uint64_t>(std::llabs(pattern.strides[d])) *
             kernel::dtype_bytes(pattern.dtype);
    }
  }
  return 0;
}

/// True when the element streams of any used operand in `slots` run at half rate because its
/// innermost stride exceeds sbuf.full_rate_max_stride_bytes (hardware-facts.md §7).
inline bool any_slow_stride(const kernel::Instruction& instruction, const config::Params& params,
                            std::initializer_list<kernel::Slot> slots) {
  const auto limit = static_cast<std::uint64_t>(params.sbuf.full_rate_max_stride_bytes);
  for (kernel::Slot slot : slots) {
    const kernel::AccessPattern& pattern = instruction.operand(slot);
    if (pattern.used() && innermost_stride_bytes(pattern) > limit) return true;
  }
  return false;
}

/// Throws std::logic_error: the validator should have rejected `instruction` on this engine.
[[noreturn]] void unsupported(const kernel::Instruction& instruction, const char* cost_function);

}  // namespace trnsim::cost::detail
