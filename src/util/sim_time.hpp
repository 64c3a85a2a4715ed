// Simulated time: conversions between sc_time (an integer count of the SystemC kernel's time
// resolution, a tick: 1 fs in trnsim runs) and the double nanoseconds the timing models compute
// in. One rule for the whole simulator:
//  - ticks to ns: ticks / ticks-per-ns, one correctly rounded division (so 1,500,000 ticks at
//    1 fs are exactly 1.5 ns);
//  - ns to ticks: ns x ticks-per-ns rounded to the nearest tick as SystemC rounds
//    sc_time(ns, SC_NS) (halves up); negative and NaN durations are zero.
// The conversions are inline and use the resolution that scale() read (it is fixed once SystemC
// has created a non-zero time).
// Leaves out resolutions that are not a whole number of femtoseconds (std::logic_error).
#pragma once

#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <systemc>

namespace trnsim::sim_time {

/// A time that never comes, in double ns (e.g. "no packet yet", "no engine eligible").
inline constexpr double kNeverNs = std::numeric_limits<double>::infinity();

/// The rule, for a given resolution: `ticks` in ns.
constexpr double ticks_to_ns(std::uint64_t ticks, double ticks_per_ns) {
  return static_cast<double>(ticks) / ticks_per_ns;
}

/// The rule, for a given resolution: `ns` in whole ticks, rounded as SystemC rounds
/// sc_time(ns, SC_NS) (x + 0.5, truncated).
inline std::uint64_t ns_to_ticks(double ns, double ticks_per_ns) {
  if (!(ns > 0)) return 0;
  return static_cast<std::uint64_t>(ns * ticks_per_ns + 0.5);
}

/// The kernel's time resolution.
struct Scale {
  double ticks_per_ns = 0;  ///< 0: not read yet; 1e6 at 1 fs
  sc_core::sc_time one_tick;
};
inline Scale current_scale;

[[gnu::noinline]] inline void read_scale() {
  const double fs = sc_core::sc_get_time_resolution().to_seconds() * 1e15;
  if (!(fs >= 0.5) || std::abs(fs - std::round(fs)) > 1e-6) {
    throw std::logic_error("trnsim: unsupported SystemC time resolution " +
                           sc_core::sc_get_time_resolution().to_string());
  }
  current_scale.ticks_per_ns = 1e6 / std::round(fs);
  current_scale.one_tick = sc_core::sc_time::from_value(1);
}

/// The resolution, read on first use. The conversions below are on every instruction's and
/// every DMA packet's path and do not check: every module that converts times calls scale() in
/// its constructor (builds with assertions check that it did).
inline const Scale& scale() {
  if (current_scale.ticks_per_ns == 0) [[unlikely]]
    read_scale();
  return current_scale;
}

/// `ticks` (sc_time::value()) in ns.
inline double to_ns(std::uint64_t ticks) {
  assert(current_scale.ticks_per_ns != 0 && "sim_time::scale() was not read");
  return ticks_to_ns(ticks, current_scale.ticks_per_ns);
}

/// One tick in ns.
inline double ns_per_tick() {
  return to_ns(std::uint64_t{1});
}

/// `time` in ns.
inline double to_ns(const sc_core::sc_time& time) {
  return to_ns(time.value());
}

/// `ns` as an sc_time (the rule above).
[[gnu::always_inline]] inline sc_core::sc_time from_ns(double ns) {
  const Scale& s = current_scale;
  assert(s.ticks_per_ns != 0 && "sim_time::scale() was not read");
  if (!(ns > 0)) return sc_core::SC_ZERO_TIME;
  // sc_time's inline multiply rounds one tick times x as ns_to_ticks() does (x + 0.5,
  // truncated); sc_time(ns, SC_NS) and sc_time::from_value are out-of-line calls.
  return s.one_tick * (ns * s.ticks_per_ns);
}

/// from_ns() for set-up code that may run first: reads the resolution if nobody did.
inline sc_core::sc_time setup_from_ns(double ns) {
  scale();
  return from_ns(ns);
}

/// The kernel's current time in ns.
inline double now_ns() {
  return to_ns(sc_core::sc_time_stamp());
}

}  // namespace trnsim::sim_time
