// The Sync engine of a NeuronCore: a sequencer without a data path. It issues DMA triggers,
// collectives and core_barriers, each for sequencer.issue_ns (the engine base class does all of
// that); it has no compute instruction to plan.
// Leaves out the sequencer's scalar-register instructions (not in the kernel format).
#pragma once

#include <stdexcept>
#include <systemc>

#include "core/engines/engine.hpp"

namespace trnsim::core {

class SyncEngine final : public Engine {
 public:
  SyncEngine(sc_core::sc_module_name name, NeuronCore& core)
      : Engine(name, core, kernel::Engine::kSync) {}
  void run() override;

 protected:
  friend class Engine;  // run_loop() calls the hooks, bound statically
  sc_core::sc_time plan_compute(const QueuedInstruction& /*item*/, cost::CostContext /*context*/,
                                sc_core::sc_time /*start*/) override {
    throw std::logic_error("SyncEngine: the Sync engine has no data path");
  }
  Completion commit_compute(const QueuedInstruction& /*item*/,
                            const sc_core::sc_time& /*start*/) override {
    throw std::logic_error("SyncEngine: the Sync engine has no data path");
  }
};

}  // namespace trnsim::core
