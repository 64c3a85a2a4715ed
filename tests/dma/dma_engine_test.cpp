// DmaEngine's queue choice: select_queue remembers its last answer, and must answer exactly as
// choose_queue computes afresh, through enqueues, descriptors started, packets issued and items
// finished, under both arbitrations.
#include "dma/dma_engine.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "dma/descriptors.hpp"
#include "dma_test_support.hpp"

namespace trnsim::dma::test {
namespace {

void check_memory_agrees(const std::string& name, const std::vector<std::string>& overrides) {
  const config::Params params = builtin("trn2", overrides);
  DmaEngine engine(name.c_str(), 0, 0, params.dma);
  // Small rows and descriptors: several packets and descriptors per item.
  std::vector<TransferPlan> plans;
  for (std::uint32_t bytes : {256U, 1024U, 8192U}) {
    plans.push_back(plan_transfer(load(128, bytes, 0), params, 0, 0));
  }
  std::mt19937 random(11);
  std::uniform_int_distribution<int> action(0, 9);
  std::uniform_int_distribution<std::uint32_t> queue_of(
      0, static_cast<std::uint32_t>(engine.queues.size()) - 1);
  std::uniform_real_distribution<double> delay(0.0, 200.0);
  std::uniform_int_distribution<std::size_t> plan_of(0, plans.size() - 1);
  double now = 0;
  double next_eligible = 1e308;  // of the last answer
  int issued = 0;
  int blocked = 0;
  for (int step = 0; step < 20000; ++step) {
    const int what = action(random);
    if (what == 0 || !engine.has_work()) {
      const std::size_t p = plan_of(random);
      EngineItem item;
      item.transfer = static_cast<std::uint32_t>(p);  // here: its plan
      item.cursor = PacketCursor(plans[p], 0);
      item.fetchable_ns = now + delay(random) / 4;
      item.ready_ns = item.fetchable_ns + delay(random);
      engine.enqueue(queue_of(random), item);
      continue;
    }
    // Repeated questions at one time, at the time the last answer said a queue becomes
    // eligible (as the packet model asks again), or later.
    if (what >= 7 && next_eligible < 1e300) {
      now = std::max(now, next_eligible);
    } else if (what >= 4) {
      now += delay(random) / 16;
    }
    double memo_next = 0;
    double fresh_next = 0;
    const int memo = engine.select_queue(now, memo_next);
    const int fresh = engine.choose_queue(now, fresh_next);
    ASSERT_EQ(memo, fresh) << "step " << step << " at " << now << " ns";
    ASSERT_EQ(memo_next, fresh_next) << "step " << step;
    next_eligible = memo_next;
    if (memo < 0) {
      ++blocked;
      continue;
    }
    if (what % 2 == 0) continue;  // asked, but the port was busy: nothing issued
    const auto q = static_cast<std::uint32_t>(memo);
    DmaQueue& queue = engine.queues[q];
    EngineItem& item = queue.items.at(queue.issue);
    if (item.cursor.at_descriptor_start()) engine.start_descriptor(item, now);
    item.cursor.next(plans[item.transfer]);
    engine.packet_issued(q);
    if (item.cursor.done()) engine.skip_issued(q);
    ++issued;
  }
  EXPECT_GT(issued, 1000);  // the scenario exercised both answers
  EXPECT_GT(blocked, 100);
}

TEST(DmaEngine, RememberedQueueChoiceMatchesAFreshOneUnderRoundRobin) {
  check_memory_agrees("round_robin_engine", {});
}

TEST(DmaEngine, RememberedQueueChoiceMatchesAFreshOneUnderStrictPriority) {
  check_memory_agrees("strict_priority_engine",
                      {"dma.arbitration=strict_priority", "dma.priority_classes=4"});
}

}  // namespace
}  // namespace trnsim::dma::test
