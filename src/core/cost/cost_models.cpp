#include "core/cost/cost_models.hpp"

#include <array>
#include <map>
#include <stdexcept>
#include <utility>

#include "config/schema.hpp"
#include "util/error.hpp"
#include "util/strings.hpp"

namespace trnsim::cost {

namespace {

using kernel::Engine;

/// Index of a compute engine in the registry (its kernel::Engine value).
std::size_t compute_index(Engine engine) {
  if (!kernel::engine_info(engine).compute) {
    throw std::logic_error("cost models: '" + std::string(kernel::engine_name(engine)) +
                           "' is not a compute engine");
  }
  return static_cast<std::size_t>(engine);
}

/// Each engine's models by name; only the compute engines' entries are used.
using Registry = std::array<std::map<std::string, CostModel>, kernel::kEngineCount>;

/// The built-in models, keyed by the names config/params.hpp declares for them.
Registry builtins() {
  Registry registry;
  registry[compute_index(Engine::kTensor)][kAnalyticCostModel] = tensor_cost;
  registry[compute_index(Engine::kVector)][kAnalyticCostModel] = vector_cost;
  registry[compute_index(Engine::kScalar)][kAnalyticCostModel] = scalar_cost;
  registry[compute_index(Engine::kGpSimd)][kAnalyticCostModel] = gpsimd_cost;
  for (Engine engine : {Engine::kTensor, Engine::kVector, Engine::kScalar, Engine::kGpSimd}) {
    registry[compute_index(engine)]["instant"] = instant_cost;
  }
  return registry;
}

Registry& registry() {
  static Registry instance = builtins();
  return instance;
}

/// The config key that selects `engine`'s model.
std::string config_key(Engine engine) {
  return std::string(kernel::engine_name(engine)) + ".cost_model";
}

/// The model name `params` selects for `engine`, a compute engine.
const std::string& selected_name(Engine engine, const config::Params& params) {
  switch (engine) {
    case Engine::kTensor:
      return params.tensor.cost_model;
    case Engine::kVector:
      return params.vector.cost_model;
    case Engine::kScalar:
      return params.scalar.cost_model;
    case Engine::kGpSimd:
      return params.gpsimd.cost_model;
    case Engine::kSync:
    case Engine::kDma:
    case Engine::kCollective:
      break;
  }
  throw std::logic_error("cost models: no cost model key for a non-compute engine");
}

}  // namespace

void register_cost_model(Engine engine, const std::string& name, CostModel model) {
  if (!model) throw std::logic_error("cost::register_cost_model: empty model '" + name + "'");
  registry()[compute_index(engine)][name] = std::move(model);
  config::add_model_name(config_key(engine), name);
}

std::vector<std::string> cost_model_names(Engine engine) {
  std::vector<std::string> names;
  for (const auto& entry : registry()[compute_index(engine)]) names.push_back(entry.first);
  return names;
}

const CostModel& selected_cost_model(Engine engine, const config::Params& params) {
  const auto& models = registry()[compute_index(engine)];  // throws for a non-compute engine
  const std::string& name = selected_name(engine, params);
  const auto found = models.find(name);
  if (found == models.end()) {
    throw InputError("config '" + params.name + "': " + config_key(engine),
                     "expected one of " + util::join(cost_model_names(engine), ", ") + ", found '" +
                         name + "' (no cost model of that name is registered)");
  }
  return found->second;
}

}  // namespace trnsim::cost
