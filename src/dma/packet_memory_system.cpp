#include "dma/packet_memory_system.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "address/address_map.hpp"
#include "util/log.hpp"
#include "util/sim_time.hpp"

namespace trnsim::dma {

using kernel::MemoryKind;

using sim_time::kNeverNs;

PacketMemorySystem::PacketMemorySystem(sc_core::sc_module_name name, const config::Params& params,
                                       std::uint32_t cores, const HbmTargetFactory& make_stack)
    : sc_core::sc_module(name),
      params_(params),
      cores_(std::max<std::uint32_t>(1, cores)),
      layout_(params, cores_),
      trace_(log::debug_enabled("dma")),
      engines_per_core_(static_cast<std::uint32_t>(std::max(1, params.dma.engines_per_core))),
      lookahead_ns_(std::max(0.0, params.dma.fixed_cost_ns)),
      engine_bytes_per_ns_(params.dma.engine_bandwidth_gbps),
      core_bytes_per_ns_(params.dma.core_bandwidth_gbps),
      interconnect_(std::make_unique<Interconnect>("fabric")),
      fabric_tolerance_ns_((engines_per_core_ - 1) *
                           static_cast<double>(std::max(1, params.dma.packet_bytes)) /
                           params.dma.core_bandwidth_gbps),
      fabric_tat_ns_(cores_, 0.0),
      port_bytes_per_ns_(params.dma.hbm_port_bandwidth_gbps),
      port_tolerance_ns_((engines_per_core_ - 1) *
                         static_cast<double>(std::max(1, params.dma.packet_bytes)) /
                         params.dma.hbm_port_bandwidth_gbps),
      hbm_read_tat_ns_(cores_, 0.0),
      hbm_write_tat_ns_(cores_, 0.0),
      core_stats_(cores_),
      generators_(params.dma, cores_) {
  sim_time::scale();  // before any conversion (util/sim_time.hpp)
  int port = 0;
  for (std::uint32_t s = 0; s < layout_.stacks(); ++s) {
    const std::string stack_name = "hbm" + std::to_string(s);
    HbmTargetSpec spec;
    spec.stack = s;
    spec.chip = s / layout_.stacks_per_chip();
    spec.peak_bandwidth_gbps = params.hbm.stack_bandwidth_gbps;
    spec.capacity_bytes = params.hbm.stack_capacity_bytes();
    spec.max_transaction_bytes = static_cast<std::uint32_t>(std::max(1, params.dma.packet_bytes));
    stacks_.push_back(make_stack(stack_name.c_str(), spec));
    if (!stacks_.back()) {
      throw std::logic_error("the HBM model's factory built no target for " + stack_name);
    }
    interconnect_->memory_socket.bind(stacks_.back()->target_socket());
    interconnect_->add_route(MemoryKind::kHbm, s, port++);
  }
  for (std::uint32_t pid = 0; pid < cores_; ++pid) {
    const std::string core = "core" + std::to_string(pid);
    sbufs_.push_back(std::make_unique<memory::OnChipMemory>((core + "_sbuf").c_str(),
                                                            params.dma.sbuf_bandwidth_gbps));
    interconnect_->memory_socket.bind(sbufs_.back()->socket);
    interconnect_->add_route(MemoryKind::kSbuf, pid, port++);
    psums_.push_back(std::make_unique<memory::OnChipMemory>((core + "_psum").c_str(),
                                                            params.dma.psum_bandwidth_gbps));
    interconnect_->memory_socket.bind(psums_.back()->socket);
    interconnect_->add_route(MemoryKind::kPsum, pid, port++);
    for (std::uint32_t e = 0; e < engines_per_core_; ++e) {
      const std::string engine = core + "_dma" + std::to_string(e);
      engines_.push_back(std::make_unique<DmaEngine>(engine.c_str(), pid, e, params.dma));
      engines_.back()->socket.bind(interconnect_->engine_socket);
    }
    core_stats_[pid].queues.resize(
        static_cast<std::size_t>(std::max(1, params.dma.queues_per_engine)));
  }
  SC_METHOD(wake);
  sensitive << wake_event_;
  dont_initialize();
}

PacketMemorySystem::~PacketMemorySystem() = default;

double PacketMemorySystem::core_peak_bytes_per_ns() const {
  return std::min(engines_per_core_ * engine_bytes_per_ns_, core_bytes_per_ns_);
}

std::uint64_t PacketMemorySystem::fabric_prefix(const kernel::AccessPattern& pattern,
                                                std::uint32_t pid) const {
  if (pattern.memory == MemoryKind::kHbm) {
    return address::encode(MemoryKind::kHbm, layout_.of_operand(pattern.space, pid), 0);
  }
  const std::uint32_t core = pattern.space < cores_ ? pattern.space : pid;
  return address::encode(pattern.memory, core, 0);
}

void PacketMemorySystem::submit(std::uint32_t pid, std::uint64_t id,
                                const kernel::Instruction& instruction, core::DmaClient& client) {
  const double now = sim_time::now_ns();
  pid = std::min(pid, cores_ - 1);
  const std::uint32_t slot = transfers_.acquire();
  Transfer& transfer = transfers_[slot];
  transfer.plan = plan_transfer(instruction, params_, fabric_prefix(instruction.src(), pid),
                                fabric_prefix(instruction.dst(), pid));
  transfer.client = &client;
  transfer.id = id;
  transfer.pid = pid;
  transfer.queue =
      instruction.dma_queue % static_cast<std::uint32_t>(core_stats_[pid].queues.size());
  transfer.pending = engines_per_core_;
  transfer.issue_ns = now;
  if (observed()) transfer.event = core::dma_event_of(pid, id, instruction);
  transfer.first_packet_ns = sim_time::kNeverNs;
  transfer.complete_ns = now;

  CoreDmaStats& stats = core_stats_[pid];
  ++stats.transfers;
  stats.bytes += transfer.plan.bytes;
  ++stats.queues[transfer.queue].transfers;
  stats.queues[transfer.queue].bytes += transfer.plan.bytes;

  EngineItem item;
  item.transfer = slot;
  item.fetchable_ns = generators_.generate(pid, instruction, now);
  item.ready_ns = item.fetchable_ns + params_.dma.fixed_cost_ns;
  item.max_done_ns = item.ready_ns;
  if (trace_) [[unlikely]] {
    const TransferPlan& plan = transfer.plan;
    std::uint64_t descriptors = 0;
    for (std::uint32_t e = 0; e < engines_per_core_; ++e) descriptors += plan.descriptors_of(e);
    trace_plan("packet", pid, id, plan.bytes, plan.engines, descriptors, now, item.ready_ns);
  }
  const std::uint32_t queue = transfer.queue;
  for (std::uint32_t e = 0; e < engines_per_core_; ++e) {
    const std::uint32_t engine_index = pid * engines_per_core_ + e;
    DmaEngine& engine = *engines_[engine_index];
    item.cursor = PacketCursor(transfers_[slot].plan, e);
    engine.enqueue(queue, item);
    complete_items(engine, engine.queues[queue]);  // an empty item at the head completes now
    if (engine.has_work()) {
      schedule(engine, engine_index,
               std::max({engine.next_eligible_ns(), engine.busy_until_ns, engine.stall_until_ns,
                         fabric_tat_ns_[pid] - fabric_tolerance_ns_}));
    }
  }
}

void PacketMemorySystem::schedule(DmaEngine& engine, std::uint32_t engine_index, double time_ns) {
  // Never before what is already final (transactions reach the targets in time order).
  time_ns = std::max(time_ns, processed_ns_);
  if (engine.scheduled && engine.scheduled_ns <= time_ns) return;
  engine.scheduled = true;
  engine.scheduled_ns = time_ns;
  Event event;
  event.engine = engine_index;
  event.item = ++engine.generation;  // an earlier pending event of this engine is now stale
  events_.push(time_ns, event);
  if (!advancing_) wake_event_.notify(sim_time::from_ns(time_ns - sim_time::now_ns()));
}

void PacketMemorySystem::wake() {
  const double now = sim_time::now_ns();
  advancing_ = true;
  advance(now + lookahead_ns_ + sim_time::ns_per_tick());
  advancing_ = false;
  if (!events_.empty()) wake_event_.notify(sim_time::from_ns(events_.top().time_ns - now));
}

void PacketMemorySystem::advance(double horizon_ns) {
  while (!events_.empty() && events_.top().time_ns <= horizon_ns) {
    const double time_ns = events_.top().time_ns;
    const Event event = events_.top().value;
    events_.pop();
    processed_ns_ = time_ns;
    if (event.write) {
      finish_packet(event, time_ns);
    } else if (event.item == engines_[event.engine]->generation) {
      issue_packet(event.engine, time_ns);
    }
  }
  processed_ns_ = std::max(processed_ns_, horizon_ns);
}

void PacketMemorySystem::issue_packet(std::uint32_t engine_index, double time_ns) {
  DmaEngine& engine = *engines_[engine_index];
  engine.scheduled = false;
  // The core's DMA cap as a rate with a burst allowance of one packet per engine: it delays
  // packets only when all engines together exceed it.
  double& fabric_tat = fabric_tat_ns_[engine.core];
  const double start = std::max(
      {time_ns, engine.busy_until_ns, engine.stall_until_ns, fabric_tat - fabric_tolerance_ns_});
  if (start > time_ns) {
    schedule(engine, engine_index, start);
    return;
  }
  double next_eligible = sim_time::kNeverNs;
  const int selected = engine.select_queue(time_ns, next_eligible);
  if (selected < 0) {
    if (next_eligible < sim_time::kNeverNs) schedule(engine, engine_index, next_eligible);
    return;
  }
  const auto queue_index = static_cast<std::uint32_t>(selected);
  DmaQueue& queue = engine.queues[queue_index];
  const std::uint32_t sequence = queue.issue;
  EngineItem& item = queue.items.at(sequence);
  Transfer& transfer = transfers_[item.transfer];
  // The core's HBM ports: a packet reading HBM waits for the read port's cap, one writing HBM
  // for the write port's (both rates with a burst allowance of one packet per engine).
  const bool reads_hbm = transfer.plan.src.memory == MemoryKind::kHbm;
  const bool writes_hbm = transfer.plan.dst.memory == MemoryKind::kHbm;
  double& read_tat = hbm_read_tat_ns_[engine.core];
  double& write_tat = hbm_write_tat_ns_[engine.core];
  const double port_ready = std::max(reads_hbm ? read_tat - port_tolerance_ns_ : time_ns,
                                     writes_hbm ? write_tat - port_tolerance_ns_ : time_ns);
  if (port_ready > time_ns) {
    schedule(engine, engine_index, port_ready);
    return;
  }
  CoreDmaStats& stats = core_stats_[engine.core];
  if (item.cursor.at_descriptor_start()) {
    engine.start_descriptor(item, time_ns);
    ++stats.descriptors;
  }
  const Packet packet = item.cursor.next(transfer.plan);
  const DmaEngine::Transport read =
      engine.transport(false, packet.src_address, packet.src_bytes, time_ns);
  const double occupancy = packet.moved_bytes / (engine_bytes_per_ns_ * transfer.plan.efficiency);
  const double read_done = std::max(read.done_ns, time_ns + occupancy);
  if (address::decode(packet.dst_address).memory == MemoryKind::kHbm) {
    // HBM schedules on arrival: write when the read completes, in global time order.
    Event write;
    write.address = packet.dst_address;
    write.engine = engine_index;
    write.item = sequence;
    write.bytes = packet.dst_bytes;
    write.queue = static_cast<std::uint16_t>(queue_index);
    write.write = true;
    events_.push(read_done, write);
    ++item.outstanding;
  } else {
    // On-chip ports tolerate arrivals out of time order: write now, at read_done.
    const DmaEngine::Transport written =
        engine.transport(true, packet.dst_address, packet.dst_bytes, read_done);
    item.max_done_ns = std::max(item.max_done_ns, written.done_ns);
  }
  transfer.first_packet_ns = std::min(transfer.first_packet_ns, time_ns);
  if (observed()) {
    // The packet's slice is the time it occupies its engine; its HBM read (and the write after
    // it) may complete later, while the engine moves the next packet.
    report_packet(transfer, engine, packet, time_ns, time_ns + occupancy, reads_hbm, writes_hbm);
  }
  fabric_tat = std::max(fabric_tat, time_ns) + packet.moved_bytes / core_bytes_per_ns_;
  if (reads_hbm) read_tat = std::max(read_tat, time_ns) + packet.src_bytes / port_bytes_per_ns_;
  if (writes_hbm) {
    write_tat = std::max(write_tat, time_ns) + packet.dst_bytes / port_bytes_per_ns_;
  }
  engine.busy_until_ns = time_ns + occupancy;
  engine.stall_until_ns = read.accept_ns;
  ++stats.packets;
  stats.engine_busy_ns += occupancy;
  engine.packet_issued(queue_index);
  if (item.cursor.done()) {
    engine.skip_issued(queue_index);
    complete_items(engine, queue);
  }
  if (engine.has_work()) {
    schedule(engine, engine_index,
             std::max({engine.busy_until_ns, engine.stall_until_ns,
                       fabric_tat - fabric_tolerance_ns_, engine.next_eligible_ns()}));
  }
}

void PacketMemorySystem::report_packet(Transfer& transfer, const DmaEngine& engine,
                                       const Packet& packet, double start_ns, double end_ns,
                                       bool reads_hbm, bool writes_hbm) {
  // The stack a packet touches: HBM addresses carry it in their space field.
  std::int32_t stack = -1;
  if (reads_hbm) stack = static_cast<std::int32_t>(address::decode(packet.src_address).space);
  if (writes_hbm) {
    const auto written = static_cast<std::int32_t>(address::decode(packet.dst_address).space);
    stack = stack >= 0 && stack != written ? -1 : written;
  }
  // The transfer's stack: the one all its packets touch, else -1.
  if (reads_hbm || writes_hbm) {
    transfer.event.hbm_stack =
        transfer.packets_reported == 0 || transfer.event.hbm_stack == stack ? stack : -1;
  }
  core::DmaEvent event = transfer.event;
  event.kind = core::DmaEvent::Kind::kPacket;
  event.dma_engine = static_cast<std::int32_t>(engine.index);
  event.hbm_stack = stack;
  event.packet = transfer.packets_reported++;
  event.bytes = packet.moved_bytes;
  event.hbm_read_bytes = reads_hbm ? packet.src_bytes : 0;
  event.hbm_write_bytes = writes_hbm ? packet.dst_bytes : 0;
  event.issue_ns = transfer.issue_ns;
  event.start_ns = start_ns;
  event.end_ns = end_ns;
  report(event);
}

void PacketMemorySystem::finish_packet(const Event& event, double time_ns) {
  DmaEngine& engine = *engines_[event.engine];
  const DmaEngine::Transport written = engine.transport(true, event.address, event.bytes, time_ns);
  DmaQueue& queue = engine.queues[event.queue];
  EngineItem& item = queue.items.at(event.item);
  item.max_done_ns = std::max(item.max_done_ns, written.done_ns);
  --item.outstanding;
  engine.stall_until_ns = std::max(engine.stall_until_ns, written.accept_ns);
  complete_items(engine, queue);
}

void PacketMemorySystem::complete_items(DmaEngine& engine, DmaQueue& queue) {
  (void)engine;
  while (queue.items.begin() != queue.issue) {
    const EngineItem& item = queue.items.at(queue.items.begin());
    if (item.outstanding > 0) break;
    const double done = std::max(item.max_done_ns, queue.last_done_ns);
    queue.last_done_ns = done;
    const std::uint32_t transfer = item.transfer;
    queue.items.pop_front();
    engine_done(transfer, done);
  }
}

void PacketMemorySystem::engine_done(std::uint32_t slot, double done_ns) {
  Transfer& transfer = transfers_[slot];
  transfer.complete_ns = std::max(transfer.complete_ns, done_ns);
  if (--transfer.pending > 0) return;

  const double complete = std::max(transfer.complete_ns, sim_time::now_ns());
  const double first =
      transfer.first_packet_ns < sim_time::kNeverNs ? transfer.first_packet_ns : complete;
  const double transfer_ns = complete - first;
  count_completion(core_stats_[transfer.pid], transfer.queue, first, complete, last_complete_ns_);
  report_transfer(transfer.event, transfer.issue_ns, first, complete);
  core::DmaClient* client = transfer.client;
  const std::uint64_t id = transfer.id;
  transfers_.release(slot);
  client->dma_complete(id, sim_time::from_ns(complete), transfer_ns);
}

void PacketMemorySystem::add_statistics(stats::Group& memory_system, double elapsed_ns) const {
  using stats::Unit;
  if (elapsed_ns <= 0) elapsed_ns = last_complete_ns_;
  const double peak = core_peak_bytes_per_ns();
  memory_system.add("model", "packet", Unit::kText);
  stats::Group& dma = memory_system.group("dma");
  dma.add("peak_bandwidth_per_core_gbps", peak, Unit::kGbps);
  std::deque<stats::Group>& cores = dma.list("cores");
  for (std::uint32_t pid = 0; pid < cores_; ++pid) {
    const CoreDmaStats& s = core_stats_[pid];
    if (s.transfers == 0) continue;
    const memory::OnChipStats& sbuf = sbufs_[pid]->stats();
    const memory::OnChipStats& psum = psums_[pid]->stats();
    const OnChipBytes on_chip{sbuf.read_bytes, sbuf.write_bytes, psum.read_bytes, psum.write_bytes};
    add_core_dma_statistics(cores.emplace_back("cores"), pid, s, on_chip, peak, engines_per_core_,
                            s.packets);
  }
  stats::Group& hbm = memory_system.group("hbm");
  hbm.add("elapsed_ns", elapsed_ns, Unit::kNs);
  std::deque<stats::Group>& stacks = hbm.list("stacks");
  for (std::uint32_t s = 0; s < stacks_.size(); ++s) {
    stats::Group stack("stacks");
    stacks_[s]->add_statistics(stack, elapsed_ns);
    if (stack.empty()) continue;
    stack.add("stack", s, Unit::kIndex);
    stack.add("cores", cores_served(layout_, cores_, s), Unit::kIndex);
    stacks.push_back(std::move(stack));
  }
}

}  // namespace trnsim::dma
