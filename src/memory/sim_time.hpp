// Conversions between sc_time and the double nanoseconds the analytic memory models compute in.
// sc_time is an integer count of the kernel's time resolution (1 ps by default); conversions
// round to the nearest tick and clamp negative durations to zero.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <systemc>

namespace trnsim::memory {

/// A time that never comes, in double ns (e.g. "no packet yet", "no engine eligible").
inline constexpr double kNeverNs = std::numeric_limits<double>::infinity();

/// Nanoseconds per sc_time tick (fixed once SystemC has created a non-zero time).
inline double ns_per_tick() {
  static const double value = sc_core::sc_get_time_resolution().to_seconds() * 1e9;
  return value;
}

inline double to_ns(const sc_core::sc_time& time) {
  return time.to_double() * ns_per_tick();
}

/// Rounds `ticks` (> 0) to the nearest integer, halves away from zero: exactly std::llround,
/// inline. Below 2^52 the fractional part x - trunc(x) is computed exactly.
inline std::uint64_t round_ticks(double ticks) {
  constexpr double kExactBelow = 4503599627370496.0;  // 2^52
  if (!(ticks < kExactBelow)) return static_cast<std::uint64_t>(std::llround(ticks));
  const auto whole = static_cast<std::uint64_t>(ticks);
  return whole + (ticks - static_cast<double>(whole) >= 0.5 ? 1 : 0);
}

[[gnu::always_inline]] inline sc_core::sc_time from_ns(double ns) {
  if (!(ns > 0)) return sc_core::SC_ZERO_TIME;
  const std::uint64_t ticks = round_ticks(ns / ns_per_tick());
  // One tick times an exactly representable count is that count (sc_time's inline multiply);
  // sc_time::from_value is an out-of-line call.
  static const sc_core::sc_time one_tick = sc_core::sc_time::from_value(1);
  constexpr std::uint64_t kExactDoubles = std::uint64_t{1} << 52;
  if (ticks < kExactDoubles) return one_tick * static_cast<double>(ticks);
  return sc_core::sc_time::from_value(ticks);
}

inline double now_ns() {
  return to_ns(sc_core::sc_time_stamp());
}

}  // namespace trnsim::memory
