// The Vector, Scalar and GpSimd engines of a NeuronCore: one instruction at a time, each busy
// for its cost (cost::vector_cost, scalar_cost, gpsimd_cost; docs/cost-models.md) from the
// previous one's end or its dependencies, whichever is later, plus the dependent-instruction
// overhead when it waits on its predecessor. On NC-v2 they share memory ports (SharedPort:
// VectorE/GpSimdE on SBUF, VectorE/ScalarE on PSUM). ScalarE keeps the loaded activation table
// and pays scalar.table_switch_cycles when an activation needs another one.
// Leaves out the engines' data paths beyond their cost (lanes, pipelines) and data values.
#pragma once

#include <systemc>

#include "core/engines/engine.hpp"
#include "core/engines/shared_port.hpp"

namespace trnsim::core {

/// An engine with a data path that may share SBUF and PSUM ports with another engine.
class DataPathEngine : public Engine {
 public:
  /// `sbuf_port`/`psum_port`: the shared port this engine uses for SBUF/PSUM accesses, or null
  /// when its port is its own (both outlive the engine).
  DataPathEngine(sc_core::sc_module_name name, NeuronCore& core, kernel::Engine kind,
                 SharedPort* sbuf_port, SharedPort* psum_port);

 protected:
  /// plan_compute() of the final engine class `Self` (each implements it with this), which
  /// calls Self's set_context(), bound statically.
  template <typename Self>
  sc_core::sc_time plan_data_path(Self& self, const QueuedInstruction& item,
                                  cost::CostContext context, sc_core::sc_time start);
  Completion commit_compute(const QueuedInstruction& item, const sc_core::sc_time& start) override;
  /// Sets what the engine knows about the instruction beyond its dependencies (ScalarE: the
  /// activation table). Default: nothing; an engine class with more to say hides it.
  void set_context(const kernel::Instruction& /*instruction*/, cost::CostContext& /*context*/) {}

 private:
  SharedPort* const sbuf_port_;
  SharedPort* const psum_port_;
  /// The ports the planned instruction holds (null: none).
  SharedPort* planned_sbuf_port_ = nullptr;
  SharedPort* planned_psum_port_ = nullptr;
};

class VectorEngine final : public DataPathEngine {
 public:
  VectorEngine(sc_core::sc_module_name name, NeuronCore& core, SharedPort* sbuf_port,
               SharedPort* psum_port)
      : DataPathEngine(name, core, kernel::Engine::kVector, sbuf_port, psum_port) {}
  void run() override;

 protected:
  friend class Engine;  // run_loop() calls the hooks, bound statically
  sc_core::sc_time plan_compute(const QueuedInstruction& item, cost::CostContext context,
                                sc_core::sc_time start) override;
};

class ScalarEngine final : public DataPathEngine {
 public:
  ScalarEngine(sc_core::sc_module_name name, NeuronCore& core, SharedPort* psum_port)
      : DataPathEngine(name, core, kernel::Engine::kScalar, nullptr, psum_port) {}
  void run() override;

 protected:
  friend class Engine;          // run_loop() calls the hooks, bound statically
  friend class DataPathEngine;  // plan_data_path() calls set_context()
  sc_core::sc_time plan_compute(const QueuedInstruction& item, cost::CostContext context,
                                sc_core::sc_time start) override;
  void set_context(const kernel::Instruction& instruction, cost::CostContext& context);

 private:
  kernel::ActivationFunc loaded_table_ = kernel::ActivationFunc::kCopy;
};

class GpSimdEngine final : public DataPathEngine {
 public:
  GpSimdEngine(sc_core::sc_module_name name, NeuronCore& core, SharedPort* sbuf_port)
      : DataPathEngine(name, core, kernel::Engine::kGpSimd, sbuf_port, nullptr) {}
  void run() override;

 protected:
  friend class Engine;  // run_loop() calls the hooks, bound statically
  sc_core::sc_time plan_compute(const QueuedInstruction& item, cost::CostContext context,
                                sc_core::sc_time start) override;
};

}  // namespace trnsim::core
