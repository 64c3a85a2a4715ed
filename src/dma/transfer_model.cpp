#include "dma/transfer_model.hpp"

#include <algorithm>
#include <limits>
#include <utility>

#include "dma/descriptors.hpp"
#include "util/log.hpp"
#include "util/sim_time.hpp"

namespace trnsim::dma {

using kernel::MemoryKind;

using sim_time::kNeverNs;

double TransferLevelDma::RateLimit::admit(double start_ns, double bytes) {
  tat_ns = std::max(tat_ns, start_ns) + bytes / bytes_per_ns;
  return tat_ns;
}

TransferLevelDma::TransferLevelDma(const config::Params& params, std::uint32_t cores,
                                   Shortcuts shortcuts)
    : params_(params),
      cores_(std::max<std::uint32_t>(1, cores)),
      engines_per_core_(static_cast<std::uint32_t>(std::max(1, params.dma.engines_per_core))),
      layout_(params, cores_),
      descriptor_free_ns_(std::size_t{cores_} * engines_per_core_, 0.0),
      data_free_ns_(std::size_t{cores_} * engines_per_core_, 0.0),
      lockstep_(cores_, shortcuts == Shortcuts::kOn ? engines_per_core_ : 1),
      shortcuts_(shortcuts == Shortcuts::kOn),
      core_caps_(cores_, RateLimit{params.dma.core_bandwidth_gbps}),
      read_ports_(cores_, RateLimit{params.dma.hbm_port_bandwidth_gbps}),
      write_ports_(cores_, RateLimit{params.dma.hbm_port_bandwidth_gbps}),
      core_stats_(cores_),
      on_chip_(cores_),
      generators_(params.dma, cores_),
      trace_(log::debug_enabled("dma")) {
  sim_time::scale();  // before any conversion (util/sim_time.hpp)
  stacks_.assign(layout_.stacks(), RateLimit{refreshed_stack_bytes_per_ns(params.hbm)});
  stack_stats_.resize(stacks_.size());
  home_cores_.assign(stacks_.size(), 0);
  for (std::uint32_t pid = 0; pid < cores_; ++pid) ++home_cores_[layout_.home(pid)];
  const auto queues = static_cast<std::size_t>(std::max(1, params.dma.queues_per_engine));
  for (CoreDmaStats& stats : core_stats_) stats.queues.resize(queues);
  queue_done_ns_.assign(std::size_t{cores_} * queues, 0.0);
}

bool TransferLevelDma::isolates_core(std::uint32_t pid) const {
  return pid < cores_ && home_cores_[layout_.home(pid)] == 1;
}

double TransferLevelDma::core_peak_bytes_per_ns() const {
  return std::min(engines_per_core_ * params_.dma.engine_bandwidth_gbps,
                  params_.dma.core_bandwidth_gbps);
}

namespace {

/// True when two operands have the same shape, whatever their addresses: everything
/// plan_transfer reads but the offsets and the first partition.
bool same_shape(const kernel::AccessPattern& a, const kernel::AccessPattern& b) {
  if (a.memory != b.memory || a.dtype != b.dtype || a.rank != b.rank ||
      a.partition_axis != b.partition_axis || a.partitions != b.partitions) {
    return false;
  }
  for (std::uint8_t d = 0; d < a.rank; ++d) {
    if (a.sizes[d] != b.sizes[d] || a.strides[d] != b.strides[d]) return false;
  }
  return true;
}

}  // namespace

void TransferLevelDma::compute_split(const kernel::Instruction& instruction,
                                     EngineSplit& split) const {
  const TransferPlan plan = plan_transfer(instruction, params_, 0, 0);
  split.rate = params_.dma.engine_bandwidth_gbps * plan.efficiency;
  split.row_bytes = static_cast<double>(plan.inner) * plan.moved_element_bytes;
  split.descriptors_per_block = plan.descriptors_per_block;
  split.bytes = plan.bytes;
  split.total_descriptors = 0;
  split.engines = 0;
  split.descriptors.assign(engines_per_core_, 0.0);
  split.busy_ns.assign(engines_per_core_, 0.0);
  for (std::uint32_t e = 0; e < engines_per_core_ && plan.outer > 0; ++e) {
    const std::uint64_t rows = plan.end_row(e) - plan.first_row(e);
    if (rows == 0) continue;
    split.engines = e + 1;
    split.descriptors[e] = static_cast<double>(plan.descriptors_of(e));
    split.busy_ns[e] = static_cast<double>(plan.outer * rows) * split.row_bytes / split.rate;
    split.total_descriptors += plan.descriptors_of(e);
  }
  split.uniform = true;
  for (std::uint32_t e = 1; e < split.engines; ++e) {
    split.uniform = split.uniform && split.descriptors[e] == split.descriptors[0] &&
                    split.busy_ns[e] == split.busy_ns[0];
  }
}

const TransferLevelDma::EngineSplit& TransferLevelDma::engine_split(
    const kernel::Instruction& instruction) {
  auto matches = [&](const SplitCacheEntry& entry) {
    return entry.valid && entry.opcode == instruction.opcode &&
           same_shape(entry.src, instruction.src()) && same_shape(entry.dst, instruction.dst());
  };
  if (!shortcuts_) {
    compute_split(instruction, split_cache_[0].split);
    return split_cache_[0].split;
  }
  if (matches(split_cache_[split_cache_last_])) return split_cache_[split_cache_last_].split;
  // Streams often alternate two shapes (a load and a store): the hit before the latest next.
  if (matches(split_cache_[split_cache_previous_])) {
    std::swap(split_cache_last_, split_cache_previous_);
    return split_cache_[split_cache_last_].split;
  }
  for (std::size_t i = 0; i < kSplitCacheSize; ++i) {
    if (matches(split_cache_[i])) {
      split_cache_previous_ = split_cache_last_;
      split_cache_last_ = i;
      return split_cache_[i].split;
    }
  }
  const std::size_t victim = split_cache_next_;
  split_cache_next_ = (split_cache_next_ + 1) % kSplitCacheSize;
  SplitCacheEntry& entry = split_cache_[victim];
  entry.valid = true;
  entry.opcode = instruction.opcode;
  entry.src = instruction.src();
  entry.dst = instruction.dst();
  compute_split(instruction, entry.split);
  split_cache_previous_ = split_cache_last_;
  split_cache_last_ = victim;
  return entry.split;
}

void TransferLevelDma::submit(std::uint32_t pid, std::uint64_t id,
                              const kernel::Instruction& instruction, core::DmaClient& client) {
  submit_ahead(sc_core::sc_time_stamp(), pid, id, instruction, client);
}

void TransferLevelDma::submit_ahead(const sc_core::sc_time& submitted, std::uint32_t pid,
                                    std::uint64_t id, const kernel::Instruction& instruction,
                                    core::DmaClient& client) {
  const double now = sim_time::to_ns(submitted);
  pid = std::min(pid, cores_ - 1);
  const EngineSplit& split = engine_split(instruction);
  const kernel::AccessPattern& src = instruction.src();
  const kernel::AccessPattern& dst = instruction.dst();

  // Descriptors can be processed from `fetchable` (after their generator, if any, made them);
  // data moves from `ready` (the fixed cost later).
  const double fetchable = generators_.generate(pid, instruction, now);
  const double ready = fetchable + params_.dma.fixed_cost_ns;

  // Engines: the pipelined descriptor unit and data path in closed form (header).
  const double overhead = params_.dma.descriptor_overhead_ns;
  const auto prefetch = static_cast<double>(std::max(1, params_.dma.descriptor_prefetch));
  CoreDmaStats& stats = core_stats_[pid];
  double first_data = sim_time::kNeverNs;
  double engines_done = ready;
  double* descriptor_free = &descriptor_free_ns_[std::size_t{pid} * engines_per_core_];
  double* data_free = &data_free_ns_[std::size_t{pid} * engines_per_core_];
  // The common case: every engine gets the same share and is in the same state (a stream of
  // like transfers): one engine's arithmetic stands for all.
  std::uint32_t& lockstep = lockstep_[pid];
  bool alike = shortcuts_ && split.uniform;
  for (std::uint32_t e = std::max(lockstep, 1u); alike && e < split.engines; ++e) {
    alike = descriptor_free[e] == descriptor_free[0] && data_free[e] == data_free[0];
  }
  // Engines in lockstep that this transfer leaves alone (or all, when engine 0 goes its own way)
  // get their own state back before engine 0 moves.
  const std::uint32_t keep_from = alike ? split.engines : 1;
  for (std::uint32_t e = keep_from; e < lockstep; ++e) {
    descriptor_free[e] = descriptor_free[0];
    data_free[e] = data_free[0];
  }
  lockstep = alike ? split.engines : 1;
  for (std::uint32_t e = 0; e < split.engines; ++e) {
    if (alike && e > 0) {
      stats.engine_busy_ns += split.busy_ns[0];
      continue;
    }
    const double descriptors = split.descriptors[e];
    const double busy = split.busy_ns[e];
    const double per_descriptor = descriptors > 0 ? busy / descriptors : busy;
    const double start = std::max(fetchable, descriptor_free[e]);
    const double data_start = std::max({start + overhead, ready, data_free[e]});
    const double data_end = std::max({data_free[e] + busy, ready + busy, start + overhead + busy,
                                      start + descriptors * overhead + per_descriptor});
    descriptor_free[e] = std::max(start + descriptors * overhead,
                                  data_end - std::min(descriptors, prefetch) * per_descriptor);
    data_free[e] = data_end;
    first_data = std::min(first_data, data_start);
    engines_done = std::max(engines_done, data_end);
    stats.engine_busy_ns += busy;
  }
  stats.descriptors += split.total_descriptors;
  if (trace_) [[unlikely]] {
    trace_plan("transfer", pid, id, split.bytes, split.engines, split.total_descriptors, now,
               ready);
  }
  if (first_data == sim_time::kNeverNs) first_data = ready;

  // Rate limits the DMA's bytes pass, then the memory latency.
  const bool reads_hbm = src.memory == MemoryKind::kHbm;
  const bool writes_hbm = dst.memory == MemoryKind::kHbm;
  // Each pattern's byte count once (bytes() multiplies out its shape).
  const std::uint64_t src_byte_count = src.bytes();
  const std::uint64_t dst_byte_count = dst.bytes();
  const auto src_bytes = static_cast<double>(src_byte_count);
  const auto dst_bytes = static_cast<double>(dst_byte_count);
  double done = std::max(engines_done, core_caps_[pid].admit(first_data, split.bytes));
  std::int32_t stack_touched = -1;
  if (reads_hbm) {
    done = std::max(done, read_ports_[pid].admit(first_data, src_bytes));
    const std::uint32_t stack = layout_.of_operand(src.space, pid);
    done = std::max(done, stacks_[stack].admit(first_data, src_bytes));
    stack_stats_[stack].read += src_byte_count;
    stack_touched = static_cast<std::int32_t>(stack);
  }
  if (writes_hbm) {
    done = std::max(done, write_ports_[pid].admit(first_data, dst_bytes));
    const std::uint32_t stack = layout_.of_operand(dst.space, pid);
    done = std::max(done, stacks_[stack].admit(first_data, dst_bytes));
    stack_stats_[stack].write += dst_byte_count;
    stack_touched = stack_touched >= 0 && stack_touched != static_cast<std::int32_t>(stack)
                        ? -1
                        : static_cast<std::int32_t>(stack);
  }
  // The HBM access latency shows where the last packet streams for less time than it (short
  // rows); otherwise it hides behind the streaming, as in the packet model.
  if (reads_hbm || writes_hbm) {
    const double descriptor_bytes =
        split.descriptors_per_block > 0
            ? split.row_bytes / static_cast<double>(split.descriptors_per_block)
            : split.row_bytes;
    const double last_packet_bytes =
        std::min(descriptor_bytes, static_cast<double>(params_.dma.packet_bytes));
    done += hbm_tail_latency_ns(params_.hbm, reads_hbm, writes_hbm, last_packet_bytes,
                                last_packet_bytes / split.rate);
  }

  const std::uint32_t queue_index =
      instruction.dma_queue % static_cast<std::uint32_t>(stats.queues.size());
  QueueStats& queue = stats.queues[queue_index];
  double& queue_done = queue_done_ns_[pid * stats.queues.size() + queue_index];
  done = std::max(done, queue_done);
  queue_done = done;

  ++stats.transfers;
  stats.bytes += split.bytes;
  ++queue.transfers;
  queue.bytes += split.bytes;
  OnChipBytes& on_chip = on_chip_[pid];
  if (src.memory == MemoryKind::kSbuf) on_chip.sbuf_read += src_byte_count;
  if (src.memory == MemoryKind::kPsum) on_chip.psum_read += src_byte_count;
  if (dst.memory == MemoryKind::kSbuf) on_chip.sbuf_write += dst_byte_count;
  if (dst.memory == MemoryKind::kPsum) on_chip.psum_write += dst_byte_count;
  count_completion(stats, queue_index, first_data, done, last_complete_ns_);
  if (observed()) {
    core::DmaEvent event = core::dma_event_of(pid, id, instruction);
    event.hbm_stack = stack_touched;
    report_transfer(event, now, first_data, done);
  }
  client.dma_complete(id, sim_time::from_ns(done), done - first_data);
}

void TransferLevelDma::add_statistics(stats::Group& memory_system, double elapsed_ns) const {
  add_rate_model_statistics(memory_system, "transfer",
                            elapsed_ns > 0 ? elapsed_ns : last_complete_ns_,
                            core_peak_bytes_per_ns(), engines_per_core_, core_stats_, on_chip_,
                            stack_stats_, layout_, params_.hbm.stack_bandwidth_gbps);
}

}  // namespace trnsim::dma
