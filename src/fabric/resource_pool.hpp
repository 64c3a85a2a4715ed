// Bandwidth servers for message-level transfer timing: each resource (a link direction, a port,
// an EFA NIC direction, a reduction unit) serves the bytes reserved on it first come, first
// served at its own rate; a transfer over several is pipelined and ends with the last of them.
// Leaves out packet interleaving (a later transfer queues behind the whole of an earlier one).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace trnsim::fabric {

using ResourceId = std::uint32_t;

class ResourcePool {
 public:
  /// Adds a server moving `bytes_per_ns` (= GB/s). Elaboration only.
  ResourceId add(double bytes_per_ns, std::string name);

  /// Reserves `bytes` on every resource of `path`, starting no earlier than `start_ns`; each
  /// resource serves them after the bytes already reserved on it. Returns when the last resource
  /// has moved them (`start_ns` for an empty path or zero bytes). Times in ns.
  double reserve(std::span<const ResourceId> path, double start_ns, double bytes);

  std::size_t size() const { return servers_.size(); }
  const std::string& name(ResourceId id) const { return names_[id]; }
  double bytes_per_ns(ResourceId id) const { return 1.0 / servers_[id].ns_per_byte; }
  /// Bytes reserved on the resource so far and the time it spent moving them (ns).
  double bytes(ResourceId id) const { return servers_[id].bytes; }
  double busy_ns(ResourceId id) const { return servers_[id].busy_ns; }
  /// When the resource has moved everything reserved on it so far (ns).
  double free_at_ns(ResourceId id) const { return servers_[id].free_at_ns; }

 private:
  struct Server {
    double ns_per_byte = 0;
    double free_at_ns = 0;
    double busy_ns = 0;
    double bytes = 0;
  };
  std::vector<Server> servers_;
  std::vector<std::string> names_;
};

}  // namespace trnsim::fabric
