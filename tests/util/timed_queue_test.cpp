// TimedQueue: entries come out by time, and entries of equal time in the order they were pushed,
// however pushes and pops interleave.
#include "util/timed_queue.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace trnsim::util {
namespace {

TEST(TimedQueue, EqualTimesComeOutInPushOrder) {
  TimedQueue<int> queue;
  queue.push(5.0, 1);
  queue.push(3.0, 2);
  queue.push(5.0, 3);  // a second run at 5: after 1
  queue.push(5.0, 4);
  queue.push(3.0, 5);
  std::vector<int> order;
  while (!queue.empty()) {
    order.push_back(queue.top().value);
    queue.pop();
  }
  EXPECT_EQ(order, (std::vector<int>{2, 5, 1, 3, 4}));
}

TEST(TimedQueue, PushAtTheTimeBeingPoppedGoesBehindEveryEntryOfThatTime) {
  TimedQueue<int> queue;
  queue.push(1.0, 1);
  queue.push(1.0, 2);
  queue.push(2.0, 3);
  queue.push(1.0, 4);
  EXPECT_EQ(queue.top().value, 1);
  queue.pop();
  queue.push(1.0, 5);  // the latest push: behind 2 and 4
  std::vector<int> order;
  while (!queue.empty()) {
    order.push_back(queue.top().value);
    queue.pop();
  }
  EXPECT_EQ(order, (std::vector<int>{2, 4, 5, 3}));
}

TEST(TimedQueue, APushAfterItsRunWasPoppedStartsANewRun) {
  TimedQueue<int> queue;
  queue.push(1.0, 1);
  queue.push(1.0, 2);
  queue.pop();
  queue.pop();
  queue.push(1.0, 3);
  queue.push(0.5, 4);
  ASSERT_EQ(queue.size(), 2U);
  EXPECT_EQ(queue.top().value, 4);
  queue.pop();
  ASSERT_FALSE(queue.empty());
  EXPECT_EQ(queue.top().value, 3);
  queue.pop();
  EXPECT_TRUE(queue.empty());
}

TEST(TimedQueue, MatchesASortByTimeAndPushOrder) {
  // Times from a small set (many ties), pushes and pops interleaved; the reference is an ordered
  // set of (time, push index).
  std::mt19937 random(7);
  std::uniform_int_distribution<int> time_of(0, 2);
  std::uniform_int_distribution<int> action(0, 1);
  TimedQueue<std::uint64_t> queue;
  std::set<std::pair<double, std::uint64_t>> reference;
  std::uint64_t pushed = 0;
  for (int step = 0; step < 100000; ++step) {
    if (reference.empty() || action(random) != 0) {
      // Pushes never go before the last popped time, as in the models.
      const double base = reference.empty() ? 0.0 : reference.begin()->first;
      const double time = base + time_of(random);
      queue.push(time, pushed);
      reference.emplace(time, pushed);
      ++pushed;
    } else {
      ASSERT_EQ(queue.size(), reference.size());
      EXPECT_EQ(queue.top().time_ns, reference.begin()->first);
      ASSERT_EQ(queue.top().value, reference.begin()->second);
      queue.pop();
      reference.erase(reference.begin());
    }
  }
  while (!reference.empty()) {
    ASSERT_EQ(queue.top().value, reference.begin()->second);
    queue.pop();
    reference.erase(reference.begin());
  }
  EXPECT_TRUE(queue.empty());
}

}  // namespace
}  // namespace trnsim::util
