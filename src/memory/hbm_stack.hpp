// One HBM stack as a loosely-timed TLM-2.0 target: b_transport schedules the transaction on the
// stack's channels (HbmStackTiming) at sc_time_stamp() + the annotated delay, and returns the
// completion as the annotated delay and the accept time in a TransactionTiming extension.
// Timing only: payload data is never read or written. Transactions must arrive in nondecreasing
// time (the DMA scheduler guarantees it).
#pragma once

#include <tlm_utils/simple_target_socket.h>

#include <systemc>
#include <tlm>

#include "config/params.hpp"
#include "memory/hbm_timing.hpp"

namespace trnsim::memory {

class HbmStack : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<HbmStack> socket;

  HbmStack(sc_core::sc_module_name name, const config::HbmParams& params);

  const HbmStackTiming& timing() const { return timing_; }

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  HbmStackTiming timing_;
};

}  // namespace trnsim::memory
