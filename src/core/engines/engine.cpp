#include "core/engines/engine.hpp"

#include <algorithm>

#include "core/core_time.hpp"
#include "core/deps/dependency_tracker.hpp"
#include "core/neuron_core.hpp"

namespace trnsim::core {

using kernel::Instruction;
using kernel::MemoryKind;
using kernel::Opcode;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

Engine::Engine(sc_core::sc_module_name name, NeuronCore& core, kernel::Engine kind)
    : sc_module(name),
      core_(core),
      params_(core.params()),
      stats_(core.mutable_stats().engines[static_cast<std::size_t>(kind)]),
      kind_(kind),
      fetch_latency_(ns(core.params().sequencer.fetch_latency_ns)),
      fetch_interval_(ns(1.0 / core.params().sequencer.fetch_instructions_per_ns)),
      fetch_buffer_size_(
          static_cast<std::size_t>(std::max(1, core.params().sequencer.fetch_buffer_instructions))),
      slot_free_at_(fetch_buffer_size_) {
  sc_core::sc_spawn_options sequencer;
  sequencer.spawn_method();
  sequencer.set_sensitivity(&wake_);
  sc_core::sc_spawn(sc_bind(&Engine::process, this), "sequencer", &sequencer);
}

const sc_time& Engine::now() const {
  return core_.now();
}

std::uint32_t Engine::prepare(QueuedInstruction& item) {
  // Entries are reused: whatever a TensorE instruction left in it is cleared.
  item.placement = PePlacement{};
  // DMAs and collectives complete out of order; an engine runs one instruction after the other.
  const kernel::Engine engine = item.instruction.engine;
  if (engine == kernel::Engine::kDma || engine == kernel::Engine::kCollective) {
    return deps::kUnorderedStream;
  }
  return static_cast<std::uint32_t>(unit());
}

sc_time Engine::available_at(const QueuedInstruction& /*item*/, std::uint32_t& lane) {
  lane = 0;
  return free_at_;
}

cost::EngineCost Engine::cost_of(const Instruction& instruction, const cost::CostContext& context) {
  if (instruction.content_key == 0) return cost::engine_cost(instruction, params_, context);
  // The memo key packs every field of the context; a new field must be packed too.
  static_assert(sizeof(cost::CostContext) == 3, "cost_of: pack the new CostContext field");
  const auto bits = static_cast<std::uint8_t>((context.depends_on_recent ? 1 : 0) |
                                              (context.stationary_reused ? 2 : 0) |
                                              (context.activation_table_switch ? 4 : 0));
  CostMemo& memo = cost_memo_[(instruction.content_key * 8 + bits) & (kCostMemoEntries - 1)];
  if (memo.key != instruction.content_key || memo.context != bits) {
    memo.key = instruction.content_key;
    memo.context = bits;
    memo.cost = cost::engine_cost(instruction, params_, context);
  }
  return memo.cost;
}

double Engine::trigger_issued(const sc_time& start, const sc_time& end) {
  return to_ns(end - start);
}

void Engine::process() {
  core_.enter();
  core_.kernel_wake_ran(unit());
  run();
  core_.leave(true);
}

void Engine::run() {
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
      const Instruction& instruction = item.instruction;
      // A DMA trigger does not wait for the DMA's data: the DMA waits for its own dependencies
      // (DmaDispatcher) while the trigger engine goes on with its next instruction.
      const bool is_dma = instruction.engine == kernel::Engine::kDma ||
                          instruction.engine == kernel::Engine::kCollective;
      sc_time deps_ready = SC_ZERO_TIME;
      waited_on_ = kernel::Engine::kSync;
      waited_on_id_ = 0;
      if (!is_dma &&
          !core_.dependencies_known(item, kind_, deps_ready, waited_on_, waited_on_id_)) {
        // Wait for the first producer that has no time yet, then look again.
        core_.run_engine_when_scheduled(*core_.unscheduled_producer(item), unit());
        waiting_ = true;
        return;
      }
      if (!plan_start(deps_ready)) return;  // waiting for the start, or at a barrier
    }
    commit_start();
    phase_ = Phase::kIdle;
  }
}

bool Engine::plan_start(const sc_time& deps_ready) {
  const QueuedInstruction& item = stream_.front();
  const Instruction& instruction = item.instruction;
  const sc_time now = core_.now();
  // When the engine could start it, dependencies aside.
  engine_available_ = available_at(item, lane_);
  // Dependency waits count from when the engine could otherwise have started.
  const sc_time earliest = std::max(engine_available_, item.fetched_at);
  sc_time start = std::max({earliest, deps_ready, now});
  wait_ns_ = deps_ready > earliest ? to_ns(deps_ready - earliest) : 0.0;
  // DMA and collective triggers and barriers have nothing but their start to plan (a barrier is
  // arrived at at its start, arrive_at_barrier()).
  const bool computes = instruction.engine != kernel::Engine::kDma &&
                        instruction.engine != kernel::Engine::kCollective &&
                        instruction.opcode != Opcode::kCoreBarrier;
  if (computes) {
    cost::CostContext context;
    const std::uint64_t previous_on_engine = last_id_;
    context.depends_on_recent = item.any_dependency(
        [&](std::uint64_t dependency) { return dependency == previous_on_engine; });
    start = plan_compute(item, context, start);
  }
  start_ = start;
  if (start > now) {
    phase_ = Phase::kWaitingStart;
    core_.wake(unit(), start);
    return false;
  }
  return arrive_at_barrier();
}

bool Engine::arrive_at_core_barrier() {
  const Instruction& instruction = stream_.front().instruction;
  BarrierHub* hub = core_.barrier_hub();
  if (hub == nullptr) return true;
  std::span<const std::uint32_t> group;
  if (instruction.core_group != kernel::kAllCores) {
    group = core_.source().core_group(instruction.core_group);
  }
  if (hub->arrive(group, barrier_, wake_)) return true;
  phase_ = Phase::kAtBarrier;
  return false;
}

void Engine::commit_start() {
  QueuedInstruction& item = stream_.front();
  const Instruction& instruction = item.instruction;
  InFlight& record = core_.slot(item.id);
  const sc_time start = start_;

  // Before the commit changes the engine's state.
  const double idle_ns = wait_ns_ > 0 ? idle_wait_ns(item) : 0.0;
  double busy_ns = 0;
  double slice_start_ns = 0;
  sc_time end;
  sc_time visible;

  bool completes_later = false;
  if (instruction.engine == kernel::Engine::kDma ||
      instruction.engine == kernel::Engine::kCollective) {
    end = start + core_.issue_time();
    busy_ns = trigger_issued(start, end);
    core_.dma_dispatcher().count_trigger(instruction, unit(), item.id, end);
    slice_start_ns = to_ns(start);
    completes_later = true;
  } else if (instruction.opcode == Opcode::kCoreBarrier) {
    // Released now (every core of the group arrived), or no barrier hub: at the start.
    end = core_.barrier_hub() != nullptr ? core_.now() : start;
    end = std::max(end, start + core_.issue_time());
    visible = end;
    busy_ns = to_ns(end - start);
    slice_start_ns = to_ns(start);
  } else {
    const Completion completion = commit_compute(item, start);
    end = completion.end;
    visible = completion.visible;
    busy_ns = completion.busy_ns;
    slice_start_ns = completion.slice_start_ns;
  }

  ++stats_.instructions;
  ++stats_.op_counts[static_cast<std::size_t>(instruction.opcode)];
  stats_.active_ns += busy_ns;
  if (idle_ns > 0) stats_.wait_ns_by_producer[static_cast<std::size_t>(waited_on_)] += idle_ns;
  ++core_.mutable_stats().instructions;
  free_at_ = end;
  last_id_ = item.id;

  if (const InstructionObserver& observer = core_.observer()) {
    InstructionTiming timing;
    timing.instruction = &instruction;
    timing.fetched_ns = to_ns(item.fetched_at);
    timing.start_ns = slice_start_ns;
    timing.end_ns = to_ns(end);
    timing.visible_ns = to_ns(visible);
    timing.wait_ns = wait_ns_;
    timing.waited_on = waited_on_;
    timing.waited_on_sequence = sequence_of(waited_on_id_);
    timing.lane = lane_;
    observer(timing);
  }
  if (completes_later) {
    core_.dma_dispatcher().take_triggered(stream_, end);
  } else {
    core_.finish(record, kind_, end, visible);
  }
  stream_.pop_front();
  // Its fetch-buffer slot is free from its start: the next instruction of the stream is fetched
  // into it if the dispatcher has walked past it (else when it does: accept()).
  slot_free_at_[start_slot_] = start;
  if (++start_slot_ == fetch_buffer_size_) start_slot_ = 0;
  if (stream_.size() >= fetch_buffer_size_) {
    fetch(stream_.at(fetch_buffer_size_ - 1));
  } else if (used_) {
    core_.instructions_wanted();
  }
}

}  // namespace trnsim::core
