// Collective algorithms by name (collective/algorithms.hpp): a test's own algorithm becomes a
// value of the kernel attribute and of collective.algorithm once registered, builds its
// schedule, and falls back to Ring where it says it cannot run; collective.algorithm chooses
// for collectives that ask for `auto`.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collective/algorithm_choice.hpp"
#include "collective/algorithms.hpp"
#include "config/load.hpp"
#include "util/error.hpp"

namespace trnsim::collective {
namespace {

/// All-gather only: in step k (1..n-1) every rank sends its chunk straight to rank + k.
AlgorithmModel pairwise_gather() {
  AlgorithmModel model;
  model.supports = [](Operation operation, std::uint32_t, bool) {
    return operation == Operation::kAllGather;
  };
  model.build = [](Schedule& schedule, std::uint64_t bytes, const RankLayout& layout) {
    const std::uint32_t ring = schedule.add_groups({layout.ring});
    for (std::uint32_t k = 1; k < schedule.ranks(); ++k) {
      schedule.add_step(Schedule::Pattern::kShift, ring, k, 0, bytes / schedule.ranks(), false);
    }
  };
  return model;
}

RankLayout ring_of(std::uint32_t n) {
  RankLayout layout;
  for (std::uint32_t r = 0; r < n; ++r) {
    layout.ring.push_back(r);
    layout.domain.push_back(0);
  }
  return layout;
}

TEST(AlgorithmRegistry, ARegisteredAlgorithmIsANameKernelsAndConfigsAccept) {
  EXPECT_FALSE(kernel::collective_algorithm_from_name("pairwise_gather").has_value());
  EXPECT_THROW(config::load_config("trn2", {"collective.algorithm=pairwise_gather"}), InputError);
  const Algorithm id = register_algorithm("pairwise_gather", pairwise_gather());
  EXPECT_GE(static_cast<int>(id), static_cast<int>(Algorithm::kRegistered));
  EXPECT_EQ(kernel::collective_algorithm_from_name("pairwise_gather"), id);
  EXPECT_EQ(kernel::collective_algorithm_name(id), "pairwise_gather");
  EXPECT_EQ(register_algorithm("pairwise_gather", pairwise_gather()), id);  // same id again
  EXPECT_EQ(config::load_config("trn2", {"collective.algorithm=pairwise_gather"})
                .params.collective.algorithm,
            "pairwise_gather");
}

TEST(AlgorithmRegistry, ItBuildsTheScheduleOfWhatItSupportsAndRingDoesTheRest) {
  const Algorithm id = register_algorithm("pairwise_gather", pairwise_gather());
  // 4 ranks, 4000 B gathered: 3 steps of 1000 B; rank 0 sends to 1, 2, 3 in turn.
  const Schedule gather(Operation::kAllGather, id, 4, 4000, ring_of(4));
  EXPECT_EQ(gather.algorithm(), id);
  ASSERT_EQ(gather.steps(), 3u);
  for (std::uint32_t step = 0; step < 3; ++step) {
    std::vector<Message> out;
    gather.sends(0, step, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].to, step + 1);
    EXPECT_EQ(out[0].bytes, 1000u);
    EXPECT_EQ(gather.receives(2, step), 1u);
  }
  // All-reduce it does not support: Ring, 2(n-1) = 6 steps.
  const Schedule reduce(Operation::kAllReduce, id, 4, 4000, ring_of(4));
  EXPECT_EQ(reduce.algorithm(), Algorithm::kRing);
  EXPECT_EQ(reduce.steps(), 6u);
}

TEST(AlgorithmRegistry, TheConfigChoosesForAutoAndAKernelsChoiceWins) {
  const Algorithm id = register_algorithm("pairwise_gather", pairwise_gather());
  const auto params = [](const char* algorithm) {
    return config::load_config("trn2", {std::string("collective.algorithm=") + algorithm})
        .params.collective;
  };
  // 1 KiB over 8 ranks: `auto` is Mesh on trn2; the config can say Ring instead.
  EXPECT_EQ(
      choose_algorithm(Operation::kAllReduce, Algorithm::kAuto, 1024, 8, 1, true, params("auto")),
      Algorithm::kMesh);
  EXPECT_EQ(
      choose_algorithm(Operation::kAllReduce, Algorithm::kAuto, 1024, 8, 1, true, params("ring")),
      Algorithm::kRing);
  EXPECT_EQ(
      choose_algorithm(Operation::kAllReduce, Algorithm::kMesh, 1024, 8, 1, true, params("ring")),
      Algorithm::kMesh);
  EXPECT_EQ(choose_algorithm(Operation::kAllGather, Algorithm::kAuto, 1024, 8, 1, true,
                             params("pairwise_gather")),
            id);
  EXPECT_EQ(choose_algorithm(Operation::kAllReduce, Algorithm::kAuto, 1024, 8, 1, true,
                             params("pairwise_gather")),
            Algorithm::kRing);
}

}  // namespace
}  // namespace trnsim::collective
