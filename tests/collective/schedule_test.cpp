// Algorithms as schedules (pure): step counts, partners, message sizes, conservation of
// messages, and the algorithm `auto` picks. Expected values from the algorithms' definitions
// (hardware-facts.md §11.5: Ring O(N), Mesh O(1), RDH O(log N), KangaRing O(N/2)).
#include "collective/schedule.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <tuple>
#include <vector>

#include "collective/algorithm_choice.hpp"
#include "config/load.hpp"

namespace trnsim::collective {
namespace {

RankLayout identity_layout(std::uint32_t n, std::uint32_t domains = 1) {
  RankLayout layout;
  layout.ring.resize(n);
  std::iota(layout.ring.begin(), layout.ring.end(), 0u);
  layout.domain.resize(n);
  for (std::uint32_t r = 0; r < n; ++r) layout.domain[r] = r / (n / domains);
  return layout;
}

std::vector<Message> sends(const Schedule& s, std::uint32_t rank, std::uint32_t step) {
  std::vector<Message> out;
  s.sends(rank, step, out);
  return out;
}

/// Every message sent in a step is expected by its receiver, and nothing else is.
void expect_conserved(const Schedule& s) {
  for (std::uint32_t step = 0; step < s.steps(); ++step) {
    std::vector<std::uint32_t> arriving(s.ranks(), 0);
    for (std::uint32_t r = 0; r < s.ranks(); ++r) {
      for (const Message& m : sends(s, r, step)) {
        ASSERT_LT(m.to, s.ranks());
        EXPECT_NE(m.to, r);
        ++arriving[m.to];
      }
    }
    for (std::uint32_t r = 0; r < s.ranks(); ++r) {
      EXPECT_EQ(arriving[r], s.receives(r, step)) << "rank " << r << " step " << step;
    }
  }
}

std::uint64_t bytes_sent(const Schedule& s, std::uint32_t rank) {
  std::uint64_t total = 0;
  for (std::uint32_t step = 0; step < s.steps(); ++step) {
    for (const Message& m : sends(s, rank, step)) total += m.bytes;
  }
  return total;
}

TEST(Ring, AllReduceIsReduceScatterThenAllGatherAroundTheRing) {
  // n = 4, S = 4000 B: 2(n-1) = 6 steps of S/n = 1000 B to the next rank; reduced in the first 3.
  const Schedule s(Operation::kAllReduce, Algorithm::kRing, 4, 4000, identity_layout(4));
  ASSERT_EQ(s.steps(), 6u);
  for (std::uint32_t step = 0; step < 6; ++step) {
    for (std::uint32_t r = 0; r < 4; ++r) {
      const auto m = sends(s, r, step);
      ASSERT_EQ(m.size(), 1u);
      EXPECT_EQ(m[0].to, (r + 1) % 4);
      EXPECT_EQ(m[0].bytes, 1000u);
      EXPECT_EQ(m[0].reduce, step < 3);
      EXPECT_EQ(s.receives(r, step), 1u);
    }
  }
  // Each rank sends 2(n-1)/n x S = 6000 B.
  EXPECT_EQ(bytes_sent(s, 2), 6000u);
}

TEST(Ring, FollowsTheLayoutsRingOrder) {
  RankLayout layout = identity_layout(4);
  layout.ring = {2, 0, 3, 1};  // ring 2 -> 0 -> 3 -> 1 -> 2
  const Schedule s(Operation::kAllGather, Algorithm::kRing, 4, 4000, layout);
  ASSERT_EQ(s.steps(), 3u);  // n - 1
  EXPECT_EQ(sends(s, 2, 0)[0].to, 0u);
  EXPECT_EQ(sends(s, 0, 0)[0].to, 3u);
  EXPECT_EQ(sends(s, 1, 0)[0].to, 2u);
  EXPECT_FALSE(sends(s, 1, 0)[0].reduce);
}

TEST(Rdh, PowerOfTwoHalvesThenDoubles) {
  // n = 8, S = 8192: halving partners r^1, r^2, r^4 with S/2, S/4, S/8 (reduced), then
  // doubling partners r^4, r^2, r^1 with S/8, S/4, S/2 (largest messages to nearest partners).
  const Schedule s(Operation::kAllReduce, Algorithm::kRdh, 8, 8192, identity_layout(8));
  ASSERT_EQ(s.steps(), 6u);
  const std::uint32_t partner[] = {1, 2, 4, 4, 2, 1};
  const std::uint64_t bytes[] = {4096, 2048, 1024, 1024, 2048, 4096};
  for (std::uint32_t step = 0; step < 6; ++step) {
    const auto m = sends(s, 5, step);
    ASSERT_EQ(m.size(), 1u);
    EXPECT_EQ(m[0].to, 5u ^ partner[step]) << step;
    EXPECT_EQ(m[0].bytes, bytes[step]) << step;
    EXPECT_EQ(m[0].reduce, step < 3) << step;
  }
  expect_conserved(s);
}

TEST(Rdh, NonPowerOfTwoAllReduceFoldsTheExtraRanks) {
  // n = 6: ranks 4, 5 fold into 0, 1 (whole message, reduced), RDH over 0..3 (2 + 2 steps),
  // then 0, 1 send the result back.
  const Schedule s(Operation::kAllReduce, Algorithm::kRdh, 6, 6000, identity_layout(6));
  ASSERT_EQ(s.steps(), 6u);
  EXPECT_EQ(sends(s, 4, 0)[0].to, 0u);
  EXPECT_EQ(sends(s, 4, 0)[0].bytes, 6000u);
  EXPECT_TRUE(sends(s, 4, 0)[0].reduce);
  EXPECT_TRUE(sends(s, 2, 0).empty());
  EXPECT_TRUE(sends(s, 4, 1).empty());  // folded ranks idle during RDH
  EXPECT_EQ(sends(s, 1, 5)[0].to, 5u);
  EXPECT_EQ(s.receives(5, 5), 1u);
  expect_conserved(s);
}

TEST(KangaRing, DrivesTheRingBothWaysInHalfTheSteps) {
  // n = 5: ceil((n-1)/2) = 2 steps per phase, every step to both neighbours.
  const Schedule five(Operation::kAllReduce, Algorithm::kKangaring, 5, 5000, identity_layout(5));
  ASSERT_EQ(five.steps(), 4u);
  const auto m = sends(five, 0, 0);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].to, 1u);
  EXPECT_EQ(m[1].to, 4u);
  EXPECT_EQ(m[0].bytes, 1000u);
  // n = 4: 3 transfers per phase = one both-way step and one one-way step.
  const Schedule four(Operation::kAllReduce, Algorithm::kKangaring, 4, 4000, identity_layout(4));
  ASSERT_EQ(four.steps(), 4u);
  EXPECT_EQ(sends(four, 0, 1).size(), 1u);
  // Every rank still sends n-1 messages of S/n per phase, like Ring: 2 x 3 x 1000 B.
  EXPECT_EQ(bytes_sent(four, 3), 6000u);
  expect_conserved(five);
  expect_conserved(four);
}

TEST(Mesh, AllReduceIsTwoStepsToEveryone) {
  const Schedule s(Operation::kAllReduce, Algorithm::kMesh, 4, 4000, identity_layout(4));
  ASSERT_EQ(s.steps(), 2u);
  EXPECT_EQ(sends(s, 1, 0).size(), 3u);
  EXPECT_EQ(sends(s, 1, 0)[0].bytes, 1000u);
  EXPECT_EQ(s.receives(1, 1), 3u);
  expect_conserved(s);
}

TEST(Hierarchical, RingInsideRingAcrossRingInside) {
  // 8 ranks in 2 domains of 4: intra reduce-scatter (3 steps of S/4), inter all-reduce of the
  // S/4 shard over 2 domains (1 + 1 steps of S/8), intra all-gather (3 steps of S/4).
  const Schedule s(Operation::kAllReduce, Algorithm::kHierarchical, 8, 8000, identity_layout(8, 2));
  ASSERT_EQ(s.steps(), 8u);
  EXPECT_EQ(sends(s, 1, 0)[0].to, 2u);
  EXPECT_EQ(sends(s, 1, 0)[0].bytes, 2000u);
  EXPECT_EQ(sends(s, 1, 3)[0].to, 5u);  // same local index in the other domain
  EXPECT_EQ(sends(s, 1, 3)[0].bytes, 1000u);
  EXPECT_EQ(sends(s, 3, 7)[0].to, 0u);  // intra ring wraps inside the domain
  expect_conserved(s);
}

TEST(Schedules, ConserveMessagesForEveryOperationAlgorithmAndSize) {
  const Operation operations[] = {Operation::kAllReduce, Operation::kAllGather,
                                  Operation::kReduceScatter, Operation::kAllToAll,
                                  Operation::kPermute};
  const Algorithm algorithms[] = {Algorithm::kRing, Algorithm::kMesh, Algorithm::kRdh,
                                  Algorithm::kKangaring, Algorithm::kHierarchical};
  for (const Operation op : operations) {
    for (const Algorithm algorithm : algorithms) {
      for (const std::uint32_t n : {2u, 3u, 4u, 6u, 8u, 12u}) {
        SCOPED_TRACE(std::string(operation_name(op)) + " " +
                     std::string(kernel::collective_algorithm_name(algorithm)) +
                     " n=" + std::to_string(n));
        const Schedule s(op, algorithm, n, 1 << 20, identity_layout(n, n % 2 == 0 ? 2 : 1));
        expect_conserved(s);
        EXPECT_GT(s.steps(), 0u);
      }
    }
  }
}

TEST(Schedules, AllToAllPairwiseSendsEachBlockOnce) {
  const Schedule s(Operation::kAllToAll, Algorithm::kRing, 4, 4000, identity_layout(4));
  ASSERT_EQ(s.steps(), 3u);
  for (std::uint32_t k = 0; k < 3; ++k) EXPECT_EQ(sends(s, 1, k)[0].to, (1 + k + 1) % 4);
}

TEST(Schedules, PointToPointIsOneMessageFromRankZeroToRankOne) {
  const Schedule s(Operation::kSendRecv, Algorithm::kRing, 2, 777, identity_layout(2));
  ASSERT_EQ(s.steps(), 1u);
  ASSERT_EQ(sends(s, 0, 0).size(), 1u);
  EXPECT_EQ(sends(s, 0, 0)[0].to, 1u);
  EXPECT_EQ(sends(s, 0, 0)[0].bytes, 777u);
  EXPECT_TRUE(sends(s, 1, 0).empty());
  EXPECT_EQ(s.receives(1, 0), 1u);
}

TEST(BusBandwidth, FactorsAsNccomTest) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Operation::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Operation::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Operation::kPermute, 8), 1.0);
}

TEST(AutoAlgorithm, PicksBySizeAsTheTrn2RuntimeDocuments) {
  // trn2: Mesh up to 1 MiB, RDH up to 56 MiB, KangaRing above (hardware-facts.md §11.5).
  const config::CollectiveParams trn2 = config::load_config("trn2").params.collective;
  auto pick = [&](std::uint64_t bytes) {
    return choose_algorithm(Operation::kAllReduce, Algorithm::kAuto, bytes, 16, 1, true, trn2);
  };
  EXPECT_EQ(pick(1024), Algorithm::kMesh);
  EXPECT_EQ(pick(1 << 20), Algorithm::kMesh);
  EXPECT_EQ(pick((1 << 20) + 1), Algorithm::kRdh);
  EXPECT_EQ(pick(56ull << 20), Algorithm::kRdh);
  EXPECT_EQ(pick((56ull << 20) + 1), Algorithm::kKangaring);
  // trn3 has no KangaRing: Ring above the RDH range.
  const config::CollectiveParams trn3 = config::load_config("trn3").params.collective;
  EXPECT_EQ(
      choose_algorithm(Operation::kAllReduce, Algorithm::kAuto, 1ull << 30, 16, 1, true, trn3),
      Algorithm::kRing);
}

TEST(AutoAlgorithm, HierarchicalAcrossEvenEfaDomainsAndFallbacks) {
  const config::CollectiveParams trn2 = config::load_config("trn2").params.collective;
  EXPECT_EQ(choose_algorithm(Operation::kAllReduce, Algorithm::kAuto, 1024, 8, 2, true, trn2),
            Algorithm::kHierarchical);
  EXPECT_EQ(choose_algorithm(Operation::kAllReduce, Algorithm::kAuto, 1024, 8, 2, false, trn2),
            Algorithm::kMesh);
  // RDH all-gather needs 2^k ranks; all-to-all has only Mesh and pairwise (Ring).
  EXPECT_EQ(choose_algorithm(Operation::kAllGather, Algorithm::kRdh, 1 << 24, 6, 1, true, trn2),
            Algorithm::kRing);
  EXPECT_EQ(choose_algorithm(Operation::kAllReduce, Algorithm::kRdh, 1 << 24, 6, 1, true, trn2),
            Algorithm::kRdh);
  EXPECT_EQ(choose_algorithm(Operation::kAllToAll, Algorithm::kAuto, 1 << 24, 8, 1, true, trn2),
            Algorithm::kRing);
  EXPECT_EQ(choose_algorithm(Operation::kAllToAll, Algorithm::kAuto, 1024, 8, 1, true, trn2),
            Algorithm::kMesh);
}

}  // namespace
}  // namespace trnsim::collective
