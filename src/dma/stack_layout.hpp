// Which HBM stack serves what, for every DMA model: chip c's stacks are numbered
// c x chip.hbm_stacks + 0 .. chip.hbm_stacks - 1; a core's home stack is the one its position on
// its chip maps to (hbm.cores_per_stack cores per stack), and an HBM operand in address space s
// (its chip) is served by the stack of the accessing core's position on chip s. Pure.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "config/params.hpp"

namespace trnsim::dma {

class StackLayout {
 public:
  StackLayout(const config::Params& params, std::uint32_t cores)
      : cores_per_chip_(static_cast<std::uint32_t>(std::max(1, params.chip.cores))),
        cores_per_stack_(static_cast<std::uint32_t>(std::max(1, params.hbm.cores_per_stack))),
        stacks_per_chip_(static_cast<std::uint32_t>(std::max(1, params.chip.hbm_stacks))),
        stacks_((std::max<std::uint32_t>(1, cores) + cores_per_chip_ - 1) / cores_per_chip_ *
                stacks_per_chip_) {}

  /// Stacks of the chips that `cores` cores occupy.
  std::uint32_t stacks() const { return stacks_; }
  std::uint32_t stacks_per_chip() const { return stacks_per_chip_; }

  /// The stack of core `pid`'s position on its own chip.
  std::uint32_t home(std::uint32_t pid) const {
    const std::uint32_t local =
        std::min(pid % cores_per_chip_ / cores_per_stack_, stacks_per_chip_ - 1);
    return pid / cores_per_chip_ * stacks_per_chip_ + local;
  }

  /// The stack core `pid` reaches for an HBM operand of address space (chip) `space`; its home
  /// stack when `space` is past the simulated chips.
  std::uint32_t of_operand(std::uint32_t space, std::uint32_t pid) const {
    const std::uint32_t own = home(pid);
    const std::uint64_t stack = std::uint64_t{space} * stacks_per_chip_ + own % stacks_per_chip_;
    return stack < stacks_ ? static_cast<std::uint32_t>(stack) : own;
  }

 private:
  std::uint32_t cores_per_chip_;
  std::uint32_t cores_per_stack_;
  std::uint32_t stacks_per_chip_;
  std::uint32_t stacks_;
};

/// A stack's bandwidth less the refresh share, 1 - t_rfc / t_refi (at most 90 % off), bytes/ns:
/// what the rate models (transfer, flow) let a stack sustain.
inline double refreshed_stack_bytes_per_ns(const config::HbmParams& hbm) {
  const double refresh =
      hbm.t_refi_ns > 0 ? std::clamp(hbm.t_rfc_ns / hbm.t_refi_ns, 0.0, 0.9) : 0.0;
  return hbm.stack_bandwidth_gbps * (1.0 - refresh);
}

/// The access latency of a request whose bank has another row open, up to its last byte
/// (controller + t_rp + t_rcd + t_cl + the burst of `bytes`, at most one interleave granule, on
/// its channel), ns. Rows are hashed over the banks, so a DMA's last packet meets other rows open.
inline double row_conflict_latency_ns(const config::HbmParams& hbm, double bytes) {
  const double channel_bytes_per_ns =
      hbm.stack_bandwidth_gbps / static_cast<double>(std::max(1, hbm.channels_per_stack));
  const double burst_bytes = static_cast<double>(std::max(1, hbm.burst_bytes));
  const double granule = std::min(bytes, static_cast<double>(std::max(1, hbm.interleave_bytes)));
  const double bursts = std::ceil(granule / burst_bytes);
  return hbm.controller_latency_ns + hbm.t_rp_ns + hbm.t_rcd_ns + hbm.t_cl_ns +
         bursts * burst_bytes / channel_bytes_per_ns;
}

/// What the rate models (transfer, flow) add to a DMA touching HBM after its engines have moved
/// its last packet (`packet_bytes` in `packet_ns` of engine time), ns, as in the packet model:
/// an HBM read is issued when the packet starts, so its latency shows only where it outlasts the
/// packet's streaming; an HBM write is issued when the packet's data has been read (after the
/// streaming, and after the read's latency when the source is HBM too), so its latency shows in
/// full.
inline double hbm_tail_latency_ns(const config::HbmParams& hbm, bool reads_hbm, bool writes_hbm,
                                  double packet_bytes, double packet_ns) {
  const double access = row_conflict_latency_ns(hbm, packet_bytes);
  return (reads_hbm ? std::max(0.0, access - packet_ns) : 0.0) + (writes_hbm ? access : 0.0);
}

}  // namespace trnsim::dma
