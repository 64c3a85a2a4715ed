// Engine cost models by name (core/cost/cost_models.hpp): the built-in `analytic` model of each
// compute engine, a model a program registers, selected per engine with <engine>.cost_model, and
// the errors for names nothing registered. Whole runs use the Trainium2 config: VectorE at
// 0.96 GHz (configs/trn2.json).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "config/load.hpp"
#include "config/schema.hpp"
#include "core/cost/cost_models.hpp"
#include "sim_harness.hpp"
#include "util/error.hpp"

namespace trnsim::testing {
namespace {

using kernel::Engine;

/// A test's own VectorE model: every instruction takes 960 cycles, 1000 ns at 0.96 GHz.
cost::EngineCost fixed_960_cycles(const kernel::Instruction& /*instruction*/,
                                  const config::Params& params,
                                  const cost::CostContext& /*context*/) {
  cost::EngineCost cost;
  cost.cycles = 960;
  cost.ns = 960 * params.vector.cycle_ns();
  return cost;
}

std::string three_independent_adds() {
  return R"({"format": "trnsim-kernel/1", "name": "adds",
    "tensors": {
      "x": {"memory": "sbuf", "dtype": "float32", "shape": [128, 64]},
      "a": {"memory": "sbuf", "dtype": "float32", "shape": [128, 64]},
      "b": {"memory": "sbuf", "dtype": "float32", "shape": [128, 64]},
      "c": {"memory": "sbuf", "dtype": "float32", "shape": [128, 64]}},
    "program": [
      {"op": "tensor_tensor", "dst": "a", "in0": "x", "in1": "x", "alu": "add"},
      {"op": "tensor_tensor", "dst": "b", "in0": "x", "in1": "x", "alu": "add"},
      {"op": "tensor_tensor", "dst": "c", "in0": "x", "in1": "x", "alu": "add"}]})";
}

TEST(CostModels, EveryNameAConfigAcceptsHasAModelAndTheOtherWayRound) {
  // Before any registration: the built-in `analytic` and `instant` of each compute engine.
  for (Engine engine : {Engine::kTensor, Engine::kVector, Engine::kScalar, Engine::kGpSimd}) {
    const std::string key = std::string(kernel::engine_name(engine)) + ".cost_model";
    const config::FieldInfo* field = config::find_field(key);
    ASSERT_NE(field, nullptr) << key;
    std::vector<std::string> choices = field->choices;
    std::sort(choices.begin(), choices.end());
    EXPECT_EQ(choices, cost::cost_model_names(engine)) << key;
    EXPECT_EQ(cost::cost_model_names(engine), (std::vector<std::string>{"analytic", "instant"}))
        << key;
  }
  EXPECT_THROW(cost::cost_model_names(Engine::kDma), std::logic_error);
  EXPECT_THROW(cost::register_cost_model(Engine::kSync, "x", fixed_960_cycles), std::logic_error);
}

TEST(CostModels, ARegisteredModelTimesTheEngineThatSelectsIt) {
  cost::register_cost_model(Engine::kVector, "fixed_960_cycles", fixed_960_cycles);
  // A config accepts the name once it is registered.
  const config::Params params =
      config::load_config("trn2", {"vector.cost_model=fixed_960_cycles"}).params;
  EXPECT_EQ(params.vector.cost_model, "fixed_960_cycles");

  // Three independent adds on VectorE, one after the other: 3 x 1000 ns busy.
  const auto stats =
      simulate_in_child(three_independent_adds(), "trn2", {"vector.cost_model=fixed_960_cycles"});
  ASSERT_FALSE(stats.contains("error")) << stats.dump();
  EXPECT_NEAR(stats["cores"][0]["engines"]["vector"]["active_ns"].get<double>(), 3000.0, 1e-6);

  // The analytic model: 64 fp32 elements per partition, well under 1000 ns each.
  const auto analytic = simulate_in_child(three_independent_adds(), "trn2");
  ASSERT_FALSE(analytic.contains("error")) << analytic.dump();
  EXPECT_LT(analytic["cores"][0]["engines"]["vector"]["active_ns"].get<double>(), 1000.0);
}

TEST(CostModels, InstantTakesOneEngineCycleAndTheOtherEnginesKeepTheirModel) {
  // Three adds on VectorE (0.96 GHz): one cycle each, 3 / 0.96 = 3.125 ns busy. A ScalarE copy
  // of x keeps the analytic cost: max(MIN_II 64, N = 64) = 64 cycles at
  // 1.2 GHz = 53.333 ns (docs/cost-models.md "ScalarE").
  std::string kernel = three_independent_adds();
  kernel.insert(kernel.rfind(']'),
                R"(, {"op": "activation", "dst": "c", "src": "x", "func": "copy"})");
  const auto stats = simulate_in_child(kernel, "trn2", {"vector.cost_model=instant"});
  ASSERT_FALSE(stats.contains("error")) << stats.dump();
  const auto& engines = stats["cores"][0]["engines"];
  EXPECT_NEAR(engines["vector"]["active_ns"].get<double>(), 3.125, 1e-6);
  EXPECT_NEAR(engines["scalar"]["active_ns"].get<double>(), 64 / 1.2, 1e-6);
}

TEST(CostModels, AnUnregisteredNameIsAnInputErrorNamingTheKey) {
  try {
    config::load_config("trn2", {"scalar.cost_model=nonexistent"});
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("scalar.cost_model"), std::string::npos) << message;
    EXPECT_NE(message.find("analytic"), std::string::npos) << message;
    EXPECT_NE(message.find("nonexistent"), std::string::npos) << message;
  }
  // Parameters that bypass the config loader meet the same check when the engine is built.
  config::Params params = config::load_config("trn2", {}).params;
  params.gpsimd.cost_model = "nonexistent";
  EXPECT_THROW(cost::selected_cost_model(Engine::kGpSimd, params), InputError);
  EXPECT_THROW(cost::selected_cost_model(Engine::kSync, params), std::logic_error);
}

}  // namespace
}  // namespace trnsim::testing
