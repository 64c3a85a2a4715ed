// The built-in HBM model (`hbm.model` = banked): one HBM stack as a loosely-timed TLM-2.0 target
// (trnsim/hbm_target.hpp states the contract). b_transport schedules the transaction on the
// stack's channels (HbmStackTiming: address mapping, banks, rows, bus, refresh) at
// sc_time_stamp() + the annotated delay, and returns the completion as the annotated delay and
// the accept time in the TransactionTiming extension. Timing only: payload data is never read
// or written.
#pragma once

#include <tlm_utils/simple_target_socket.h>

#include <systemc>
#include <tlm>

#include "config/params.hpp"
#include "memory/hbm_timing.hpp"
#include "trnsim/hbm_target.hpp"

namespace trnsim::memory {

class HbmStack : public HbmTarget {
 public:
  tlm_utils::simple_target_socket<HbmStack> socket;

  HbmStack(sc_core::sc_module_name name, const config::HbmParams& params);

  tlm::tlm_target_socket<>& target_socket() override { return socket; }
  /// Totals, row outcomes, queueing and one entry per channel (docs/outputs.md, hbm.stacks[]).
  void add_statistics(stats::Group& stack, double elapsed_ns) const override;

  const HbmStackTiming& timing() const { return timing_; }

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  HbmStackTiming timing_;
};

/// Builds banked stacks with `params` (copied): the factory of `hbm.model` = banked.
HbmTargetFactory banked_stacks(const config::HbmParams& params);

}  // namespace trnsim::memory
