// Registering models through the public API (trnsim/models.hpp): what it accepts, what it
// rejects, and that a registered name becomes a value configs accept.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <trnsim/trnsim.hpp>

namespace {

trnsim::EngineCycles one_cycle(const trnsim::CostQuery& /*query*/) {
  trnsim::EngineCycles cycles;
  cycles.cycles = 1;
  return cycles;
}

TEST(RegisterCostModel, AcceptsTheComputeEnginesOnly) {
  for (const char* engine : {"sync", "dma", "collective", "tensorr", ""}) {
    EXPECT_THROW(trnsim::register_cost_model(engine, "one_cycle", one_cycle), std::invalid_argument)
        << engine;
  }
  EXPECT_THROW(trnsim::register_cost_model("vector", "empty", trnsim::CostModelFunction{}),
               std::invalid_argument);
}

TEST(RegisterCostModel, MakesTheNameAValueOfTheEnginesKeyAlone) {
  // Before registration the name is unknown to the config.
  EXPECT_THROW(trnsim::Config::load("trn2", {"gpsimd.cost_model=one_cycle_api"}),
               trnsim::InvalidInput);
  trnsim::register_cost_model("gpsimd", "one_cycle_api", one_cycle);
  EXPECT_NO_THROW(trnsim::Config::load("trn2", {"gpsimd.cost_model=one_cycle_api"}));
  // Another engine's key does not accept it.
  try {
    trnsim::Config::load("trn2", {"scalar.cost_model=one_cycle_api"});
    FAIL() << "expected InvalidInput";
  } catch (const trnsim::InvalidInput& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("scalar.cost_model"), std::string::npos) << message;
    EXPECT_NE(message.find("one_cycle_api"), std::string::npos) << message;
  }
}

TEST(RegisterHbmModel, RejectsAnEmptyFactory) {
  EXPECT_THROW(trnsim::register_hbm_model("empty", trnsim::HbmTargetFactory{}),
               std::invalid_argument);
}

}  // namespace
