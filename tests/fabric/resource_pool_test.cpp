// Bandwidth servers: first come first served per server, pipelined across a path.
#include "fabric/resource_pool.hpp"

#include <gtest/gtest.h>

#include <array>

namespace trnsim::fabric {
namespace {

TEST(ResourcePool, ServesReservationsInOrderAtItsRate) {
  ResourcePool pool;
  const ResourceId link = pool.add(2.0, "link");  // 2 bytes/ns
  const std::array<ResourceId, 1> path{link};
  // 1000 B at 2 B/ns from t=0: done at 500 ns.
  EXPECT_DOUBLE_EQ(pool.reserve(path, 0, 1000), 500);
  // Issued at 100 ns, queues behind the first: 500 + 500 = 1000 ns.
  EXPECT_DOUBLE_EQ(pool.reserve(path, 100, 1000), 1000);
  // Issued at 2000 ns on an idle server: 2000 + 500.
  EXPECT_DOUBLE_EQ(pool.reserve(path, 2000, 1000), 2500);
  EXPECT_DOUBLE_EQ(pool.bytes(link), 3000);
  EXPECT_DOUBLE_EQ(pool.busy_ns(link), 1500);
}

TEST(ResourcePool, APathEndsWithItsSlowestServer) {
  ResourcePool pool;
  const ResourceId fast = pool.add(4.0, "fast");
  const ResourceId slow = pool.add(1.0, "slow");
  const std::array<ResourceId, 2> both{fast, slow};
  // 1000 B: the fast server is done at 250 ns, the slow one at 1000 ns.
  EXPECT_DOUBLE_EQ(pool.reserve(both, 0, 1000), 1000);
  // The fast server alone was free again at 250 ns: 250 + 1000 / 4 = 500 ns.
  const std::array<ResourceId, 1> only_fast{fast};
  EXPECT_DOUBLE_EQ(pool.reserve(only_fast, 0, 1000), 500);
  EXPECT_DOUBLE_EQ(pool.free_at_ns(slow), 1000);
}

TEST(ResourcePool, NothingToMoveTakesNoTime) {
  ResourcePool pool;
  const ResourceId link = pool.add(1.0, "link");
  const std::array<ResourceId, 1> path{link};
  EXPECT_DOUBLE_EQ(pool.reserve({}, 42, 1000), 42);
  EXPECT_DOUBLE_EQ(pool.reserve(path, 42, 0), 42);
  EXPECT_DOUBLE_EQ(pool.free_at_ns(link), 0);
}

}  // namespace
}  // namespace trnsim::fabric
