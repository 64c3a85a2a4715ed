#include "core/engines/data_path_engines.hpp"

#include <algorithm>

#include "core/engines/engine_run.hpp"
#include "util/sim_time.hpp"

namespace trnsim::core {

using kernel::Instruction;
using kernel::MemoryKind;
using sc_core::sc_time;

namespace {

/// Whether the instruction reads or writes `memory`: every operand it uses is one of its
/// dependency regions (the queued form keeps the operands, not the regions).
bool touches(const Instruction& instruction, MemoryKind memory) {
  for (const kernel::AccessPattern& operand : instruction.operands) {
    if (operand.used() && operand.memory == memory) return true;
  }
  return false;
}

}  // namespace

DataPathEngine::DataPathEngine(sc_core::sc_module_name name, NeuronCore& core, kernel::Engine kind,
                               SharedPort* sbuf_port, SharedPort* psum_port)
    : Engine(name, core, kind), sbuf_port_(sbuf_port), psum_port_(psum_port) {}

template <typename Self>
sc_time DataPathEngine::plan_data_path(Self& self, const QueuedInstruction& item,
                                       cost::CostContext context, sc_time start) {
  const Instruction& instruction = item.instruction;
  self.set_context(instruction, context);
  planned_sbuf_port_ = nullptr;
  planned_psum_port_ = nullptr;
  if (sbuf_port_ != nullptr && touches(instruction, MemoryKind::kSbuf)) {
    planned_sbuf_port_ = sbuf_port_;
  }
  if (psum_port_ != nullptr && touches(instruction, MemoryKind::kPsum)) {
    planned_psum_port_ = psum_port_;
  }
  const sc_time before_ports = start;
  if (planned_sbuf_port_ != nullptr) start = std::max(start, planned_sbuf_port_->free_at);
  if (planned_psum_port_ != nullptr) start = std::max(start, planned_psum_port_->free_at);
  if (start != before_ports) stats_.port_wait_ns += sim_time::to_ns(start - before_ports);
  cost_ = cost_of(instruction, context);
  return start;
}

Engine::Completion DataPathEngine::commit_compute(const QueuedInstruction& /*item*/,
                                                  const sc_time& start) {
  Completion completion;
  completion.end = start + sim_time::from_ns(cost_.ns);
  completion.visible = completion.end;
  if (planned_sbuf_port_ != nullptr) planned_sbuf_port_->free_at = completion.end;
  if (planned_psum_port_ != nullptr) planned_psum_port_->free_at = completion.end;
  completion.busy_ns = cost_.ns;
  completion.slice_start_ns = sim_time::to_ns(start);
  return completion;
}

sc_time VectorEngine::plan_compute(const QueuedInstruction& item, cost::CostContext context,
                                   sc_time start) {
  return plan_data_path(*this, item, context, start);
}

sc_time ScalarEngine::plan_compute(const QueuedInstruction& item, cost::CostContext context,
                                   sc_time start) {
  return plan_data_path(*this, item, context, start);
}

sc_time GpSimdEngine::plan_compute(const QueuedInstruction& item, cost::CostContext context,
                                   sc_time start) {
  return plan_data_path(*this, item, context, start);
}

void VectorEngine::run() {
  run_loop(*this);
}

void ScalarEngine::run() {
  run_loop(*this);
}

void GpSimdEngine::run() {
  run_loop(*this);
}

void ScalarEngine::set_context(const Instruction& instruction, cost::CostContext& context) {
  if (instruction.opcode != kernel::Opcode::kActivation) return;
  context.activation_table_switch = instruction.func != loaded_table_;
  loaded_table_ = instruction.func;
}

}  // namespace trnsim::core
