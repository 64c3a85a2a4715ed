#include "core/dma_dispatcher.hpp"

#include <algorithm>
#include <string>

#include "core/neuron_core.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/sim_time.hpp"

namespace trnsim::core {

using EngineKind = kernel::Engine;
using kernel::Instruction;
using kernel::MemoryKind;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

DmaDispatcher::DmaDispatcher(sc_core::sc_module_name name, NeuronCore& core, DmaBackend& dma,
                             CollectiveBackend* collectives)
    : sc_module(name),
      core_(core),
      dma_(dma),
      collectives_(collectives),
      dma_stats_(core.mutable_stats().engines[static_cast<std::size_t>(EngineKind::kDma)]),
      collective_stats_(
          core.mutable_stats().engines[static_cast<std::size_t>(EngineKind::kCollective)]),
      dma_time_(dma_stats_, sim_time::scale().ticks_per_ns),
      collective_time_(collective_stats_, sim_time::scale().ticks_per_ns),
      trace_(log::debug_enabled("core.dma")) {
  sc_core::sc_spawn_options method;
  method.spawn_method();
  sc_core::sc_spawn(sc_bind(&DmaDispatcher::process, this), "dispatcher", &method);
}

void DmaDispatcher::count_transfer(const Instruction& instruction) {
  CoreStats& stats = core_.mutable_stats();
  ++stats.dma_transfers;
  const kernel::AccessPattern& src = instruction.src();
  const kernel::AccessPattern& dst = instruction.dst();
  const std::uint64_t src_bytes = src.bytes();
  const std::uint64_t dst_bytes = dst.bytes();
  stats.dma_bytes += std::max(src_bytes, dst_bytes);
  if (src.memory == MemoryKind::kHbm) stats.hbm_read_bytes += src_bytes;
  if (dst.memory == MemoryKind::kHbm) stats.hbm_write_bytes += dst_bytes;
}

void DmaDispatcher::take_triggered(InstructionRing& queue, const sc_time& issued) {
  const std::uint32_t index = pending_.acquire();
  pending_[index].item = queue.take_front();  // the front instruction now waits here, packed
  pending_[index].issued = issued;
  consider(index);
}

void DmaDispatcher::unblock(InFlight& record) {
  // Taken out first: considering a DMA may block it on another producer, which relinks it.
  std::uint32_t blocked = record.blocked_first;
  record.blocked_first = kNoSlot;
  record.blocked_last = kNoSlot;
  while (blocked != kNoSlot) {
    const std::uint32_t next = pending_[blocked].next_blocked;
    consider(blocked);
    blocked = next;
  }
}

void DmaDispatcher::consider(std::uint32_t index) {
  PendingDma& pending = pending_[index];
  sc_time ready;
  EngineKind last_engine = EngineKind::kSync;
  std::uint64_t last_id = 0;
  std::uint64_t unscheduled = kNoId;
  if (!core_.dependencies_known(pending.item, EngineKind::kDma, ready, last_engine, last_id,
                                unscheduled)) {
    // Blocked on the first producer without times.
    InFlight& blocking = core_.slot(unscheduled);
    pending.next_blocked = kNoSlot;
    if (blocking.blocked_first == kNoSlot) {
      blocking.blocked_first = index;
    } else {
      pending_[blocking.blocked_last].next_blocked = index;
    }
    blocking.blocked_last = index;
    return;
  }
  ConcurrentUnitTime& unit_time =
      pending.item.engine() == EngineKind::kDma ? dma_time_ : collective_time_;
  unit_time.waited(pending.issued.value(), ready.value(), last_engine, core_.now().value());
  ready = std::max(ready, pending.issued);
  ready_.push({ready, pending.item.id(), index});
  // The dispatcher sleeps until the earliest ready DMA it knew of: wake it only for an earlier
  // one.
  if (ready < wakes_at_) {
    if (core_.runs_ahead()) {
      // It would only set its timer to `ready` (now if that has passed): set the timer.
      wakes_at_ = std::max(ready, core_.now());
      core_.wake_later(NeuronCore::kDmaDispatcherWake, wakes_at_);
    } else {
      wakes_at_ = SC_ZERO_TIME;
      work_.notify();
    }
  }
}

void DmaDispatcher::process() {
  core_.enter();
  core_.kernel_wake_ran(NeuronCore::kDmaDispatcherWake);
  core_.forget_wake(NeuronCore::kDmaDispatcherWake);  // it looks afresh
  // Running: DMAs considered meanwhile are seen below without a notification.
  wakes_at_ = SC_ZERO_TIME;
  const sc_time next = start_ready();
  wakes_at_ = next;
  if (next == max_time_ || core_.has_error()) {
    sc_core::next_trigger(work_);
  } else if (core_.runs_ahead()) {
    core_.wake_later(NeuronCore::kDmaDispatcherWake, next);  // the core runs it or notifies work_
    sc_core::next_trigger(work_);
  } else {
    sc_core::next_trigger(next - core_.now(), work_);
    core_.count_wake_through_kernel();
  }
  core_.leave(true);
}

bool DmaDispatcher::run_ahead_step() {
  work_.cancel();  // a wake-up notified before is superseded: it sets its next one here
  wakes_at_ = SC_ZERO_TIME;
  const sc_time ready = start_ready();
  wakes_at_ = ready;
  if (ready == max_time_ || core_.has_error()) return false;
  core_.wake_later(NeuronCore::kDmaDispatcherWake, ready);
  return ready == core_.now();  // the next one needs the simulation time to be now
}

sc_time DmaDispatcher::start_ready() {
  const sc_time now = core_.now();
  const bool ahead = now != sc_core::sc_time_stamp();
  for (;;) {
    if (ready_.empty()) return max_time_;
    const ReadyDma first = ready_.top();
    if (first.ready > now) return first.ready;
    const std::uint32_t index = first.slot;
    PendingDma& dma = pending_[index];
    // Ahead of the simulation time only a backend that takes the time as an argument can start
    // it; otherwise the process runs at this time (NeuronCore::run_ahead()).
    if (ahead && (dma.item.engine() != EngineKind::kDma || !dma_.accepts_submit_ahead())) {
      return now;
    }
    ready_.pop();
    dma.item.unpack(submitting_);
    core_.entry_pool().give(std::move(dma.item));
    pending_.release(index);
    const Instruction& instruction = submitting_.instruction;
    // The record is finished by dma_complete()/collective_complete(), possibly from inside
    // submit().
    const std::uint64_t sequence = sequence_of(submitting_.id);
    if (trace_) [[unlikely]] {
      log::component("core.dma")
          .debug("core {} #{} {} submitted at {:.3f} ns (queue {}, {} B)", core_.pid(), sequence,
                 kernel::opcode_name(instruction.opcode), sim_time::to_ns(now),
                 instruction.dma_queue,
                 std::max(instruction.src().bytes(), instruction.dst().bytes()));
    }
    if (core_.execute_hook()) {
      std::span<const std::uint32_t> group;
      if (instruction.engine == EngineKind::kCollective &&
          instruction.core_group != kernel::kAllCores) {
        group = core_.source().core_group(instruction.core_group);
      }
      core_.execute_hook()(instruction, group);
    }
    if (instruction.engine == EngineKind::kDma) {
      submitted_.insert(sequence, slot_of(submitting_.id));
      if (ahead) {
        dma_.submit_ahead(now, core_.pid(), sequence, instruction, *this);
      } else {
        dma_.submit(core_.pid(), sequence, instruction, *this);
      }
    } else if (collectives_ != nullptr) {
      std::span<const std::uint32_t> group;
      if (instruction.core_group != kernel::kAllCores) {
        group = core_.source().core_group(instruction.core_group);
      }
      submitted_.insert(sequence, slot_of(submitting_.id));
      collectives_->submit(core_.pid(), sequence, instruction, group, *this);
    } else {
      core_.fail(std::make_exception_ptr(InputError(
          core_.source().location(instruction),
          std::string(kernel::opcode_name(instruction.opcode)) +
              ": collectives and send/recv need a system with collective-communication cores; "
              "this build does not model them yet")));
      return max_time_;
    }
  }
}

InFlight& DmaDispatcher::record_of_submitted(std::uint64_t sequence) {
  return core_.slot(in_flight_id(sequence, submitted_.take(sequence)));
}

void DmaDispatcher::dma_complete(std::uint64_t id, const sc_time& complete, double transfer_ns) {
  // Possibly from another module's process, which goes on after the call: no running ahead.
  core_.enter();
  InFlight& record = record_of_submitted(id);
  // The DMA is busy while its data moves.
  const sc_time begin = complete - std::min(complete, sim_time::from_ns(transfer_ns));
  if (trace_) [[unlikely]] {
    log::component("core.dma")
        .debug("core {} #{} DMA moved data from {:.3f} ns, complete at {:.3f} ns", core_.pid(), id,
               sim_time::to_ns(begin), sim_time::to_ns(complete));
  }
  dma_time_.completed(record.id, begin.value(), complete.value(), core_.now().value());
  core_.finish(record, EngineKind::kDma, complete, complete);
  core_.leave(false);
}

void DmaDispatcher::collective_complete(std::uint64_t id, const sc_time& complete) {
  core_.enter();  // as dma_complete()
  InFlight& record = record_of_submitted(id);
  // Busy from the report (CollectiveSystem reports at its last step) to completion.
  const sc_time now = core_.now();
  if (trace_) [[unlikely]] {
    log::component("core.dma")
        .debug("core {} #{} collective complete at {:.3f} ns", core_.pid(), id,
               sim_time::to_ns(complete));
  }
  collective_time_.completed(record.id, std::min(now, complete).value(), complete.value(),
                             now.value());
  core_.finish(record, EngineKind::kCollective, complete, complete);
  core_.leave(false);
}

}  // namespace trnsim::core
