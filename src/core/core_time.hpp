// sc_time <-> double ns for the NeuronCore timing model (the core, its engines and its DMA
// dispatcher), bit-identical to t.to_seconds() * 1e9 and sc_time(value, SC_NS) without their
// out-of-line calls and simcontext lookups (they were ~5% of a compute-bound run).
// Leaves out resolutions other than 1 fs, 1 ps and 1 ns (std::logic_error).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <systemc>
#include <utility>

namespace trnsim::core {

/// The kernel's time resolution, read on first use (it is fixed before any core exists).
struct CoreTimeScale {
  double fs_per_tick = 0;   ///< 0: not read yet
  double ticks_per_ns = 0;  ///< 1e6 / fs_per_tick
  sc_core::sc_time one_tick;
};
inline CoreTimeScale core_time_scale;

[[gnu::noinline]] inline void read_core_time_scale() {
  const sc_core::sc_time resolution = sc_core::sc_get_time_resolution();
  for (const auto& [unit, value] : {std::pair{sc_core::SC_FS, 1.0}, std::pair{sc_core::SC_PS, 1e3},
                                    std::pair{sc_core::SC_NS, 1e6}}) {
    if (resolution == sc_core::sc_time(1, unit)) {
      core_time_scale.fs_per_tick = value;
      core_time_scale.ticks_per_ns = 1e6 / value;
      core_time_scale.one_tick = sc_core::sc_time::from_value(1);
      return;
    }
  }
  throw std::logic_error("NeuronCore: unsupported SystemC time resolution " +
                         resolution.to_string());
}

/// The time scale, read on first use. Every NeuronCore reads it when it is constructed (its
/// first member takes its time from setup_ns()), before any of the conversions below runs: they
/// use it without the check (they are on every instruction's path).
inline const CoreTimeScale& time_scale() {
  if (core_time_scale.fs_per_tick == 0) [[unlikely]]
    read_core_time_scale();
  return core_time_scale;
}

/// `ticks` (sc_time::value()) in ns. Requires time_scale() to have been read.
inline double ticks_to_ns(std::uint64_t ticks) {
  return static_cast<double>(ticks) * core_time_scale.fs_per_tick * 1e-15 * 1e9;
}

/// `t` in ns.
inline double to_ns(const sc_core::sc_time& t) {
  return ticks_to_ns(t.value());
}

/// `value` ns as an sc_time, rounded to the nearest tick as sc_time(value, SC_NS) rounds.
/// Requires time_scale() to have been read.
inline sc_core::sc_time ns(double value) {
  if (value == 0) return sc_core::SC_ZERO_TIME;
  // sc_time * double is inline and rounds as sc_time(value, SC_NS) does: one tick times the
  // tick count, plus 0.5, truncated (SC_NS is 1e6 fs).
  return core_time_scale.one_tick * (value * core_time_scale.ticks_per_ns);
}

/// ns() for set-up code that may run first: reads the time scale if nobody did.
inline sc_core::sc_time setup_ns(double value) {
  time_scale();
  return ns(value);
}

}  // namespace trnsim::core
