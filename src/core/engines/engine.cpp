#include "core/engines/engine.hpp"

#include <algorithm>

#include "core/cost/cost_models.hpp"
#include "core/deps/dependency_tracker.hpp"
#include "core/neuron_core.hpp"
#include "util/log.hpp"
#include "util/sim_time.hpp"

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
      fetch_latency_(sim_time::from_ns(core.params().sequencer.fetch_latency_ns)),
      fetch_interval_(sim_time::from_ns(1.0 / core.params().sequencer.fetch_instructions_per_ns)),
      fetch_buffer_size_(
          static_cast<std::size_t>(std::max(1, core.params().sequencer.fetch_buffer_instructions))),
      stream_(core.entry_pool()),
      slot_free_at_(fetch_buffer_size_),
      trace_(log::debug_enabled("core")),
      cost_model_(kernel::engine_info(kind).compute
                      ? &cost::selected_cost_model(kind, core.params())
                      : nullptr) {
  sc_core::sc_spawn_options sequencer;
  sequencer.spawn_method();
  sequencer.set_sensitivity(&wake_);
  sc_core::sc_spawn(sc_bind(&Engine::process, this), "sequencer", &sequencer);
}

const sc_time& Engine::now() const {
  return core_.now();
}

std::uint32_t Engine::prepare(QueuedInstruction& item) {
  // Entries are reused: whatever a TensorE instruction left in it is cleared (only TensorE reads
  // it, so prepare_dispatched() leaves it for the other engines).
  item.placement = PePlacement{};
  // DMAs and collectives complete out of order; an engine runs one instruction after the other.
  return default_stream(item.instruction.engine);
}

const cost::EngineCost& Engine::cost_uncached(const Instruction& instruction,
                                              const cost::CostContext& context) {
  uncached_cost_ = cost_with_model(instruction, context);
  return uncached_cost_;
}

void Engine::fill_cost_memo(CostMemo& memo, const Instruction& instruction,
                            const cost::CostContext& context, std::uint8_t bits) {
  memo.key = instruction.content_key;
  memo.context = bits;
  memo.cost = cost_with_model(instruction, context);
}

cost::EngineCost Engine::cost_with_model(const Instruction& instruction,
                                         const cost::CostContext& context) const {
  if (instruction.engine == kind_ && cost_model_ != nullptr) {
    return (*cost_model_)(instruction, params_, context);
  }
  if (!kernel::engine_info(instruction.engine).compute) {
    return cost::engine_cost(instruction, params_, context);  // throws: no compute op
  }
  return cost::selected_cost_model(instruction.engine, params_)(instruction, params_, context);
}

void Engine::process() {
  core_.enter();
  core_.kernel_wake_ran(unit());
  run();
  core_.leave(true);
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

void Engine::trace(const QueuedInstruction& item, double slice_start_ns, const sc_time& end,
                   const sc_time& visible) const {
  const kernel::Instruction& instruction = item.instruction;
  const std::string where = core_.source().location(instruction);
  const bool triggers = kernel::engine_info(instruction.engine).triggered;
  log::component("core").debug(
      "core {} {} #{} {}{}{}: start {:.3f} ns, end {:.3f} ns, {}, waited {:.3f} ns for {}",
      core_.pid(), kernel::engine_name(kind_), sequence_of(item.id),
      kernel::opcode_name(instruction.opcode), where.empty() ? "" : " at ", where, slice_start_ns,
      sim_time::to_ns(end),
      triggers ? std::string("triggered (core.dma: its completion)")
               : fmt::format("visible {:.3f} ns", sim_time::to_ns(visible)),
      wait_ns_, wait_ns_ > 0 ? kernel::engine_name(waited_on_) : "-");
}

void Engine::observe(const QueuedInstruction& item, double slice_start_ns, const sc_time& end,
                     const sc_time& visible) {
  InstructionTiming timing;
  timing.instruction = &item.instruction;
  timing.fetched_ns = sim_time::to_ns(item.fetched_at);
  timing.start_ns = slice_start_ns;
  timing.end_ns = sim_time::to_ns(end);
  timing.visible_ns = sim_time::to_ns(visible);
  timing.wait_ns = wait_ns_;
  timing.waited_on = waited_on_;
  timing.waited_on_sequence = sequence_of(waited_on_id_);
  timing.lane = lane_;
  core_.observer()(timing);
}

}  // namespace trnsim::core
