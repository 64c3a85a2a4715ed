// sim_time.hpp's inline conversions against the library calls they replace: round_ticks is
// std::llround for positive tick counts, from_ns is sc_time::from_value(llround(ns / tick)).
#include "memory/sim_time.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

namespace trnsim::memory {
namespace {

TEST(SimTime, RoundTicksIsLlround) {
  const double cases[] = {1e-300,
                          0.25,
                          0.5,
                          0.49999999999999994,
                          1.5,
                          2.5,
                          2.4999999999999996,
                          1e6 + 0.5,
                          4503599627370495.5,
                          4503599627370496.0,
                          9007199254740993.0,
                          1e18};
  for (const double ticks : cases) {
    EXPECT_EQ(round_ticks(ticks), static_cast<std::uint64_t>(std::llround(ticks))) << ticks;
  }
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(-3.0, 17.0);
  for (int i = 0; i < 200000; ++i) {
    const double ticks = std::pow(10.0, exponent(rng));
    const double half = std::floor(ticks) + 0.5;  // exact halves too
    EXPECT_EQ(round_ticks(ticks), static_cast<std::uint64_t>(std::llround(ticks))) << ticks;
    EXPECT_EQ(round_ticks(half), static_cast<std::uint64_t>(std::llround(half))) << half;
  }
}

TEST(SimTime, FromNsMatchesFromValue) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> exponent(-7.0, 10.0);
  const double tick_ns = ns_per_tick();
  for (int i = 0; i < 100000; ++i) {
    const double ns = std::pow(10.0, exponent(rng));
    const sc_core::sc_time expected =
        sc_core::sc_time::from_value(static_cast<sc_dt::uint64>(std::llround(ns / tick_ns)));
    EXPECT_EQ(from_ns(ns), expected) << ns;
  }
  EXPECT_EQ(from_ns(0.0), sc_core::SC_ZERO_TIME);
  EXPECT_EQ(from_ns(-3.0), sc_core::SC_ZERO_TIME);
}

}  // namespace
}  // namespace trnsim::memory

// libsystemc.so refers to sc_main (its own main() calls it); gtest_main provides main(), so this
// is never called.
extern "C" int sc_main(int /*argc*/, char* /*argv*/[]) {
  return 1;
}
