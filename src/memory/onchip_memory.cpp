#include "memory/onchip_memory.hpp"

#include <algorithm>

#include "trnsim/hbm_target.hpp"
#include "util/sim_time.hpp"

namespace trnsim::memory {

OnChipMemory::OnChipMemory(sc_core::sc_module_name name, double bandwidth_gbps)
    : sc_core::sc_module(name), socket("socket"), bytes_per_ns_(bandwidth_gbps) {
  sim_time::scale();  // before any conversion (util/sim_time.hpp)
  socket.register_b_transport(this, &OnChipMemory::b_transport);
}

void OnChipMemory::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const double now = sim_time::now_ns();
  const double arrival = now + sim_time::to_ns(delay);
  const double bytes = payload.get_data_length();
  const double length = bytes / bytes_per_ns_;
  const double start = std::max(arrival, theoretical_arrival_ns_ - kOrderToleranceNs);
  theoretical_arrival_ns_ = std::max(theoretical_arrival_ns_, start) + length;
  stats_.busy_ns += length;
  stats_.wait_ns += start - arrival;
  (payload.get_command() == tlm::TLM_WRITE_COMMAND ? stats_.write_bytes : stats_.read_bytes) +=
      payload.get_data_length();
  delay = sim_time::from_ns(start + length - now);
  if (auto* extension = payload.get_extension<TransactionTiming>()) {
    extension->accept_delay = sim_time::from_ns(start - now);
  }
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace trnsim::memory
