// Contract tests of the TensorE throttle (hardware-facts.md §3.8) with the Trn2 parameters: initial
// limit 0.5, linear ramp to 1 over 3000 ns, re-engage below 50% utilisation over a 3000 ns window
// (i.e. more than 1500 ns idle in the window). Times in ns, worked out by hand.
#include "core/cost/tensor_throttle.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "cost_test_support.hpp"

namespace trnsim::cost::test {
namespace {

TEST(TensorThrottle, DisabledOnTrn1) {
  TensorThrottle throttle(trn1().tensor);
  EXPECT_DOUBLE_EQ(throttle.rate_at(0), 1.0);
  EXPECT_DOUBLE_EQ(throttle.finish_ns(100, 1000), 1100.0);
}

TEST(TensorThrottle, WorkStartsAtHalfRateAndRampsLinearly) {
  TensorThrottle throttle(trn2().tensor);
  EXPECT_DOUBLE_EQ(throttle.rate_at(0), 0.5);
  // r(t) = 0.5 + t / 6000. 1000 ns of full-rate work from t=0: 0.5 d + d^2 / 12000 = 1000
  // -> d^2 + 6000 d - 12e6 = 0 -> d = (-6000 + sqrt(84e6)) / 2 = 1582.5757.
  EXPECT_NEAR(throttle.finish_ns(0, 1000), 1582.5757, 1e-3);
  // 3000 ns of work: the ramp delivers (0.5 + 1) / 2 * 3000 = 2250 by t=3000, the remaining
  // 750 at full rate -> 3750.
  EXPECT_NEAR(throttle.finish_ns(0, 3000), 3750.0, 1e-9);
  throttle.record_busy(0, 3750);
  // Mid-ramp limit: 0.5 + 0.5 * 1500 / 3000 = 0.75; after the ramp: 1.
  EXPECT_DOUBLE_EQ(throttle.rate_at(1500), 0.75);
  EXPECT_DOUBLE_EQ(throttle.rate_at(3750), 1.0);
  EXPECT_DOUBLE_EQ(throttle.finish_ns(3750, 100), 3850.0);
}

TEST(TensorThrottle, WorkResumedMidRampContinuesTheRamp) {
  TensorThrottle throttle(trn2().tensor);
  throttle.record_busy(0, 1000);
  // From t=1000 the rate is 0.5 + 1000 / 6000 = 2/3; by t=3000 the ramp delivers
  // 2000 * (2/3 + 1) / 2 = 1666.67; 3000 - 1666.67 = 1333.33 more at full rate -> 4333.33.
  EXPECT_NEAR(throttle.finish_ns(1000, 3000), 4333.3333, 1e-3);
}

TEST(TensorThrottle, ReengagesWhenWindowUtilisationFallsBelowHalf) {
  TensorThrottle throttle(trn2().tensor);
  throttle.record_busy(0, 3750);
  // At 5250 the window [2250, 5250] is 1500 busy, 1500 idle: exactly 50%, not below -> full.
  EXPECT_DOUBLE_EQ(throttle.rate_at(5250), 1.0);
  // At 5251 idle is 1501 > 1500 -> limit re-engaged at 0.5.
  EXPECT_DOUBLE_EQ(throttle.rate_at(5251), 0.5);
  // A 1000 ns gap does not re-engage: window [1750, 4750] has 1000 ns idle.
  TensorThrottle short_gap(trn2().tensor);
  short_gap.record_busy(0, 3750);
  EXPECT_DOUBLE_EQ(short_gap.rate_at(4750), 1.0);
  short_gap.record_busy(4750, 5000);
  EXPECT_DOUBLE_EQ(short_gap.rate_at(5000), 1.0);
}

TEST(TensorThrottle, IdleTimeBeforeTheRampDoesNotCancelIt) {
  TensorThrottle throttle(trn2().tensor);
  throttle.record_busy(0, 500);
  // At 1900: idle since the ramp began = 1400 <= 1500 -> still ramping,
  // 0.5 + 0.5 * 1900 / 3000 = 0.816667.
  EXPECT_NEAR(throttle.rate_at(1900), 0.816667, 1e-6);
  // At 2001: 1501 ns idle -> re-engaged.
  EXPECT_DOUBLE_EQ(throttle.rate_at(2001), 0.5);
}

TEST(TensorThrottle, LowDutyCycleStaysThrottled) {
  // 100 ns of work every 1000 ns (10% utilisation).
  TensorThrottle throttle(trn2().tensor);
  throttle.record_busy(0, 100);
  throttle.record_busy(1000, 1100);  // idle so far 900 -> ramp continues
  EXPECT_NEAR(throttle.rate_at(1000), 0.5 + 0.5 * 1000.0 / 3000.0, 1e-12);
  // At 2000: window [0, 2000] has 1800 idle > 1500 -> re-engaged; the ramp restarts at 2000.
  EXPECT_DOUBLE_EQ(throttle.rate_at(2000), 0.5);
  throttle.record_busy(2000, 2100);
  // At 3000: 900 idle since 2000 -> ramping from 2000: 0.5 + 0.5 * 1000 / 3000 = 0.6667.
  EXPECT_NEAR(throttle.rate_at(3000), 0.666667, 1e-6);
}

TEST(TensorThrottle, ZeroRampMeansNoLimit) {
  config::TensorEngineParams tensor = trn2().tensor;
  tensor.throttle_ramp_ns = 0;
  TensorThrottle throttle(tensor);
  EXPECT_DOUBLE_EQ(throttle.rate_at(0), 1.0);
  EXPECT_DOUBLE_EQ(throttle.finish_ns(0, 500), 500.0);
}

// run() is finish_ns then record_busy: on a twin fed the same work (bursts, gaps long enough
// to re-engage, and with the ramp off) every end and every later rate must agree exactly.
TEST(TensorThrottle, RunIsFinishThenRecord) {
  for (const double ramp_ns : {3000.0, 0.0}) {
    config::TensorEngineParams tensor = trn2().tensor;
    tensor.throttle_ramp_ns = ramp_ns;
    TensorThrottle by_run(tensor);
    TensorThrottle by_parts(tensor);
    double start = 0;
    for (int i = 0; i < 400; ++i) {
      const double work = 64.0 + (i % 7) * 37.5;
      const double end = by_parts.finish_ns(start, work);
      by_parts.record_busy(start, end);
      ASSERT_EQ(by_run.run(start, work), end) << "instruction " << i << ", ramp " << ramp_ns;
      ASSERT_EQ(by_run.rate_at(end), by_parts.rate_at(end)) << "instruction " << i;
      start = end + (i % 50 == 49 ? 4000.0 : (i % 5) * 10.0);  // now and then idle > window
    }
  }
  TensorThrottle off(trn1().tensor);
  EXPECT_DOUBLE_EQ(off.run(10, 500), 510.0);
}

}  // namespace
}  // namespace trnsim::cost::test
