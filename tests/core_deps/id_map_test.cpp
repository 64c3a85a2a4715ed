// IdMap: ids that share a direct-mapped slot, growth, and removal in any order.
#include "core/deps/id_map.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>

namespace trnsim::deps {
namespace {

TEST(IdMap, CollidingIdsGoToTheOverflowAndStayFindable) {
  IdMap map;
  // 64 slots at first: ids 5, 69 and 133 share a slot.
  map.insert(5, 1);
  map.insert(69, 2);
  map.insert(133, 3);
  EXPECT_EQ(map.find(5), 1u);
  EXPECT_EQ(map.find(69), 2u);
  EXPECT_EQ(map.find(133), 3u);
  EXPECT_EQ(map.find(197), kNil);
  EXPECT_EQ(map.take(5), 1u);  // frees the slot; the others are still found
  EXPECT_EQ(map.find(5), kNil);
  EXPECT_EQ(map.find(69), 2u);
  EXPECT_EQ(map.take(133), 3u);
  EXPECT_EQ(map.take(133), kNil);
  EXPECT_EQ(map.take(69), 2u);
  EXPECT_EQ(map.size(), 0u);
}

TEST(IdMap, MatchesStdMapUnderRandomInsertAndTake) {
  // Increasing ids with gaps, removed mostly oldest first but sometimes any, and an old id
  // kept for a long time so that later ids collide with it.
  IdMap map;
  std::map<std::uint64_t, std::uint32_t> model;
  std::mt19937_64 rng(3);
  std::uint64_t next = 0;
  for (int step = 0; step < 200000; ++step) {
    const bool add = model.size() < 2 || rng() % 100 < (model.size() < 300 ? 55 : 45);
    if (add) {
      next += 1 + (rng() % 8 == 0 ? rng() % 500 : 0);
      const auto value = static_cast<std::uint32_t>(rng() % 1000);
      map.insert(next, value);
      model.emplace(next, value);
    } else {
      auto it = model.begin();
      if (rng() % 4 == 0) std::advance(it, static_cast<long>(rng() % model.size()));
      if (it->first == 0 && model.size() > 1) ++it;  // id 0 stays in flight throughout
      ASSERT_EQ(map.take(it->first), it->second);
      model.erase(it);
    }
    ASSERT_EQ(map.size(), model.size());
    if (step % 97 == 0) {
      for (const auto& [id, value] : model) ASSERT_EQ(map.find(id), value);
      ASSERT_EQ(map.find(next + 1), kNil);
    }
  }
  // Capacity follows the in-flight count, not the id range (~1e7 ids went through).
  EXPECT_LT(map.footprint_bytes(), 64u * 1024u);
}

}  // namespace
}  // namespace trnsim::deps
