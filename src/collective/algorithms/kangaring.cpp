// KangaRing: the ring both ways at once, ceil((n-1)/2) steps per phase (reduce-scatter, then
// all-gather). All-to-all is not supported.
#include "collective/algorithms.hpp"

namespace trnsim::collective {

AlgorithmModel kangaring_algorithm() {
  AlgorithmModel model;
  model.supports = [](Operation operation, std::uint32_t, bool) {
    return operation != Operation::kAllToAll;
  };
  model.build = [](Schedule& schedule, std::uint64_t bytes, const RankLayout& layout) {
    const std::uint32_t ring = schedule.add_groups({layout.ring});
    const std::uint64_t chunk = ceil_div(bytes, schedule.ranks());
    if (schedule.operation() != Operation::kAllGather) schedule.biring_phase(ring, chunk, true);
    if (schedule.operation() != Operation::kReduceScatter) {
      schedule.biring_phase(ring, chunk, false);
    }
  };
  return model;
}

}  // namespace trnsim::collective
