#include "memory/hbm_stack.hpp"

#include "memory/sim_time.hpp"
#include "memory/transaction_timing.hpp"

namespace trnsim::memory {

HbmStack::HbmStack(sc_core::sc_module_name name, const config::HbmParams& params)
    : sc_core::sc_module(name), socket("socket"), timing_(params) {
  socket.register_b_transport(this, &HbmStack::b_transport);
}

void HbmStack::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const double now = now_ns();
  const double issue = now + to_ns(delay);
  const StackAccess access = timing_.access(issue, payload.get_address(), payload.get_data_length(),
                                            payload.get_command() == tlm::TLM_WRITE_COMMAND);
  delay = from_ns(access.done_ns - now);
  if (auto* extension = payload.get_extension<TransactionTiming>()) {
    extension->accept_delay = from_ns(access.accept_ns - now);
  }
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace trnsim::memory
