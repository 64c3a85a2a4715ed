#include "collective/algorithm_choice.hpp"

#include "collective/algorithms.hpp"

namespace trnsim::collective {

Algorithm choose_algorithm(Operation operation, Algorithm requested, std::uint64_t bytes,
                           std::uint32_t ranks, std::uint32_t domains, bool even_domains,
                           const config::CollectiveParams& params) {
  if (operation == Operation::kPermute || operation == Operation::kSendRecv || ranks <= 1) {
    return Algorithm::kRing;
  }
  Algorithm algorithm = requested;
  if (algorithm == Algorithm::kAuto) {
    algorithm = kernel::collective_algorithm_from_name(params.algorithm).value_or(Algorithm::kAuto);
  }
  if (algorithm == Algorithm::kAuto) {
    const auto size = static_cast<std::int64_t>(bytes);
    if (operation == Operation::kAllToAll) {
      algorithm = size <= params.mesh_max_bytes ? Algorithm::kMesh : Algorithm::kRing;
    } else if (domains > 1 && even_domains) {
      algorithm = Algorithm::kHierarchical;
    } else if (size <= params.mesh_max_bytes) {
      algorithm = Algorithm::kMesh;
    } else if (size <= params.rdh_max_bytes) {
      algorithm = Algorithm::kRdh;
    } else {
      algorithm = params.kangaring ? Algorithm::kKangaring : Algorithm::kRing;
    }
  }
  const AlgorithmModel* model = algorithm_model(algorithm);
  if (model == nullptr || !model->supports(operation, ranks, even_domains)) {
    return Algorithm::kRing;
  }
  return algorithm;
}

}  // namespace trnsim::collective
