// The engines' cost models by the name a config selects them with (`tensor.cost_model`,
// `vector.cost_model`, `scalar.cost_model`, `gpsimd.cost_model`), like the memory system's models
// (system/backends.hpp). Every compute engine has two built-in models: `analytic`, the per-op
// formulas of cost_model.hpp (docs/cost-models.md, the default), and `instant`, one cycle per
// instruction (instant_cost: the what-if "this engine costs nothing"). A new model is a new file
// with its function and one register_cost_model() call; its name becomes a value of that engine's
// config key. A model is a pure function (cost_model.hpp states what it may and may not know); the
// engine memoises its results by instruction content and context, so it must not keep state either.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "config/params.hpp"
#include "core/cost/cost_model.hpp"
#include "kernel/instruction.hpp"

namespace trnsim::cost {

/// One engine's cost model: the cost of an instruction of that engine, given its context.
using CostModel =
    std::function<EngineCost(const kernel::Instruction& instruction, const config::Params& params,
                             const CostContext& context)>;

/// The name of every compute engine's default model.
inline constexpr const char* kAnalyticCostModel = "analytic";

/// Registers `model` as `<engine>.cost_model` = `name` (replacing one of that name, also the
/// built-in) and makes configs accept the name. `engine` is one of the four compute engines
/// (std::logic_error otherwise). Not thread-safe: call before configs load.
void register_cost_model(kernel::Engine engine, const std::string& name, CostModel model);

/// The registered names of `engine`'s models, sorted.
std::vector<std::string> cost_model_names(kernel::Engine engine);

/// The model `params` selects for `engine` (a compute engine). Throws InputError for a name
/// nothing registered (a config loaded before its model was registered).
const CostModel& selected_cost_model(kernel::Engine engine, const config::Params& params);

}  // namespace trnsim::cost
