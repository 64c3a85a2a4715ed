// `hbm.model` = ideal: an HBM stack without DRAM structure, as a bound for "what if memory were
// perfect" questions. Every transaction is served in arrival order by one server at the stack's
// peak bandwidth (hbm.stack_bandwidth_gbps) and completes hbm.controller_latency_ns after its
// last byte; it is accepted at issue (no back-pressure). A TLM-2.0 target under the contract of
// trnsim/hbm_target.hpp.
// Leaves out: channels, banks, rows, bus turnarounds and refresh (the banked model's hbm.*
// timings have no effect).
#pragma once

#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <systemc>
#include <tlm>

#include "config/params.hpp"
#include "trnsim/hbm_target.hpp"

namespace trnsim::memory {

class IdealHbmStack : public HbmTarget {
 public:
  tlm_utils::simple_target_socket<IdealHbmStack> socket;

  IdealHbmStack(sc_core::sc_module_name name, const config::HbmParams& params);

  tlm::tlm_target_socket<>& target_socket() override { return socket; }
  /// read_bytes, write_bytes, requests, mean_queueing_delay_ns, achieved/peak bandwidth,
  /// utilization_pct (docs/outputs.md, hbm.stacks[]).
  void add_statistics(stats::Group& stack, double elapsed_ns) const override;

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  const double bytes_per_ns_;
  const double latency_ns_;
  double free_ns_ = 0;  ///< the server is busy until then
  std::uint64_t read_bytes_ = 0;
  std::uint64_t write_bytes_ = 0;
  std::uint64_t requests_ = 0;
  double queueing_ns_ = 0;  ///< sum over transactions of (service start - issue)
};

}  // namespace trnsim::memory
