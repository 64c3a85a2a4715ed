// Hierarchical: rings inside each EFA domain, then across the domains between ranks of the same
// local index, then inside again (all-reduce: reduce-scatter inside, all-reduce across,
// all-gather inside). Needs domains of equal size; all-to-all is not supported.
#include <map>

#include "collective/algorithms.hpp"

namespace trnsim::collective {

AlgorithmModel hierarchical_algorithm() {
  AlgorithmModel model;
  model.supports = [](Operation operation, std::uint32_t, bool even_domains) {
    return operation != Operation::kAllToAll && even_domains;
  };
  model.build = [](Schedule& schedule, std::uint64_t bytes, const RankLayout& layout) {
    std::map<std::uint32_t, std::vector<std::uint32_t>> by_domain;
    for (const std::uint32_t rank : layout.ring) by_domain[layout.domain[rank]].push_back(rank);
    const auto domains = static_cast<std::uint32_t>(by_domain.size());
    const auto m = static_cast<std::uint32_t>(by_domain.begin()->second.size());
    std::vector<std::vector<std::uint32_t>> intra;
    std::vector<std::vector<std::uint32_t>> inter(m);
    for (const auto& [domain, members] : by_domain) {
      intra.push_back(members);
      for (std::uint32_t i = 0; i < m; ++i) inter[i].push_back(members[i]);
    }
    const std::uint32_t inside = schedule.add_groups(std::move(intra));
    const std::uint32_t across = schedule.add_groups(std::move(inter));
    const std::uint64_t n = static_cast<std::uint64_t>(m) * domains;
    switch (schedule.operation()) {
      case Operation::kAllReduce: {
        const std::uint64_t shard = ceil_div(bytes, m);
        if (m > 1) schedule.ring_phase(inside, shard, true, m - 1);
        schedule.ring_all_reduce(across, shard);
        if (m > 1) schedule.ring_phase(inside, shard, false, m - 1);
        break;
      }
      case Operation::kAllGather:
        if (m > 1) schedule.ring_phase(inside, ceil_div(bytes, n), false, m - 1);
        if (domains > 1) {
          schedule.ring_phase(across, ceil_div(bytes, domains), false, domains - 1);
        }
        break;
      case Operation::kReduceScatter:
        if (domains > 1) {
          schedule.ring_phase(across, ceil_div(bytes, domains), true, domains - 1);
        }
        if (m > 1) schedule.ring_phase(inside, ceil_div(bytes, n), true, m - 1);
        break;
      case Operation::kAllToAll:
      case Operation::kPermute:
      case Operation::kSendRecv:
        break;
    }
  };
  return model;
}

}  // namespace trnsim::collective
