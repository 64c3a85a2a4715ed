#include "core/core_stats.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "util/percent.hpp"
#include "util/sim_time.hpp"

namespace trnsim::core {

namespace {

using stats::Unit;
using EngineKind = kernel::Engine;
using util::percent;

void add_engine_statistics(stats::Group& out, const EngineStats& engine, double kernel_ns) {
  out.add("instructions", engine.instructions, Unit::kCount);
  out.add("active_ns", engine.active_ns, Unit::kNs);
  out.add("active_pct", percent(engine.active_ns, kernel_ns), Unit::kPercent);
  // An engine runs at its full rate while it executes: its utilisation is its active share.
  // The DMA row's is its bandwidth utilisation (add_dma_statistics()).
  out.add("utilisation_pct", percent(engine.active_ns, kernel_ns), Unit::kPercent);
  out.add("dependency_wait_ns", engine.wait_ns(), Unit::kNs);
  out.add("dependency_wait_pct", percent(engine.wait_ns(), kernel_ns), Unit::kPercent);
  stats::Group& by_producer = out.group("dependency_wait_by_producer_ns");
  for (std::size_t i = 0; i < engine.wait_ns_by_producer.size(); ++i) {
    if (engine.wait_ns_by_producer[i] > 0) {
      by_producer.add(kernel::engine_name(static_cast<EngineKind>(i)),
                      engine.wait_ns_by_producer[i], Unit::kNs);
    }
  }
  out.add("port_wait_ns", engine.port_wait_ns, Unit::kNs);
  stats::Group& ops = out.group("instructions_by_op");
  for (std::size_t op = 0; op < engine.op_counts.size(); ++op) {
    if (engine.op_counts[op] > 0) {
      ops.add(kernel::opcode_name(static_cast<kernel::Opcode>(op)), engine.op_counts[op],
              Unit::kCount);
    }
  }
}

/// A resource a core's DMAs pass through (every DMA the DMA engines; HBM reads and writes the
/// HBM port of their direction), with the bytes it carried and its peak rate.
struct DmaResource {
  const char* name;
  std::uint64_t bytes;
  double peak_gbps;  ///< GB/s = bytes per ns
};

std::array<DmaResource, 3> dma_resources(const CoreStats& core, const config::Params& params) {
  const config::DmaParams& dma = params.dma;
  return {{{"dma_engines", core.dma_bytes,
            std::min(dma.engines_per_core * dma.engine_bandwidth_gbps, dma.core_bandwidth_gbps)},
           {"hbm_read_port", core.hbm_read_bytes, dma.hbm_port_bandwidth_gbps},
           {"hbm_write_port", core.hbm_write_bytes, dma.hbm_port_bandwidth_gbps}}};
}

/// The core's "dma" statistics; returns its utilisation, comparable with an engine's active
/// share: that of its busiest resource, the share of the kernel time the resource needs to
/// carry its bytes at its peak rate.
double add_dma_statistics(stats::Group& out, const CoreStats& core, const config::Params& params,
                          double kernel_ns) {
  out.add("transfers", core.dma_transfers, Unit::kCount);
  out.add("bytes", core.dma_bytes, Unit::kBytes);
  out.add("active_pct",
          percent(core.engines[static_cast<std::size_t>(EngineKind::kDma)].active_ns, kernel_ns),
          Unit::kPercent);
  out.add("achieved_gbps", kernel_ns > 0 ? core.dma_bytes / kernel_ns : 0.0, Unit::kGbps);
  stats::Group& resources = out.group("resources");
  std::string busiest = "dma_engines";
  double busiest_pct = 0;
  for (const DmaResource& resource : dma_resources(core, params)) {
    const double needed_ns = resource.peak_gbps > 0 ? resource.bytes / resource.peak_gbps : 0.0;
    const double pct = percent(needed_ns, kernel_ns);
    stats::Group& group = resources.group(resource.name);
    group.add("bytes", resource.bytes, Unit::kBytes);
    group.add("peak_gbps", resource.peak_gbps, Unit::kGbps);
    group.add("utilisation_pct", pct, Unit::kPercent);
    if (pct > busiest_pct) {
      busiest_pct = pct;
      busiest = resource.name;
    }
  }
  out.add("utilisation_pct", busiest_pct, Unit::kPercent);
  out.add("busiest_resource", busiest, Unit::kText);
  return busiest_pct;
}

constexpr ConcurrentUnitTime::Ticks kEndOfTime = std::numeric_limits<std::uint64_t>::max();

}  // namespace

ConcurrentUnitTime::ConcurrentUnitTime(EngineStats& stats, double ticks_per_ns)
    : stats_(stats), ticks_per_ns_(ticks_per_ns) {}

void ConcurrentUnitTime::issued(std::size_t lane, std::uint64_t id, Ticks at) {
  open_by_lane_[lane].push_back({id, at, false});
  ++open_items_;
}

void ConcurrentUnitTime::waited(Ticks begin, Ticks end, kernel::Engine producer, Ticks now) {
  begin = std::max(begin, settled_);  // never earlier: its item was open when the sweep got there
  if (end > begin) {
    pending_waits_.insert(
        {begin, end, static_cast<std::uint8_t>(producer)},
        [](const Wait& item, const Wait& earlier) { return earlier.begin > item.begin; });
  }
  settle_after_report(now);
}

void ConcurrentUnitTime::completed(std::uint64_t id, Ticks begin, Ticks end, Ticks now) {
  close(id);
  begin = std::max(begin, settled_);
  if (end > begin) add_busy(begin, end);
  settle_after_report(now);
}

void ConcurrentUnitTime::all_issued() {
  all_issued_ = true;
  settle_after_report(kEndOfTime);
}

void ConcurrentUnitTime::settle_after_report(Ticks now) {
  const bool final = all_issued_ && open_items_ == 0;
  if (!final && ++reports_since_settle_ < kReportsPerSettle) return;
  reports_since_settle_ = 0;
  settle(horizon(now));
  if (final) publish();
}

ConcurrentUnitTime::Ticks ConcurrentUnitTime::horizon(Ticks now) const {
  Ticks horizon = all_issued_ ? kEndOfTime : now;
  for (const std::deque<Open>& lane : open_by_lane_) {
    // Completed items leave the front at once, so the front is open and issued first.
    if (!lane.empty()) horizon = std::min(horizon, lane.front().at);
  }
  return horizon;
}

void ConcurrentUnitTime::close(std::uint64_t id) {
  // Items mostly complete in the order their lane issued them: look at the fronts first.
  std::deque<Open>* lane = nullptr;
  std::deque<Open>::iterator found;
  for (std::deque<Open>& candidate : open_by_lane_) {
    if (!candidate.empty() && candidate.front().id == id) {
      lane = &candidate;
      found = candidate.begin();
      break;
    }
  }
  for (std::size_t l = 0; lane == nullptr && l < open_by_lane_.size(); ++l) {
    std::deque<Open>& candidate = open_by_lane_[l];
    if (candidate.empty() || id < candidate.front().id || id > candidate.back().id) continue;
    // A lane's ids increase from front to back.
    const auto at =
        std::lower_bound(candidate.begin(), candidate.end(), id,
                         [](const Open& open, std::uint64_t key) { return open.id < key; });
    if (at != candidate.end() && at->id == id) {
      lane = &candidate;
      found = at;
    }
  }
  if (lane == nullptr || found->completed) return;
  found->completed = true;
  --open_items_;
  while (!lane->empty() && lane->front().completed) lane->pop_front();
}

void ConcurrentUnitTime::add_busy(Ticks begin, Ticks end) {
  if (busy_.size() == busy_head_ || begin > busy_.back().end) {
    busy_.push_back({begin, end});
    return;
  }
  if (begin >= busy_.back().begin) {
    busy_.back().end = std::max(busy_.back().end, end);
    return;
  }
  // Out of order: merge with every interval it touches (none before busy_head_: they ended
  // before settled_, where this one begins at the earliest).
  const auto head = busy_.begin() + static_cast<std::ptrdiff_t>(busy_head_);
  const auto first = std::lower_bound(head, busy_.end(), begin,
                                      [](const Busy& busy, Ticks key) { return busy.end < key; });
  auto last = first;
  while (last != busy_.end() && last->begin <= end) {
    begin = std::min(begin, last->begin);
    end = std::max(end, last->end);
    ++last;
  }
  if (first == last) {
    busy_.insert(first, {begin, end});
  } else {
    *first = {begin, end};
    busy_.erase(first + 1, last);
  }
}

void ConcurrentUnitTime::settle(Ticks horizon) {
  if (horizon <= settled_) return;
  Ticks now = settled_;
  // From one change (a wait or busy interval beginning or ending) to the next; in between the
  // state is constant. A busy stretch is passed in one step.
  while (now < horizon) {
    while (!pending_waits_.empty() && pending_waits_.front().begin <= now) {
      const Wait& wait = pending_waits_.front();
      if (wait.end > now) {
        const std::pair<Ticks, std::uint8_t> entry{wait.end, wait.producer};
        waiting_.insert(entry,
                        [](const auto& item, const auto& earlier) { return earlier > item; });
      }
      pending_waits_.pop_front();
    }
    while (busy_head_ < busy_.size() && busy_[busy_head_].end <= now) ++busy_head_;
    if (busy_head_ < busy_.size() && busy_[busy_head_].begin <= now) {
      // Busy: what waits meanwhile does not count, so on to the end of the interval.
      const Ticks until = std::min(horizon, busy_[busy_head_].end);
      active_ticks_ += until - now;
      now = until;
      continue;
    }
    while (!waiting_.empty() && waiting_.front().first <= now) waiting_.pop_front();
    Ticks next_change = horizon;
    if (busy_head_ < busy_.size()) next_change = std::min(next_change, busy_[busy_head_].begin);
    if (!pending_waits_.empty()) next_change = std::min(next_change, pending_waits_.front().begin);
    if (!waiting_.empty()) {
      next_change = std::min(next_change, waiting_.front().first);
      wait_ticks_[waiting_.front().second] += next_change - now;
    }
    now = next_change;
  }
  settled_ = horizon;
  // Forget the busy intervals the sweep has passed, in batches: amortised constant time.
  if (busy_head_ >= 64 && busy_head_ * 2 >= busy_.size()) {
    busy_.erase(busy_.begin(), busy_.begin() + static_cast<std::ptrdiff_t>(busy_head_));
    busy_head_ = 0;
  }
}

void ConcurrentUnitTime::publish() {
  // Ticks -> ns as the timing model converts times, so equal tick counts give equal ns.
  const auto to_ns = [this](Ticks ticks) { return sim_time::ticks_to_ns(ticks, ticks_per_ns_); };
  stats_.active_ns = to_ns(active_ticks_);
  for (std::size_t producer = 0; producer < wait_ticks_.size(); ++producer) {
    stats_.wait_ns_by_producer[producer] = to_ns(wait_ticks_[producer]);
  }
}

void add_statistics(stats::Group& core, const CoreStats& counters, const config::Params& params,
                    double kernel_ns) {
  core.add("pid", counters.pid, Unit::kIndex);
  core.add("instructions", counters.instructions, Unit::kCount);
  core.add("end_ns", counters.end_ns, Unit::kNs);
  stats::Group& engines = core.group("engines");
  for (EngineKind unit : kReportedUnits) {
    add_engine_statistics(engines.group(kernel::engine_name(unit)),
                          counters.engines[static_cast<std::size_t>(unit)], kernel_ns);
  }
  const double seconds = kernel_ns * 1e-9;
  stats::Group& tensor = core.group("tensor");
  tensor.add("flops", counters.matmul_flops, Unit::kCount);
  tensor.add("achieved_tflops", seconds > 0 ? counters.matmul_flops / seconds / 1e12 : 0.0,
             Unit::kTflops);
  tensor.add("peak_bf16_tflops", params.peak_bf16_flops_per_core() / 1e12, Unit::kTflops);
  tensor.add("ideal_ns", counters.tensor_ideal_ns, Unit::kNs);
  tensor.add("mfu_pct", percent(counters.tensor_ideal_ns, kernel_ns), Unit::kPercent);
  tensor.add("throttled_ns", counters.throttled_ns, Unit::kNs);
  const std::uint64_t hbm_bytes = counters.hbm_read_bytes + counters.hbm_write_bytes;
  stats::Group& hbm = core.group("hbm");
  hbm.add("read_bytes", counters.hbm_read_bytes, Unit::kBytes);
  hbm.add("write_bytes", counters.hbm_write_bytes, Unit::kBytes);
  hbm.add("achieved_gbps", kernel_ns > 0 ? hbm_bytes / kernel_ns : 0.0, Unit::kGbps);
  const double dma_utilisation = add_dma_statistics(core.group("dma"), counters, params, kernel_ns);
  engines.group(kernel::engine_name(EngineKind::kDma))
      .add("utilisation_pct", dma_utilisation, Unit::kPercent);
}

}  // namespace trnsim::core
