#include "collective/algorithms.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "config/schema.hpp"

namespace trnsim::collective {

namespace {

/// Models by algorithm id; the built-in ones at their kernel::CollectiveAlgorithm ids.
std::vector<std::unique_ptr<AlgorithmModel>>& models() {
  static std::vector<std::unique_ptr<AlgorithmModel>> registered = [] {
    std::vector<std::unique_ptr<AlgorithmModel>> builtins(
        static_cast<std::size_t>(Algorithm::kRegistered));
    builtins[static_cast<std::size_t>(Algorithm::kRing)] =
        std::make_unique<AlgorithmModel>(ring_algorithm());
    builtins[static_cast<std::size_t>(Algorithm::kMesh)] =
        std::make_unique<AlgorithmModel>(mesh_algorithm());
    builtins[static_cast<std::size_t>(Algorithm::kRdh)] =
        std::make_unique<AlgorithmModel>(rdh_algorithm());
    builtins[static_cast<std::size_t>(Algorithm::kKangaring)] =
        std::make_unique<AlgorithmModel>(kangaring_algorithm());
    builtins[static_cast<std::size_t>(Algorithm::kHierarchical)] =
        std::make_unique<AlgorithmModel>(hierarchical_algorithm());
    return builtins;
  }();
  return registered;
}

}  // namespace

Algorithm register_algorithm(std::string_view name, AlgorithmModel model) {
  const Algorithm id = kernel::add_collective_algorithm_name(name);
  config::add_model_name("collective.algorithm", name);
  const auto index = static_cast<std::size_t>(id);
  if (models().size() <= index) models().resize(index + 1);
  models()[index] = std::make_unique<AlgorithmModel>(std::move(model));
  return id;
}

const AlgorithmModel* algorithm_model(Algorithm algorithm) {
  const auto index = static_cast<std::size_t>(algorithm);
  return index < models().size() ? models()[index].get() : nullptr;
}

}  // namespace trnsim::collective
