// Mesh: every rank sends a 1/n chunk to every other rank at once; all-reduce in two steps
// (reduce, then gather), the others in one. Runs every operation.
#include "collective/algorithms.hpp"

namespace trnsim::collective {

AlgorithmModel mesh_algorithm() {
  AlgorithmModel model;
  model.supports = [](Operation, std::uint32_t, bool) { return true; };
  model.build = [](Schedule& schedule, std::uint64_t bytes, const RankLayout& /*layout*/) {
    const std::uint32_t group = schedule.add_groups({schedule.all_ranks()});
    const std::uint64_t chunk = ceil_div(bytes, schedule.ranks());
    constexpr auto kMesh = Schedule::Pattern::kMesh;
    switch (schedule.operation()) {
      case Operation::kAllReduce:
        schedule.add_step(kMesh, group, 1, 0, chunk, true);
        schedule.add_step(kMesh, group, 1, 0, chunk, false);
        break;
      case Operation::kReduceScatter:
        schedule.add_step(kMesh, group, 1, 0, chunk, true);
        break;
      case Operation::kAllGather:
      case Operation::kAllToAll:
        schedule.add_step(kMesh, group, 1, 0, chunk, false);
        break;
      case Operation::kPermute:
      case Operation::kSendRecv:
        break;
    }
  };
  return model;
}

}  // namespace trnsim::collective
