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
  batches_.resize(stacks_.size());

  const auto queues = static_cast<std::size_t>(std::max(1, params.dma.queues_per_engine));
  for (CoreDmaStats& stats : core_stats_) stats.queues.resize(queues);
  queue_done_ns_.assign(std::size_t{cores_} * queues, 0.0);
}

std::uint32_t TransferLevelDma::isolation_group(std::uint32_t pid) const {
  return pid < cores_ ? layout_.home(pid) : kNoIsolation;
}

double TransferLevelDma::core_peak_bytes_per_ns() const {
  return std::min(engines_per_core_ * params_.dma.engine_bandwidth_gbps,
                  params_.dma.core_bandwidth_gbps);
}

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
  const auto compute = [this](const kernel::Instruction& dma, EngineSplit& split) {
    compute_split(dma, split);
  };
  if (!shortcuts_) {
    compute(instruction, uncached_split_);
    return uncached_split_;
  }
  return split_cache_.get(instruction, compute);
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
  Pending dma;
  dma.client = &client;
  dma.id = id;
  dma.pid = pid;
  dma.submitted = submitted;
  dma.first_data_ns = first_data;
  dma.done_ns = std::max(engines_done, core_caps_[pid].admit(first_data, split.bytes));
  if (reads_hbm) {
    dma.done_ns = std::max(dma.done_ns,
                           read_ports_[pid].admit(first_data, static_cast<double>(src_byte_count)));
    dma.read_stack = static_cast<std::int32_t>(layout_.of_operand(src.space, pid));
    dma.read_bytes = src_byte_count;
  }
  if (writes_hbm) {
    dma.done_ns = std::max(
        dma.done_ns, write_ports_[pid].admit(first_data, static_cast<double>(dst_byte_count)));
    dma.write_stack = static_cast<std::int32_t>(layout_.of_operand(dst.space, pid));
    dma.write_bytes = dst_byte_count;
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
    dma.tail_ns = hbm_tail_latency_ns(params_.hbm, reads_hbm, writes_hbm, last_packet_bytes,
                                      last_packet_bytes / split.rate);
  }

  dma.queue = instruction.dma_queue % static_cast<std::uint32_t>(stats.queues.size());
  QueueStats& queue = stats.queues[dma.queue];
  ++stats.transfers;
  stats.bytes += split.bytes;
  ++queue.transfers;
  queue.bytes += split.bytes;
  OnChipBytes& on_chip = on_chip_[pid];
  if (src.memory == MemoryKind::kSbuf) on_chip.sbuf_read += src_byte_count;
  if (src.memory == MemoryKind::kPsum) on_chip.psum_read += src_byte_count;
  if (dst.memory == MemoryKind::kSbuf) on_chip.sbuf_write += dst_byte_count;
  if (dst.memory == MemoryKind::kPsum) on_chip.psum_write += dst_byte_count;
  if (observed()) dma.event = core::dma_event_of(pid, id, instruction);

  const std::uint32_t group = layout_.home(pid);
  if (home_cores_[group] == 1) {
    complete(dma);  // no other core's DMAs pass its stack
    return;
  }
  // Another core's DMAs pass the same stack: those submitted at the same time pass it round
  // robin over the cores, whatever order the kernel ran the cores' processes in (settle()).
  std::vector<Pending>& batch = batches_[group];
  if (!batch.empty() && batch.front().submitted != submitted) settle(group);
  if (batch.empty()) {
    ++open_batches_;
    if (submitted < asked_for()) ask_for(submitted);
  }
  dma.rank = static_cast<std::uint32_t>(std::count_if(
      batch.begin(), batch.end(), [pid](const Pending& other) { return other.pid == pid; }));
  batch.push_back(std::move(dma));
}

void TransferLevelDma::complete(Pending& dma) {
  double done = dma.done_ns;
  std::int32_t stack_touched = -1;
  if (dma.read_stack >= 0) {
    const auto stack = static_cast<std::size_t>(dma.read_stack);
    done = std::max(done,
                    stacks_[stack].admit(dma.first_data_ns, static_cast<double>(dma.read_bytes)));
    stack_stats_[stack].read += dma.read_bytes;
    stack_touched = dma.read_stack;
  }
  if (dma.write_stack >= 0) {
    const auto stack = static_cast<std::size_t>(dma.write_stack);
    done = std::max(done,
                    stacks_[stack].admit(dma.first_data_ns, static_cast<double>(dma.write_bytes)));
    stack_stats_[stack].write += dma.write_bytes;
    stack_touched = stack_touched >= 0 && stack_touched != dma.write_stack ? -1 : dma.write_stack;
  }
  done += dma.tail_ns;
  CoreDmaStats& stats = core_stats_[dma.pid];
  double& queue_done = queue_done_ns_[dma.pid * stats.queues.size() + dma.queue];
  done = std::max(done, queue_done);
  queue_done = done;
  count_completion(stats, dma.queue, dma.first_data_ns, done, last_complete_ns_);
  if (observed()) {
    dma.event.hbm_stack = stack_touched;
    report_transfer(dma.event, sim_time::to_ns(dma.submitted), dma.first_data_ns, done);
  }
  dma.client->dma_complete(dma.id, sim_time::from_ns(done), done - dma.first_data_ns);
}

sc_core::sc_time TransferLevelDma::settles_at(std::uint32_t group) const {
  const std::vector<Pending>& batch = batches_[group];
  return batch.empty() ? sc_core::sc_max_time() : batch.front().submitted;
}

void TransferLevelDma::settle(std::uint32_t group) {
  std::vector<Pending>& batch = batches_[group];
  if (batch.empty()) return;
  --open_batches_;
  // Round robin over the cores, in core order: each core's first DMA of the batch, then each
  // core's second, and so on (one core's DMAs in the order it submitted them).
  std::sort(batch.begin(), batch.end(), [](const Pending& a, const Pending& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.pid < b.pid;
  });
  std::vector<Pending> settling;
  settling.swap(batch);  // what the completions make the cores submit opens a new batch
  request_settling();
  for (Pending& dma : settling) complete(dma);
}

void TransferLevelDma::time_step_ended() {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  for (std::uint32_t group = 0; group < batches_.size() && open_batches_ > 0; ++group) {
    if (settles_at(group) <= now) settle(group);
  }
  request_settling();
}

void TransferLevelDma::request_settling() {
  // The end of the earliest time step a batch waits for.
  sc_core::sc_time earliest = sc_core::sc_max_time();
  for (std::uint32_t group = 0; group < batches_.size() && open_batches_ > 0; ++group) {
    earliest = std::min(earliest, settles_at(group));
  }
  ask_for(earliest);
}

void TransferLevelDma::add_statistics(stats::Group& memory_system, double elapsed_ns) const {
  add_rate_model_statistics(memory_system, "transfer",
                            elapsed_ns > 0 ? elapsed_ns : last_complete_ns_,
                            core_peak_bytes_per_ns(), engines_per_core_, core_stats_, on_chip_,
                            stack_stats_, layout_, params_.hbm.stack_bandwidth_gbps);
}

}  // namespace trnsim::dma
