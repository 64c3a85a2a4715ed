// TensorE dI/dt throttling (Trn2, Trn3; hardware-facts.md §3.8) as a small pure state machine over
// time. When work begins the utilisation limit starts at throttle_initial_fraction and ramps
// linearly (assumed shape) to 1 over throttle_ramp_ns; it re-engages when TensorE utilisation over
// a trailing throttle_window_ns window falls below throttle_reengage_utilization. Time before the
// ramp began counts as busy, so a fresh ramp is not cancelled by the idle time that preceded it.
// Leaves out TDP-driven limits. The timing model stretches each TensorE instruction with
// finish_ns() and reports the stretched interval with record_busy().
#pragma once

#include <deque>

#include "config/params.hpp"

namespace trnsim::cost {

class TensorThrottle {
 public:
  explicit TensorThrottle(const config::TensorEngineParams& tensor);

  /// Utilisation limit in (0, 1] that work starting at now_ns gets (1 when throttling is off).
  /// Precondition (all queries): now_ns >= the start of every recorded busy interval.
  double rate_at(double now_ns) const;

  /// End time, ns, of work needing full_rate_ns at full rate that starts at start_ns, with the
  /// limit rising along the ramp while it runs. Does not change the state.
  double finish_ns(double start_ns, double full_rate_ns) const;

  /// Records that TensorE was busy over [start_ns, end_ns). Starts are non-decreasing.
  void record_busy(double start_ns, double end_ns);

  /// finish_ns(start_ns, full_rate_ns), then record_busy(start_ns, that end), which both look at
  /// the same window: it is computed once. Returns the end.
  double run(double start_ns, double full_rate_ns);

 private:
  struct Interval {
    double begin;
    double end;
  };

  /// True when work starting at t runs at the initial limit: no ramp is running, or the
  /// trailing window ending at t is under-utilised.
  bool engaged_at(double t) const;
  /// finish_ns and record_busy given engaged_at(start_ns).
  double finish_given(bool engaged, double start_ns, double full_rate_ns) const;
  void record_given(bool engaged, double start_ns, double end_ns);
  double busy_between(double begin, double end) const;

  const bool enabled_;
  const double initial_fraction_;
  const double ramp_ns_;
  const double window_ns_;
  const double reengage_utilization_;
  bool ramping_ = false;
  double ramp_start_ns_ = 0;
  std::deque<Interval> busy_;  ///< merged busy intervals that may still fall inside a window
};

}  // namespace trnsim::cost
