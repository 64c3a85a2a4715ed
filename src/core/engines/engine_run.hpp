// The sequencer loop of core::Engine (run_loop, plan_start, commit_start) as templates over the
// final engine class: the file that defines an engine's hooks includes this and implements
// run() as run_loop(*this), so the hooks are bound statically and inlined where they are small
// (no virtual call per instruction). What the loop does is described in engine.hpp.
// Leaves out nothing of Engine's behaviour: every engine runs this same loop.
#pragma once

#include <algorithm>

#include "core/engines/engine.hpp"
#include "core/neuron_core.hpp"
#include "util/sim_time.hpp"

namespace trnsim::core {

template <typename Self>
void Engine::run_loop(Self& self) {
  for (;;) {
    if (phase_ == Phase::kAtBarrier) {
      if (!BarrierHub::released(barrier_)) return;
    } else if (phase_ == Phase::kWaitingStart) {
      if (!arrive_at_barrier()) return;
    } else {
      if (stream_.empty()) {
        if (core_.dispatch_done()) {
          core_.engine_finished();
          return;  // never woken again
        }
        waiting_ = true;  // the dispatcher runs it
        return;
      }
      const QueuedInstruction& item = stream_.front();
      const kernel::Instruction& instruction = item.instruction;
      // A DMA trigger does not wait for the DMA's data: the DMA waits for its own dependencies
      // (DmaDispatcher) while the trigger engine goes on with its next instruction.
      const bool is_dma = kernel::engine_info(instruction.engine).triggered;
      sc_core::sc_time deps_ready = sc_core::SC_ZERO_TIME;
      waited_on_ = kernel::Engine::kSync;
      waited_on_id_ = 0;
      std::uint64_t unscheduled = kNoId;
      if (!is_dma && !core_.dependencies_known(item, kind_, deps_ready, waited_on_, waited_on_id_,
                                               unscheduled)) {
        // Wait for the first producer that has no time yet, then look again.
        core_.run_engine_when_scheduled(unscheduled, unit());
        waiting_ = true;
        return;
      }
      if (!plan_start(self, deps_ready)) return;  // waiting for the start, or at a barrier
    }
    commit_start(self);
    phase_ = Phase::kIdle;
  }
}

template <typename Self>
bool Engine::plan_start(Self& self, const sc_core::sc_time& deps_ready) {
  const QueuedInstruction& item = stream_.front();
  const kernel::Instruction& instruction = item.instruction;
  const sc_core::sc_time now = core_.now();
  // When the engine could start it, dependencies aside.
  engine_available_ = self.available_at(item, lane_);
  // Dependency waits count from when the engine could otherwise have started.
  const sc_core::sc_time earliest = std::max(engine_available_, item.fetched_at);
  sc_core::sc_time start = std::max({earliest, deps_ready, now});
  wait_ns_ = deps_ready > earliest ? sim_time::to_ns(deps_ready - earliest) : 0.0;
  // DMA and collective triggers and barriers have nothing but their start to plan (a barrier is
  // arrived at at its start, arrive_at_barrier()).
  const bool computes = instruction.engine != kernel::Engine::kDma &&
                        instruction.engine != kernel::Engine::kCollective &&
                        instruction.opcode != kernel::Opcode::kCoreBarrier;
  if (computes) {
    cost::CostContext context;
    const std::uint64_t previous_on_engine = last_id_;
    context.depends_on_recent = item.any_dependency(
        [&](std::uint64_t dependency) { return dependency == previous_on_engine; });
    start = self.plan_compute(item, context, start);
  }
  start_ = start;
  if (start > now) {
    phase_ = Phase::kWaitingStart;
    core_.wake(unit(), start);
    return false;
  }
  return arrive_at_barrier();
}

template <typename Self>
void Engine::commit_start(Self& self) {
  QueuedInstruction& item = stream_.front();
  const kernel::Instruction& instruction = item.instruction;
  const sc_core::sc_time start = start_;

  // Before the commit changes the engine's state.
  const double idle_ns = wait_ns_ > 0 ? self.idle_wait_ns(item) : 0.0;
  double busy_ns = 0;
  double slice_start_ns = 0;
  sc_core::sc_time end;
  sc_core::sc_time visible;

  bool completes_later = false;
  if (kernel::engine_info(instruction.engine).triggered) {
    end = start + core_.issue_time();
    busy_ns = self.trigger_issued(start, end);
    core_.dma_dispatcher().count_trigger(instruction, unit(), item.id, end);
    slice_start_ns = sim_time::to_ns(start);
    completes_later = true;
  } else if (instruction.opcode == kernel::Opcode::kCoreBarrier) {
    // Released now (every core of the group arrived), or no barrier hub: at the start.
    end = core_.barrier_hub() != nullptr ? core_.now() : start;
    end = std::max(end, start + core_.issue_time());
    visible = end;
    busy_ns = sim_time::to_ns(end - start);
    slice_start_ns = sim_time::to_ns(start);
  } else {
    const Completion completion = self.commit_compute(item, start);
    end = completion.end;
    visible = completion.visible;
    busy_ns = completion.busy_ns;
    slice_start_ns = completion.slice_start_ns;
  }

  ++stats_.instructions;
  ++stats_.op_counts[static_cast<std::size_t>(instruction.opcode)];
  stats_.active_ns += busy_ns;
  if (idle_ns > 0) stats_.wait_ns_by_producer[static_cast<std::size_t>(waited_on_)] += idle_ns;
  free_at_ = end;
  last_id_ = item.id;

  if (trace_) [[unlikely]] {
    trace(item, slice_start_ns, end, visible);
  }
  // Compute instructions' values now; DMAs and collectives' when submitted (DmaDispatcher).
  if (!completes_later && core_.execute_hook()) core_.execute_hook()(instruction, {});
  if (core_.observer()) observe(item, slice_start_ns, end, visible);
  if (completes_later) {
    core_.dma_dispatcher().take_triggered(stream_, end);
  } else {
    core_.finish(core_.slot(item.id), kind_, end, visible);
  }
  stream_.pop_front();
  // Its fetch-buffer slot is free from its start: the next instruction of the stream is fetched
  // into it if the dispatcher has walked past it (else when it does: accept()).
  slot_free_at_[start_slot_] = start;
  if (++start_slot_ == fetch_buffer_size_) start_slot_ = 0;
  if (stream_.size() >= fetch_buffer_size_) {
    fetch(fetch_buffer_size_ - 1);
  } else if (used_) {
    core_.instructions_wanted();
  }
}

}  // namespace trnsim::core
