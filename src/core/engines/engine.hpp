// One engine of a NeuronCore (Tensor, Vector, Scalar, GpSimd, Sync) as a SystemC module: its
// sequencer runs the engine's instruction queue in order. For the front instruction it waits
// until every producer has times, computes when it can start (engine free, dependencies visible
// plus the semaphore latency when another engine produced them), sleeps once until then, and
// commits it: end and visible times, statistics, the observer; a DMA or collective it triggers
// goes to the core's DMA dispatcher. What differs between engines (when the engine is free, what
// an instruction costs, what state it leaves behind) is in the subclasses' hooks.
// Leaves out data values, and the program order and dependency tracking (the core's dispatcher).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <systemc>
#include <vector>

#include "config/params.hpp"
#include "core/barrier_hub.hpp"
#include "core/core_stats.hpp"
#include "core/cost/cost_model.hpp"
#include "core/queued_instruction.hpp"
#include "kernel/instruction.hpp"

namespace trnsim::core {

class NeuronCore;

class Engine : public sc_core::sc_module {
 public:
  /// A child of `core`, named by `name` (chip0.core0.tensor). Spawns the sequencer's SC_METHOD,
  /// statically sensitive to wake_event(); it runs once at the start and then whenever woken.
  Engine(sc_core::sc_module_name name, NeuronCore& core, kernel::Engine kind);

  kernel::Engine engine_kind() const { return kind_; }
  /// Index of the engine in kernel::Engine order (0..4).
  std::size_t unit() const { return static_cast<std::size_t>(kind_); }
  InstructionQueue& queue() { return *queue_; }

  /// Called by the dispatcher before `item` enters this engine's queue (the item's instruction
  /// is filled in): records what the engine needs to know at dispatch (TensorE: the PE
  /// placement) and returns the dependency tracker's in-order stream of the instruction
  /// (deps::DependencyTracker, "In-order streams"; deps::kUnorderedStream for a DMA or
  /// collective it triggers).
  virtual std::uint32_t prepare(QueuedInstruction& item);

  /// The sequencer's work: runs the queue until it must wait (SC_METHOD body; also run in place
  /// by the core: run_if_waiting(), NeuronCore::run_ahead()).
  void run();
  /// Runs the sequencer now if it waits for work or for a producer's times: a call, not a
  /// process switch.
  void run_if_waiting();
  /// The sequencer's event: its planned start and barrier releases.
  sc_core::sc_event& wake_event() { return wake_; }

 protected:
  /// When the engine can start `item` (dependencies aside), and the trace sub-track it runs on
  /// (`lane`, 0 unless the engine runs instructions concurrently). Default: when the previous
  /// instruction ended.
  virtual sc_core::sc_time available_at(const QueuedInstruction& item, std::uint32_t& lane);
  /// Plans a compute instruction (not a DMA/collective trigger or a barrier) that could start at
  /// `start` (>= the core's time): sets cost_ and returns the start, later if an engine resource
  /// (LoadStationary, a shared port) delays it. `context` has depends_on_recent set.
  virtual sc_core::sc_time plan_compute(const QueuedInstruction& item, cost::CostContext context,
                                        sc_core::sc_time start) = 0;
  /// What a compute instruction's commit produces.
  struct Completion {
    sc_core::sc_time end;       ///< engine done (same-engine dependants may start)
    sc_core::sc_time visible;   ///< result visible to other engines (before semaphore latency)
    double busy_ns = 0;         ///< engine busy time to add to its statistics
    double slice_start_ns = 0;  ///< start of the instruction's slice in traces
  };
  /// Commits the planned compute instruction at its start: updates the engine's state.
  virtual Completion commit_compute(const QueuedInstruction& item,
                                    const sc_core::sc_time& start) = 0;
  /// A DMA or collective trigger on this engine issued and occupies the engine until `end`.
  virtual void trigger_issued(const sc_core::sc_time& /*end*/) {}

  /// cost::engine_cost, memoised by content key (Instruction::content_key).
  cost::EngineCost cost_of(const kernel::Instruction& instruction,
                           const cost::CostContext& context);
  /// The core's current time.
  const sc_core::sc_time& now() const;
  /// When the engine could start the front instruction, dependencies aside (planned).
  const sc_core::sc_time& engine_available() const { return engine_available_; }

  NeuronCore& core_;
  const config::Params& params_;
  EngineStats& stats_;
  /// The planned compute instruction's cost (plan_compute() sets it).
  cost::EngineCost cost_;

 private:
  enum class Phase : std::uint8_t {
    kIdle,          ///< looking at the front instruction (if any) afresh
    kWaitingStart,  ///< planned; woken at its start
    kAtBarrier,     ///< a core_barrier waiting for the other cores
  };

  void process();
  /// Computes the front instruction's start and what its commit needs, at the core's time with
  /// its dependencies known (visible to this engine at `deps_ready`). Returns true when it
  /// starts now (and, a barrier, is released).
  bool plan_start(const sc_core::sc_time& deps_ready);
  /// The front instruction is a core_barrier: arrives at it. True if released now.
  bool arrive_at_barrier();
  /// At the front instruction's start: its end and visible times, statistics, observer, then
  /// it leaves the queue (a DMA or collective to the DMA dispatcher).
  void commit_start();

  const kernel::Engine kind_;
  std::unique_ptr<InstructionQueue> queue_;
  Phase phase_ = Phase::kIdle;
  /// Idle with an empty queue, or its front instruction waiting for a producer's times:
  /// run_if_waiting() runs it in place. Otherwise it waits for wake_ (its start, a barrier).
  bool waiting_ = false;
  /// The sequencer method is statically sensitive to it and never uses next_trigger(), so it
  /// can equally run from another process (run_if_waiting()).
  sc_core::sc_event wake_;
  sc_core::sc_time free_at_;  ///< the previous instruction's end
  std::uint64_t last_id_ = kNoId;
  // The front instruction's plan.
  sc_core::sc_time start_;
  sc_core::sc_time engine_available_;
  double wait_ns_ = 0;
  kernel::Engine waited_on_ = kernel::Engine::kSync;
  std::uint64_t waited_on_id_ = 0;
  std::uint32_t lane_ = 0;
  BarrierHub::Ticket barrier_;

  /// Recent costs by content key: an instruction recurring in a loop is costed once per
  /// context. Direct-mapped; key 0 (no promise) is never stored.
  struct CostMemo {
    std::uint64_t key = 0;
    std::uint8_t context = 0;
    cost::EngineCost cost;
  };
  static constexpr std::size_t kCostMemoEntries = 256;  // power of two
  std::vector<CostMemo> cost_memo_ = std::vector<CostMemo>(kCostMemoEntries);
};

}  // namespace trnsim::core
