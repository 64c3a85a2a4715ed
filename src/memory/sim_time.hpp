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

inline sc_core::sc_time from_ns(double ns) {
  if (!(ns > 0)) return sc_core::SC_ZERO_TIME;
  return sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(std::llround(ns / ns_per_tick())));
}

inline double now_ns() {
  return to_ns(sc_core::sc_time_stamp());
}

}  // namespace trnsim::memory
