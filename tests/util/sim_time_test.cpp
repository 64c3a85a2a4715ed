// The one rule of simulated time (util/sim_time.hpp): ticks to ns is a correctly rounded
// division, ns to ticks rounds to the nearest tick as sc_time(ns, SC_NS) does, and the inline
// forms agree with the SystemC calls they stand for.
#include "util/sim_time.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

namespace trnsim::sim_time {
namespace {

TEST(SimTime, TicksToNsIsOneCorrectlyRoundedDivision) {
  constexpr double kFemtoseconds = 1e6;  // ticks per ns at 1 fs
  // Decimal times come out as the double a reader writes for them.
  EXPECT_EQ(ticks_to_ns(1'500'000, kFemtoseconds), 1.5);
  EXPECT_EQ(ticks_to_ns(71'300'000'000, kFemtoseconds), 71300.0);
  EXPECT_EQ(ticks_to_ns(178'087, kFemtoseconds), 0.178087);
  EXPECT_EQ(ticks_to_ns(1, 1e3), 0.001);  // 1 ps ticks
  // Whole ns are exact, and every tick count of a run up to 2^45 fs (35 ms) survives the round
  // trip (a double's ulp there is below 0.01 fs).
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<std::uint64_t> ticks(0, (std::uint64_t{1} << 45) - 1);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t whole_ns = ticks(rng) >> 13;
    EXPECT_EQ(ticks_to_ns(whole_ns * 1'000'000, kFemtoseconds), static_cast<double>(whole_ns));
    const std::uint64_t t = ticks(rng);
    EXPECT_EQ(ns_to_ticks(ticks_to_ns(t, kFemtoseconds), kFemtoseconds), t) << t;
  }
}

TEST(SimTime, NsToTicksRoundsToTheNearestTickAndClampsAtZero) {
  EXPECT_EQ(ns_to_ticks(1.5, 1e6), 1'500'000u);
  EXPECT_EQ(ns_to_ticks(0.25, 2.0), 1u);  // half a tick (of 0.5 ns) rounds up
  EXPECT_EQ(ns_to_ticks(0.75, 2.0), 2u);
  EXPECT_EQ(ns_to_ticks(0.2, 2.0), 0u);
  EXPECT_EQ(ns_to_ticks(0.0, 1e6), 0u);
  EXPECT_EQ(ns_to_ticks(-3.0, 1e6), 0u);
  EXPECT_EQ(ns_to_ticks(std::numeric_limits<double>::quiet_NaN(), 1e6), 0u);
}

TEST(SimTime, TheInlineFormsMatchSystemC) {
  // This process keeps SystemC's default resolution, 1 ps.
  EXPECT_EQ(scale().ticks_per_ns, 1e3);
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> exponent(-2.0, 10.0);
  for (int i = 0; i < 100000; ++i) {
    const double ns = std::pow(10.0, exponent(rng));
    const sc_core::sc_time expected(ns, sc_core::SC_NS);
    EXPECT_EQ(from_ns(ns), expected) << ns;
    EXPECT_EQ(to_ns(expected), static_cast<double>(expected.value()) / 1e3);
  }
  EXPECT_EQ(from_ns(0.0), sc_core::SC_ZERO_TIME);
  EXPECT_EQ(from_ns(-3.0), sc_core::SC_ZERO_TIME);
  EXPECT_EQ(to_ns(sc_core::sc_time(2.5, sc_core::SC_NS)), 2.5);
}

}  // namespace
}  // namespace trnsim::sim_time

// libsystemc.so refers to sc_main (its own main() calls it); gtest_main provides main(), so this
// is never called.
extern "C" int sc_main(int /*argc*/, char* /*argv*/[]) {
  return 1;
}
