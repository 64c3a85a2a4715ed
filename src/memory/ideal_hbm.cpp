#include "memory/ideal_hbm.hpp"

#include <algorithm>

#include "util/percent.hpp"
#include "util/sim_time.hpp"

namespace trnsim::memory {

IdealHbmStack::IdealHbmStack(sc_core::sc_module_name name, const config::HbmParams& params)
    : HbmTarget(name),
      socket("socket"),
      bytes_per_ns_(params.stack_bandwidth_gbps),
      latency_ns_(params.controller_latency_ns) {
  sim_time::scale();  // before any conversion (util/sim_time.hpp)
  socket.register_b_transport(this, &IdealHbmStack::b_transport);
}

void IdealHbmStack::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const double now = sim_time::now_ns();
  const double issue = now + sim_time::to_ns(delay);
  const double start = std::max(issue, free_ns_);
  free_ns_ = start + payload.get_data_length() / bytes_per_ns_;
  queueing_ns_ += start - issue;
  ++requests_;
  (payload.get_command() == tlm::TLM_WRITE_COMMAND ? write_bytes_ : read_bytes_) +=
      payload.get_data_length();
  delay = sim_time::from_ns(free_ns_ + latency_ns_ - now);
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

void IdealHbmStack::add_statistics(stats::Group& stack, double elapsed_ns) const {
  using stats::Unit;
  if (requests_ == 0) return;
  const double achieved =
      elapsed_ns > 0 ? static_cast<double>(read_bytes_ + write_bytes_) / elapsed_ns : 0;
  stack.add("read_bytes", read_bytes_, Unit::kBytes);
  stack.add("write_bytes", write_bytes_, Unit::kBytes);
  stack.add("requests", requests_, Unit::kCount);
  stack.add("mean_queueing_delay_ns", queueing_ns_ / static_cast<double>(requests_), Unit::kNs);
  stack.add("achieved_bandwidth_gbps", achieved, Unit::kGbps);
  stack.add("peak_bandwidth_gbps", bytes_per_ns_, Unit::kGbps);
  stack.add("utilization_pct", util::percent(achieved, bytes_per_ns_), Unit::kPercent);
}

}  // namespace trnsim::memory
