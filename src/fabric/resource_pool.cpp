#include "fabric/resource_pool.hpp"

#include <algorithm>
#include <utility>

namespace trnsim::fabric {

ResourceId ResourcePool::add(double bytes_per_ns, std::string name) {
  Server server;
  server.ns_per_byte = 1.0 / bytes_per_ns;
  servers_.push_back(server);
  names_.push_back(std::move(name));
  return static_cast<ResourceId>(servers_.size() - 1);
}

double ResourcePool::reserve(std::span<const ResourceId> path, double start_ns, double bytes) {
  double end = start_ns;
  if (bytes <= 0) return end;
  for (const ResourceId id : path) {
    Server& server = servers_[id];
    const double busy = bytes * server.ns_per_byte;
    server.free_at_ns = std::max(server.free_at_ns, start_ns) + busy;
    server.busy_ns += busy;
    server.bytes += bytes;
    end = std::max(end, server.free_at_ns);
  }
  return end;
}

}  // namespace trnsim::fabric
