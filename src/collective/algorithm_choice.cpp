#include "collective/algorithm_choice.hpp"

#include <bit>

namespace trnsim::collective {

Algorithm choose_algorithm(Operation operation, Algorithm requested, std::uint64_t bytes,
                           std::uint32_t ranks, std::uint32_t domains, bool even_domains,
                           const config::CollectiveParams& params) {
  if (operation == Operation::kPermute || operation == Operation::kSendRecv || ranks <= 1) {
    return Algorithm::kRing;
  }
  const auto size = static_cast<std::int64_t>(bytes);
  if (operation == Operation::kAllToAll) {
    if (requested == Algorithm::kMesh) return Algorithm::kMesh;
    if (requested == Algorithm::kAuto && size <= params.mesh_max_bytes) return Algorithm::kMesh;
    return Algorithm::kRing;
  }
  Algorithm algorithm = requested;
  if (algorithm == Algorithm::kAuto) {
    if (domains > 1 && even_domains) {
      algorithm = Algorithm::kHierarchical;
    } else if (size <= params.mesh_max_bytes) {
      algorithm = Algorithm::kMesh;
    } else if (size <= params.rdh_max_bytes) {
      algorithm = Algorithm::kRdh;
    } else {
      algorithm = params.kangaring ? Algorithm::kKangaring : Algorithm::kRing;
    }
  }
  // RDH folds extra ranks only for all-reduce; all-gather and reduce-scatter need 2^k ranks.
  if (algorithm == Algorithm::kRdh && operation != Operation::kAllReduce &&
      !std::has_single_bit(ranks)) {
    algorithm = Algorithm::kRing;
  }
  if (algorithm == Algorithm::kHierarchical && !even_domains) algorithm = Algorithm::kRing;
  return algorithm;
}

}  // namespace trnsim::collective
