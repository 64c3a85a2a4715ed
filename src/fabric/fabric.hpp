// The chips of a system and what joins them (config::SystemParams): NeuronLink 2D/3D tori (a
// directed link per chip, dimension and direction; dimension-order routes), switched domains
// (one up and one down port per chip, its links aggregated) and EFA between instances no link
// joins (one NIC per chip). Every link, port and NIC is a bandwidth server in a ResourcePool.
// Leaves out switch-internal contention (non-blocking tiers), adaptive and multi-path routing.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "config/params.hpp"
#include "fabric/resource_pool.hpp"

namespace trnsim::fabric {

/// One way from a chip to another: the servers it crosses and its wire latency.
struct Route {
  std::vector<ResourceId> resources;
  double wire_latency_ns = 0;   ///< links, switch traversals and EFA, one way
  std::uint32_t link_hops = 0;  ///< chip-to-chip links or switch ports crossed
  bool efa = false;             ///< crosses between EFA domains (instances not joined by links)
};

class Fabric {
 public:
  /// Builds the topology of `params.system` and adds its servers to `pool`.
  Fabric(const config::Params& params, ResourcePool& pool);

  std::uint32_t chips() const { return chips_; }
  /// Server instance of a chip (system.chips_per_instance chips each).
  std::uint32_t instance_of(std::uint32_t chip) const { return chip / chips_per_instance_; }
  /// Chips joined by links or switches form a domain; different domains talk over EFA.
  std::uint32_t domain_of(std::uint32_t chip) const { return chip / domain_chips_; }
  std::uint32_t domains() const { return chips_ / domain_chips_; }

  /// The way from `src` to `dst` (empty on the same chip). Overwrites `out`.
  void route(std::uint32_t src, std::uint32_t dst, Route& out) const;

  /// Sort key that lays the chips of each domain along a ring stepping between neighbours
  /// (snake order on tori), domains one after the other.
  std::uint64_t ring_position(std::uint32_t chip) const;

  /// One line: topology, sizes, link counts and rates.
  std::string describe() const;

 private:
  enum class Kind { kSingle, kTorus, kSwitch };
  std::uint32_t link_id(std::uint32_t chip, int dimension, int direction) const;

  Kind kind_ = Kind::kSingle;
  std::uint32_t chips_ = 1;
  std::uint32_t chips_per_instance_ = 1;
  std::uint32_t domain_chips_ = 1;
  std::array<std::uint32_t, 3> dims_{1, 1, 1};  ///< torus sizes X, Y, Z (Z = 1 when over EFA)
  std::array<double, 3> dim_bytes_per_ns_{0, 0, 0};
  double link_latency_ns_ = 0;
  double switch_latency_ns_ = 0;
  int switch_levels_ = 0;
  double port_bytes_per_ns_ = 0;
  double efa_bytes_per_ns_ = 0;
  double efa_latency_ns_ = 0;
  /// Torus: first id of the chip's 6 links (dimension * 2 + (direction < 0)); switch: up, down.
  std::vector<ResourceId> chip_links_;
  std::vector<ResourceId> efa_out_;
  std::vector<ResourceId> efa_in_;
};

}  // namespace trnsim::fabric
