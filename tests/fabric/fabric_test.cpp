// Topologies of the built-in system configs: routes, hop counts, wire latencies, link rates,
// EFA domains and the snake ring order. Numbers from the configs (hardware-facts.md §11).
#include "fabric/fabric.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "config/load.hpp"

namespace trnsim::fabric {
namespace {

config::Params load(const std::string& name, const std::vector<std::string>& sets = {}) {
  return config::load_config(name, sets).params;
}

struct Built {
  ResourcePool pool;
  std::unique_ptr<Fabric> fabric;
  Route route(std::uint32_t a, std::uint32_t b) const {
    Route r;
    fabric->route(a, b, r);
    return r;
  }
};

std::unique_ptr<Built> build(const config::Params& params) {
  auto built = std::make_unique<Built>();
  built->fabric = std::make_unique<Fabric>(params, built->pool);
  return built;
}

TEST(Torus2d, Trn2InstanceRoutesAlongTheShortestWayRound) {
  // trn2-48xl: 4x4 torus, chip = x + 4y, 128 GB/s per link per direction, 200 ns per link.
  const auto built = build(load("trn2-48xl"));
  EXPECT_EQ(built->fabric->chips(), 16u);
  EXPECT_EQ(built->fabric->domains(), 1u);
  EXPECT_EQ(built->pool.size(), 16u * 4);  // x+, x-, y+, y- per chip

  const Route same = built->route(5, 5);
  EXPECT_TRUE(same.resources.empty());
  EXPECT_EQ(same.wire_latency_ns, 0);

  const Route east = built->route(0, 1);  // (0,0) -> (1,0): one X link
  ASSERT_EQ(east.resources.size(), 1u);
  EXPECT_EQ(east.link_hops, 1u);
  EXPECT_DOUBLE_EQ(east.wire_latency_ns, 200);
  EXPECT_DOUBLE_EQ(built->pool.bytes_per_ns(east.resources[0]), 128);
  EXPECT_FALSE(east.efa);

  const Route back = built->route(1, 0);  // the other direction is another link
  ASSERT_EQ(back.resources.size(), 1u);
  EXPECT_NE(back.resources[0], east.resources[0]);

  EXPECT_EQ(built->route(0, 3).link_hops, 1u);  // x 0 -> 3 over the wrap link
  EXPECT_EQ(built->route(0, 2).link_hops, 2u);  // x 0 -> 2: two hops either way
  EXPECT_EQ(built->route(0, 5).link_hops, 2u);  // (0,0) -> (1,1): one X and one Y
  const Route far = built->route(0, 10);        // (0,0) -> (2,2): 2 + 2 hops
  EXPECT_EQ(far.link_hops, 4u);
  EXPECT_DOUBLE_EQ(far.wire_latency_ns, 4 * 200);
  EXPECT_EQ(std::set<ResourceId>(far.resources.begin(), far.resources.end()).size(), 4u);
}

TEST(Torus2d, TiesSplitBySourceParitySoOppositeChipsDoNotShareALink) {
  // 0 -> 2 and 1 -> 3 are both two hops either way; 0 (even) goes +x, 1 (odd) goes -x.
  const auto built = build(load("trn2-48xl"));
  const Route a = built->route(0, 2);
  const Route b = built->route(1, 3);
  for (const ResourceId id : a.resources) {
    EXPECT_EQ(std::count(b.resources.begin(), b.resources.end(), id), 0) << built->pool.name(id);
  }
  EXPECT_EQ(built->pool.name(a.resources[0]), "chip0.x+");
  EXPECT_EQ(built->pool.name(b.resources[0]), "chip1.x-");
}

/// True when walking the chips in ring_position order steps between neighbours, last to first
/// included.
void expect_ring_of_neighbours(const Built& built, std::uint32_t chips) {
  std::vector<std::uint32_t> order(chips);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return built.fabric->ring_position(a) < built.fabric->ring_position(b);
  });
  for (std::uint32_t i = 0; i < chips; ++i) {
    const std::uint32_t a = order[i];
    const std::uint32_t b = order[(i + 1) % chips];
    EXPECT_EQ(built.route(a, b).link_hops, 1u) << "chip " << a << " -> chip " << b;
  }
}

TEST(Torus2d, SnakeOrderIsARingOfNeighbours) {
  const auto built = build(load("trn2-48xl"));
  expect_ring_of_neighbours(*built, 16);
}

TEST(Torus3d, UltraServerZLinksJoinInstancesAtTheirOwnRate) {
  // trn2-ultraserver: 4x4x4, Z links 64 GB/s (256 GB/s per chip over 2 Z links, 2 directions).
  const auto built = build(load("trn2-ultraserver"));
  EXPECT_EQ(built->fabric->domains(), 1u);
  EXPECT_EQ(built->pool.size(), 64u * 6);
  const Route up = built->route(0, 16);  // (0,0,0) -> (0,0,1)
  ASSERT_EQ(up.resources.size(), 1u);
  EXPECT_DOUBLE_EQ(built->pool.bytes_per_ns(up.resources[0]), 64);
  EXPECT_EQ(built->fabric->instance_of(16), 1u);
  expect_ring_of_neighbours(*built, 64);
}

TEST(Torus3d, WithoutInterInstanceLinksInstancesTalkOverEfa) {
  // Each 4x4 plane becomes an EFA domain: 25 GB/s per chip per direction, 15 us one way.
  const auto built =
      build(load("trn2-ultraserver", {"system.inter_instance_link_bandwidth_gbps=0"}));
  EXPECT_EQ(built->fabric->domains(), 4u);
  EXPECT_EQ(built->fabric->domain_of(15), 0u);
  EXPECT_EQ(built->fabric->domain_of(16), 1u);
  const Route across = built->route(3, 16 + 3);
  EXPECT_TRUE(across.efa);
  ASSERT_EQ(across.resources.size(), 2u);  // NIC out of chip 3, NIC into chip 19
  EXPECT_DOUBLE_EQ(built->pool.bytes_per_ns(across.resources[0]), 25);
  EXPECT_DOUBLE_EQ(across.wire_latency_ns, 15000);
  EXPECT_EQ(built->route(16, 17).link_hops, 1u);  // inside a plane: NeuronLink
  EXPECT_NE(built->fabric->describe().find("EFA"), std::string::npos);
}

TEST(Switch, Trn3UltraServerCountsSwitchLevelsBetweenServers) {
  // trn3-ultraserver-144: 4 chips per server, 2 switch levels, 250 ns per switch, 200 ns per
  // chip-to-switch link, a chip's 4 links of 320 GB/s aggregated: 1280 GB/s per direction.
  const auto built = build(load("trn3-ultraserver-144"));
  EXPECT_EQ(built->fabric->domains(), 1u);
  const Route inside = built->route(0, 1);
  ASSERT_EQ(inside.resources.size(), 2u);  // up port of chip 0, down port of chip 1
  EXPECT_DOUBLE_EQ(built->pool.bytes_per_ns(inside.resources[0]), 1280);
  EXPECT_DOUBLE_EQ(inside.wire_latency_ns, 2 * 200 + 1 * 250);  // one in-server switch
  const Route across = built->route(0, 4);                      // next server
  EXPECT_DOUBLE_EQ(across.wire_latency_ns, 2 * 200 + 3 * 250);  // L1, L2, L1
}

TEST(Switch, Trn4RackHasOneSwitchTier) {
  const auto built = build(load("trn4-rack"));
  EXPECT_DOUBLE_EQ(built->route(0, 71).wire_latency_ns, 2 * 200 + 250);
}

}  // namespace
}  // namespace trnsim::fabric
