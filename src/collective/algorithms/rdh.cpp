// RDH, recursive halving and doubling: log2(n) exchanges with XOR partners, halving the message
// (reduce-scatter) then doubling it back (all-gather). For all-reduce over a rank count that is
// not a power of two, the extra ranks first fold into partners and unfold at the end; the other
// operations need 2^k ranks. All-to-all is not supported.
#include <bit>

#include "collective/algorithms.hpp"

namespace trnsim::collective {

AlgorithmModel rdh_algorithm() {
  AlgorithmModel model;
  model.supports = [](Operation operation, std::uint32_t ranks, bool /*even_domains*/) {
    return operation == Operation::kAllReduce ||
           (operation != Operation::kAllToAll && std::has_single_bit(ranks));
  };
  model.build = [](Schedule& schedule, std::uint64_t bytes, const RankLayout& /*layout*/) {
    using Pattern = Schedule::Pattern;
    // Rank order (pid order): on a torus numbered x + X*y the XOR partners are the hypercube
    // neighbours of R-INTRA's "2D torus viewed as a 4D hypercube".
    const std::uint32_t ranks = schedule.ranks();
    const std::uint32_t p = std::bit_floor(ranks);
    const auto levels = static_cast<std::uint32_t>(std::countr_zero(p));
    const std::vector<std::uint32_t> all = schedule.all_ranks();
    const std::uint32_t everyone = schedule.add_groups({all});
    std::uint32_t core = everyone;
    if (p != ranks) {
      core = schedule.add_groups({std::vector<std::uint32_t>(all.begin(), all.begin() + p)});
      schedule.add_step(Pattern::kFold, everyone, p, 0, bytes, true);
    }
    // Halving exchanges the largest halves with the nearest partners (XOR 1, 2, 4, ...), so on
    // consecutive ranks of a chip or torus row the big messages stay local; doubling mirrors it.
    if (schedule.operation() != Operation::kAllGather) {
      for (std::uint32_t k = 0; k < levels; ++k) {
        schedule.add_step(Pattern::kExchange, core, 1u << k, 0, ceil_div(bytes, 2ull << k), true);
      }
    }
    if (schedule.operation() != Operation::kReduceScatter) {
      for (std::uint32_t k = 0; k < levels; ++k) {
        schedule.add_step(Pattern::kExchange, core, p >> (k + 1), 0,
                          ceil_div(bytes, 1ull << (levels - k)), false);
      }
    }
    if (p != ranks) schedule.add_step(Pattern::kUnfold, everyone, p, ranks - p, bytes, false);
  };
  return model;
}

}  // namespace trnsim::collective
