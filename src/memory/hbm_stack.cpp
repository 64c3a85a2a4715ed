#include "memory/hbm_stack.hpp"

#include "memory/sim_time.hpp"
#include "util/percent.hpp"

namespace trnsim::memory {

using util::percent;

HbmStack::HbmStack(sc_core::sc_module_name name, const config::HbmParams& params)
    : HbmTarget(name), socket("socket"), timing_(params) {
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

nlohmann::json HbmStack::statistics(double elapsed_ns) const {
  const ChannelStats total = timing_.totals();
  if (total.requests == 0) return nullptr;
  nlohmann::json channels = nlohmann::json::array();
  for (std::size_t c = 0; c < timing_.channel_count(); ++c) {
    const ChannelStats& ch = timing_.channel(c).stats();
    channels.push_back(
        {{"channel", c},
         {"read_bytes", ch.read_bytes},
         {"write_bytes", ch.write_bytes},
         {"requests", ch.requests},
         {"row_hit_pct",
          percent(static_cast<double>(ch.row_hits), static_cast<double>(ch.requests))},
         {"mean_queueing_delay_ns", ch.requests ? ch.queueing_ns / ch.requests : 0.0},
         {"bus_busy_pct", percent(ch.bus_busy_ns, elapsed_ns)}});
  }
  const double bytes = static_cast<double>(total.read_bytes + total.write_bytes);
  const double achieved = elapsed_ns > 0 ? bytes / elapsed_ns : 0;
  const auto requests = static_cast<double>(total.requests);
  return {{"read_bytes", total.read_bytes},
          {"write_bytes", total.write_bytes},
          {"requests", total.requests},
          {"row_hit_pct", percent(static_cast<double>(total.row_hits), requests)},
          {"row_conflict_pct", percent(static_cast<double>(total.row_conflicts), requests)},
          {"mean_queueing_delay_ns", total.queueing_ns / requests},
          {"achieved_bandwidth_gbps", achieved},
          {"peak_bandwidth_gbps", timing_.peak_bytes_per_ns()},
          {"utilization_pct", percent(achieved, timing_.peak_bytes_per_ns())},
          {"channels", channels}};
}

HbmTargetFactory banked_stacks(const config::HbmParams& params) {
  return [params](sc_core::sc_module_name name, const HbmTargetSpec& /*spec*/) {
    return std::make_unique<HbmStack>(name, params);
  };
}

}  // namespace trnsim::memory
