#include "core/cost/tensor_throttle.hpp"

#include <algorithm>
#include <cmath>

namespace trnsim::cost {

TensorThrottle::TensorThrottle(const config::TensorEngineParams& tensor)
    : enabled_(tensor.throttle_enabled),
      initial_fraction_(tensor.throttle_initial_fraction),
      ramp_ns_(tensor.throttle_ramp_ns),
      window_ns_(tensor.throttle_window_ns),
      reengage_utilization_(tensor.throttle_reengage_utilization) {}

double TensorThrottle::busy_between(double begin, double end) const {
  double busy = 0;
  for (const Interval& interval : busy_) {
    busy += std::max(0.0, std::min(end, interval.end) - std::max(begin, interval.begin));
  }
  return busy;
}

bool TensorThrottle::engaged_at(double t) const {
  if (!ramping_) return true;
  // Utilisation over [t - W, t] with the part before the ramp counted as busy is below the
  // threshold exactly when the idle time since the ramp began exceeds (1 - threshold) * W.
  const double window_begin = std::max(t - window_ns_, ramp_start_ns_);
  const double idle = (t - window_begin) - busy_between(window_begin, t);
  return idle > (1.0 - reengage_utilization_) * window_ns_;
}

double TensorThrottle::rate_at(double now_ns) const {
  if (!enabled_) return 1.0;
  if (engaged_at(now_ns)) return ramp_ns_ > 0 ? initial_fraction_ : 1.0;
  if (ramp_ns_ <= 0) return 1.0;
  const double progress = std::min(1.0, (now_ns - ramp_start_ns_) / ramp_ns_);
  return initial_fraction_ + (1.0 - initial_fraction_) * progress;
}

double TensorThrottle::finish_ns(double start_ns, double full_rate_ns) const {
  if (!enabled_ || ramp_ns_ <= 0) return start_ns + full_rate_ns;
  return finish_given(engaged_at(start_ns), start_ns, full_rate_ns);
}

double TensorThrottle::run(double start_ns, double full_rate_ns) {
  if (!enabled_) return start_ns + full_rate_ns;
  const bool engaged = engaged_at(start_ns);
  const double end_ns =
      ramp_ns_ <= 0 ? start_ns + full_rate_ns : finish_given(engaged, start_ns, full_rate_ns);
  record_given(engaged, start_ns, end_ns);
  return end_ns;
}

double TensorThrottle::finish_given(bool engaged, double start_ns, double full_rate_ns) const {
  const double ramp_start = engaged ? start_ns : ramp_start_ns_;
  const double full_at = ramp_start + ramp_ns_;
  if (start_ns >= full_at) return start_ns + full_rate_ns;
  // Rate r(t) = r_start + slope * (t - start_ns) until full_at, then 1.
  const double slope = (1.0 - initial_fraction_) / ramp_ns_;
  const double r_start = initial_fraction_ + slope * (start_ns - ramp_start);
  const double work_until_full = (full_at - start_ns) * (r_start + 1.0) / 2.0;
  if (full_rate_ns >= work_until_full) return full_at + (full_rate_ns - work_until_full);
  if (slope <= 0) return start_ns + full_rate_ns / r_start;
  // Solve r_start * d + slope * d^2 / 2 = full_rate_ns for the duration d.
  const double d = (-r_start + std::sqrt(r_start * r_start + 2.0 * slope * full_rate_ns)) / slope;
  return start_ns + d;
}

void TensorThrottle::record_busy(double start_ns, double end_ns) {
  if (!enabled_) return;
  record_given(engaged_at(start_ns), start_ns, end_ns);
}

void TensorThrottle::record_given(bool engaged, double start_ns, double end_ns) {
  if (engaged) {
    ramping_ = true;
    ramp_start_ns_ = start_ns;
    busy_.clear();
  }
  // Later queries look at [t - W, t] with t >= start_ns: older intervals can never count again.
  while (!busy_.empty() && busy_.front().end <= start_ns - window_ns_) busy_.pop_front();
  if (!busy_.empty() && start_ns <= busy_.back().end) {
    busy_.back().end = std::max(busy_.back().end, end_ns);
  } else {
    busy_.push_back({start_ns, end_ns});
  }
}

}  // namespace trnsim::cost
