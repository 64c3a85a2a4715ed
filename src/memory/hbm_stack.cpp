#include "memory/hbm_stack.hpp"

#include "util/percent.hpp"
#include "util/sim_time.hpp"

namespace trnsim::memory {

using util::percent;

HbmStack::HbmStack(sc_core::sc_module_name name, const config::HbmParams& params)
    : HbmTarget(name), socket("socket"), timing_(params) {
  sim_time::scale();  // before any conversion (util/sim_time.hpp)
  socket.register_b_transport(this, &HbmStack::b_transport);
}

void HbmStack::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const double now = sim_time::now_ns();
  const double issue = now + sim_time::to_ns(delay);
  const StackAccess access = timing_.access(issue, payload.get_address(), payload.get_data_length(),
                                            payload.get_command() == tlm::TLM_WRITE_COMMAND);
  delay = sim_time::from_ns(access.done_ns - now);
  if (auto* extension = payload.get_extension<TransactionTiming>()) {
    extension->accept_delay = sim_time::from_ns(access.accept_ns - now);
  }
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

void HbmStack::add_statistics(stats::Group& stack, double elapsed_ns) const {
  using stats::Unit;
  const ChannelStats total = timing_.totals();
  if (total.requests == 0) return;
  const double bytes = static_cast<double>(total.read_bytes + total.write_bytes);
  const double achieved = elapsed_ns > 0 ? bytes / elapsed_ns : 0;
  const auto requests = static_cast<double>(total.requests);
  stack.add("read_bytes", total.read_bytes, Unit::kBytes);
  stack.add("write_bytes", total.write_bytes, Unit::kBytes);
  stack.add("requests", total.requests, Unit::kCount);
  stack.add("row_hit_pct", percent(static_cast<double>(total.row_hits), requests), Unit::kPercent);
  stack.add("row_conflict_pct", percent(static_cast<double>(total.row_conflicts), requests),
            Unit::kPercent);
  stack.add("mean_queueing_delay_ns", total.queueing_ns / requests, Unit::kNs);
  stack.add("achieved_bandwidth_gbps", achieved, Unit::kGbps);
  stack.add("peak_bandwidth_gbps", timing_.peak_bytes_per_ns(), Unit::kGbps);
  stack.add("utilization_pct", percent(achieved, timing_.peak_bytes_per_ns()), Unit::kPercent);
  std::deque<stats::Group>& channels = stack.list("channels");
  for (std::size_t c = 0; c < timing_.channel_count(); ++c) {
    const ChannelStats& ch = timing_.channel(c).stats();
    stats::Group& channel = channels.emplace_back("channels");
    channel.add("channel", c, Unit::kIndex);
    channel.add("read_bytes", ch.read_bytes, Unit::kBytes);
    channel.add("write_bytes", ch.write_bytes, Unit::kBytes);
    channel.add("requests", ch.requests, Unit::kCount);
    channel.add("row_hit_pct",
                percent(static_cast<double>(ch.row_hits), static_cast<double>(ch.requests)),
                Unit::kPercent);
    channel.add("mean_queueing_delay_ns", ch.requests ? ch.queueing_ns / ch.requests : 0.0,
                Unit::kNs);
    channel.add("bus_busy_pct", percent(ch.bus_busy_ns, elapsed_ns), Unit::kPercent);
  }
}

HbmTargetFactory banked_stacks(const config::HbmParams& params) {
  return [params](sc_core::sc_module_name name, const HbmTargetSpec& /*spec*/) {
    return std::make_unique<HbmStack>(name, params);
  };
}

}  // namespace trnsim::memory
