// Ring: the ranks in ring order, each sending to the next. All-reduce is a reduce-scatter then
// an all-gather of 1/n chunks (2(n-1) steps), all-gather and reduce-scatter n-1 steps, all-to-all
// a pairwise exchange (in step k every rank sends its block for rank + k). Runs every operation;
// it is what an algorithm falls back to where it cannot run.
#include "collective/algorithms.hpp"

namespace trnsim::collective {

AlgorithmModel ring_algorithm() {
  AlgorithmModel model;
  model.supports = [](Operation, std::uint32_t, bool) { return true; };
  model.build = [](Schedule& schedule, std::uint64_t bytes, const RankLayout& layout) {
    const std::uint32_t ring = schedule.add_groups({layout.ring});
    const std::uint32_t n = schedule.ranks();
    const std::uint64_t chunk = ceil_div(bytes, n);
    switch (schedule.operation()) {
      case Operation::kAllReduce:
        schedule.ring_all_reduce(ring, bytes);
        break;
      case Operation::kAllGather:
        schedule.ring_phase(ring, chunk, false, n - 1);
        break;
      case Operation::kReduceScatter:
        schedule.ring_phase(ring, chunk, true, n - 1);
        break;
      case Operation::kAllToAll:
        for (std::uint32_t k = 1; k < n; ++k) {
          schedule.add_step(Schedule::Pattern::kShift, ring, k, 0, chunk, false);
        }
        break;
      case Operation::kPermute:
      case Operation::kSendRecv:
        break;
    }
  };
  return model;
}

}  // namespace trnsim::collective
