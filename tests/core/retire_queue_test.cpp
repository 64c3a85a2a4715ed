// RetireQueue: the pop order must be exactly that of a min std::priority_queue for any push
// order, sorted, nearly sorted or random, with pops interleaved.
#include "core/retire_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <random>
#include <utility>
#include <vector>

namespace trnsim::core {
namespace {

using Key = std::pair<std::uint64_t, std::uint64_t>;  // (time, id) as the core uses it

/// Pushes `keys` in order, popping whenever `pop_after[i]` says so, then drains; returns the
/// keys in pop order.
template <typename Queue>
std::vector<Key> pop_order(const std::vector<Key>& keys, const std::vector<int>& pops_after) {
  Queue queue;
  std::vector<Key> out;
  auto pop = [&] {
    out.push_back(queue.top());
    queue.pop();
  };
  for (std::size_t i = 0; i < keys.size(); ++i) {
    queue.push(keys[i]);
    for (int p = 0; p < pops_after[i] && !queue.empty(); ++p) pop();
  }
  while (!queue.empty()) pop();
  return out;
}

using Reference = std::priority_queue<Key, std::vector<Key>, std::greater<>>;

TEST(RetireQueue, HandWorkedOrder) {
  // 5 and 7 arrive in order (FIFO), 3 and 6 out of order (heap): pops 3, 5, 6, 7.
  RetireQueue<int> queue;
  for (int key : {5, 7, 3, 6}) queue.push(key);
  EXPECT_EQ(queue.size(), 4u);
  std::vector<int> order;
  while (!queue.empty()) {
    order.push_back(queue.top());
    queue.pop();
  }
  EXPECT_EQ(order, (std::vector<int>{3, 5, 6, 7}));
}

TEST(RetireQueue, PopsAsAPriorityQueueForAnyArrivalOrder) {
  std::mt19937_64 random(12345);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(random() % 400);
    // Out-of-order share from 0 (sorted) to 1 (random); equal times split by the id.
    const double disorder = static_cast<double>(trial % 11) / 10.0;
    std::vector<Key> keys;
    std::vector<int> pops_after;
    std::uint64_t time = 0;
    for (int i = 0; i < n; ++i) {
      time += random() % 4;
      const bool late = std::uniform_real_distribution<double>(0, 1)(random) < disorder;
      const std::uint64_t t = late ? random() % (time + 1) : time;
      keys.emplace_back(t, static_cast<std::uint64_t>(i));
      pops_after.push_back(static_cast<int>(random() % 3));
    }
    ASSERT_EQ(pop_order<RetireQueue<Key>>(keys, pops_after), pop_order<Reference>(keys, pops_after))
        << "trial " << trial;
  }
}

TEST(RetireQueue, PopFirstNotAfterTakesTheDueKeysInOrder) {
  // Pushes nearly sorted (time, id) keys and, between pushes, takes every key due by a moving
  // limit: the same keys in the same order as popping a priority queue while its top is due.
  std::mt19937_64 random(777);
  RetireQueue<Key> queue;
  Reference reference;
  std::uint64_t time = 0;
  for (std::uint64_t i = 0; i < 5000; ++i) {
    time += random() % 3;
    const std::uint64_t t = random() % 8 == 0 ? time - std::min<std::uint64_t>(time, 5) : time;
    queue.push({t, i});
    reference.push({t, i});
    if (random() % 4 != 0) continue;
    const std::uint64_t limit = time - std::min<std::uint64_t>(time, random() % 6);
    Key due;
    while (queue.pop_first_not_after(limit, due)) {
      ASSERT_FALSE(reference.empty());
      ASSERT_EQ(due, reference.top());
      reference.pop();
    }
    ASSERT_TRUE(reference.empty() || reference.top().first > limit);
  }
}

}  // namespace
}  // namespace trnsim::core
