// TLM-2.0 extension carrying what a loosely-timed memory target reports besides the annotated
// delay of b_transport (the time the transaction completes): when the target accepted it. A
// target whose controller queue is full accepts late; the initiator must not issue its next
// transaction before that (back-pressure without a handshake phase).
#pragma once

#include <tlm>

namespace trnsim::memory {

class TransactionTiming : public tlm::tlm_extension<TransactionTiming> {
 public:
  /// Accept time as a delay relative to sc_time_stamp(), like the b_transport annotation.
  sc_core::sc_time accept_delay;

  tlm::tlm_extension_base* clone() const override { return new TransactionTiming(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    accept_delay = static_cast<const TransactionTiming&>(other).accept_delay;
  }
};

}  // namespace trnsim::memory
