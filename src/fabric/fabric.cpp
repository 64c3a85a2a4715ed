#include "fabric/fabric.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace trnsim::fabric {

namespace {
constexpr std::uint32_t kNoLink = 0xFFFFFFFFu;
constexpr const char* kAxis = "xyz";
}  // namespace

Fabric::Fabric(const config::Params& params, ResourcePool& pool) {
  const config::SystemParams& system = params.system;
  chips_ = static_cast<std::uint32_t>(std::max(1, system.chips));
  chips_per_instance_ = static_cast<std::uint32_t>(std::max(1, system.chips_per_instance));
  link_latency_ns_ = system.link_latency_ns;
  switch_latency_ns_ = system.switch_latency_ns;
  switch_levels_ = system.switch_levels;
  efa_bytes_per_ns_ = system.efa_bandwidth_gbps;
  efa_latency_ns_ = system.efa_latency_ns;

  switch (system.topology) {
    case config::Topology::single:
      kind_ = Kind::kSingle;
      domain_chips_ = 1;
      break;
    case config::Topology::torus2d:
    case config::Topology::torus3d: {
      kind_ = Kind::kTorus;
      dims_ = {static_cast<std::uint32_t>(std::max(1, system.torus_x)),
               static_cast<std::uint32_t>(std::max(1, system.torus_y)),
               static_cast<std::uint32_t>(std::max(1, system.torus_z))};
      dim_bytes_per_ns_ = {system.link_bandwidth_gbps, system.link_bandwidth_gbps,
                           system.inter_instance_link_bandwidth_gbps};
      // Z rings join instances; without inter-instance links each XY plane is a domain.
      if (system.topology == config::Topology::torus2d ||
          system.inter_instance_link_bandwidth_gbps <= 0) {
        dims_[2] = 1;
      }
      domain_chips_ = std::min(chips_, dims_[0] * dims_[1] * dims_[2]);
      chip_links_.assign(static_cast<std::size_t>(chips_) * 6, kNoLink);
      for (std::uint32_t chip = 0; chip < chips_; ++chip) {
        for (int d = 0; d < 3; ++d) {
          if (dims_[d] < 2 || dim_bytes_per_ns_[d] <= 0) continue;
          for (int negative = 0; negative < 2; ++negative) {
            chip_links_[chip * 6 + d * 2 + negative] =
                pool.add(dim_bytes_per_ns_[d],
                         fmt::format("chip{}.{}{}", chip, kAxis[d], negative ? '-' : '+'));
          }
        }
      }
      break;
    }
    case config::Topology::switch_:
    case config::Topology::nvlink_switch: {
      kind_ = Kind::kSwitch;
      domain_chips_ = chips_;
      const double link =
          system.link_bandwidth_gbps > 0
              ? std::min(system.link_bandwidth_gbps, system.switch_port_bandwidth_gbps)
              : system.switch_port_bandwidth_gbps;
      port_bytes_per_ns_ = link * std::max(1, params.chip.neuronlink_links);
      chip_links_.resize(static_cast<std::size_t>(chips_) * 2);
      for (std::uint32_t chip = 0; chip < chips_; ++chip) {
        chip_links_[chip * 2] = pool.add(port_bytes_per_ns_, fmt::format("chip{}.up", chip));
        chip_links_[chip * 2 + 1] = pool.add(port_bytes_per_ns_, fmt::format("chip{}.down", chip));
      }
      break;
    }
  }
  domain_chips_ = std::max<std::uint32_t>(1, domain_chips_);
  if (domains() > 1 && efa_bytes_per_ns_ > 0) {
    for (std::uint32_t chip = 0; chip < chips_; ++chip) {
      efa_out_.push_back(pool.add(efa_bytes_per_ns_, fmt::format("chip{}.efa_out", chip)));
      efa_in_.push_back(pool.add(efa_bytes_per_ns_, fmt::format("chip{}.efa_in", chip)));
    }
  }
}

std::uint32_t Fabric::link_id(std::uint32_t chip, int dimension, int direction) const {
  return chip_links_[chip * 6 + dimension * 2 + (direction < 0 ? 1 : 0)];
}

void Fabric::route(std::uint32_t src, std::uint32_t dst, Route& out) const {
  out.resources.clear();
  out.wire_latency_ns = 0;
  out.link_hops = 0;
  out.efa = false;
  if (src == dst) return;
  if (domain_of(src) != domain_of(dst)) {
    out.efa = true;
    if (!efa_out_.empty()) {
      out.resources.push_back(efa_out_[src]);
      out.resources.push_back(efa_in_[dst]);
    }
    out.wire_latency_ns = efa_latency_ns_;
    return;
  }
  if (kind_ == Kind::kSwitch) {
    out.resources.push_back(chip_links_[src * 2]);
    out.resources.push_back(chip_links_[dst * 2 + 1]);
    out.link_hops = 2;
    const bool same_instance = instance_of(src) == instance_of(dst);
    const int traversed = (switch_levels_ <= 1 || same_instance) ? 1 : 2 * switch_levels_ - 1;
    out.wire_latency_ns = 2 * link_latency_ns_ + traversed * switch_latency_ns_;
    return;
  }
  // Torus, dimension order X, Y, Z.
  std::array<std::uint32_t, 3> at{src % dims_[0], (src / dims_[0]) % dims_[1],
                                  (src / (dims_[0] * dims_[1])) % dims_[2]};
  const std::array<std::uint32_t, 3> to{dst % dims_[0], (dst / dims_[0]) % dims_[1],
                                        (dst / (dims_[0] * dims_[1])) % dims_[2]};
  const std::uint32_t base = src - (src % domain_chips_);
  for (int d = 0; d < 3; ++d) {
    const std::uint32_t size = dims_[d];
    if (at[d] == to[d]) continue;
    const std::uint32_t forward = (to[d] + size - at[d]) % size;
    const std::uint32_t backward = size - forward;
    int direction = forward < backward ? 1 : -1;
    if (forward == backward) direction = (at[d] % 2 == 0) ? 1 : -1;
    while (at[d] != to[d]) {
      const std::uint32_t chip = base + at[0] + dims_[0] * (at[1] + dims_[1] * at[2]);
      const std::uint32_t link = link_id(chip, d, direction);
      if (link != kNoLink) out.resources.push_back(link);
      out.wire_latency_ns += link_latency_ns_;
      ++out.link_hops;
      at[d] = static_cast<std::uint32_t>(static_cast<int>(at[d] + size) + direction) % size;
    }
  }
}

std::uint64_t Fabric::ring_position(std::uint32_t chip) const {
  const std::uint64_t domain = domain_of(chip);
  const std::uint32_t local = chip % domain_chips_;
  if (kind_ != Kind::kTorus) return domain * domain_chips_ + local;
  const std::uint32_t x = local % dims_[0];
  const std::uint32_t y = (local / dims_[0]) % dims_[1];
  const std::uint32_t z = local / (dims_[0] * dims_[1]);
  const std::uint32_t plane = dims_[0] * dims_[1];
  // Snake through each XY plane (odd rows reversed); odd planes walk their snake backwards, so
  // consecutive positions are neighbours and the last plane's end is next to the first's start.
  std::uint32_t in_plane = y * dims_[0] + (y % 2 == 1 ? dims_[0] - 1 - x : x);
  if (z % 2 == 1) in_plane = plane - 1 - in_plane;
  return domain * domain_chips_ + static_cast<std::uint64_t>(z) * plane + in_plane;
}

std::string Fabric::describe() const {
  std::string text;
  switch (kind_) {
    case Kind::kSingle:
      text = fmt::format("{} chip(s), no chip-to-chip links", chips_);
      break;
    case Kind::kTorus:
      text = fmt::format("{}x{}x{} torus of {} chips: {:g} GB/s per link per direction (X, Y)",
                         dims_[0], dims_[1], dims_[2], domain_chips_, dim_bytes_per_ns_[0]);
      if (dims_[2] > 1) text += fmt::format(", {:g} GB/s (Z)", dim_bytes_per_ns_[2]);
      text += fmt::format(", {:g} ns per link", link_latency_ns_);
      break;
    case Kind::kSwitch:
      text = fmt::format(
          "{} chips on {} switch level(s): {:g} GB/s per chip per direction, {:g} ns per switch",
          chips_, switch_levels_, port_bytes_per_ns_, switch_latency_ns_);
      break;
  }
  if (domains() > 1) {
    text += fmt::format("; {} domains joined by EFA ({:g} GB/s per chip, {:g} ns)", domains(),
                        efa_bytes_per_ns_, efa_latency_ns_);
  }
  return text;
}

}  // namespace trnsim::fabric
