// SBUF or PSUM of one NeuronCore as a DMA endpoint: a loosely-timed TLM-2.0 target whose DMA
// port moves `bandwidth` bytes/ns. The port is a rate limit (GCRA): a transaction waits only when
// the traffic so far exceeds the bandwidth, so transactions may arrive out of time order by up to
// kOrderToleranceNs (the DMA scheduler writes a packet when its read completes, ahead of other
// engines' earlier transactions) without delaying each other.
// Leaves out: the compute engines' own traffic on SBUF/PSUM (their cost models account for it),
// bank structure, access latency beyond the port time. Timing only: data is never touched.
#pragma once

#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <systemc>
#include <tlm>

namespace trnsim::memory {

struct OnChipStats {
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
  double busy_ns = 0;  ///< port occupancy
  double wait_ns = 0;  ///< transactions waiting for the port
};

class OnChipMemory : public sc_core::sc_module {
 public:
  /// How far out of time order transactions may arrive without delaying each other, ns. A
  /// modelling allowance (the DMA read latency plus an HBM refresh), not a hardware parameter.
  static constexpr double kOrderToleranceNs = 1000;

  tlm_utils::simple_target_socket<OnChipMemory> socket;

  /// `bandwidth_gbps`: the DMA port's bandwidth in GB/s (= bytes/ns).
  OnChipMemory(sc_core::sc_module_name name, double bandwidth_gbps);

  const OnChipStats& stats() const { return stats_; }

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  const double bytes_per_ns_;
  double theoretical_arrival_ns_ = 0;  ///< GCRA: when the port would be free at its full rate
  OnChipStats stats_;
};

}  // namespace trnsim::memory
