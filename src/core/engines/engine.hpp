// One engine of a NeuronCore (Tensor, Vector, Scalar, GpSimd, Sync) as a SystemC module. It
// walks its own instruction stream: the instructions the core's dispatcher handed to it wait in
// its stream backlog (the engine's instruction stream in DRAM) until its fetch unit brings them
// into the fetch buffer (sequencer.fetch_buffer_instructions deep; each fetch takes
// fetch_latency_ns, at most fetch_instructions_per_ns of them per ns; a slot is refetched when
// its instruction starts). Its sequencer runs the buffer in order. For the front instruction it
// waits until every producer has times, computes when it can start (fetched, engine free,
// dependencies visible plus the semaphore latency when another engine produced them), sleeps
// once until then, and commits it: end and visible times, statistics, the observer; a DMA or
// collective it triggers goes to the core's DMA dispatcher. It never waits for another engine's
// stream. What differs between engines (when the engine is free, what an instruction costs, what
// state it leaves behind) is in the subclasses' hooks.
// Leaves out data values, branches in the stream (the dispatcher walks loops and conditions),
// and the program order and dependency tracking (the core's dispatcher).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <systemc>
#include <vector>

#include "config/params.hpp"
#include "core/barrier_hub.hpp"
#include "core/core_stats.hpp"
#include "core/cost/cost_models.hpp"
#include "core/deps/dependency_tracker.hpp"
#include "core/queued_instruction.hpp"
#include "kernel/instruction.hpp"
#include "util/sim_time.hpp"

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

  /// The dispatcher hands the next instruction of this engine's stream over: `entry`
  /// (prepared) goes to the fetch buffer if it has room and nothing waits before it, else to the
  /// stream backlog (packed either way: the dispatcher reuses `entry`).
  void accept(const QueuedInstruction& entry) {
    const std::size_t position = stream_.size();
    stream_.push_back(entry);
    if (position >= fetch_buffer_size_) return;  // in the backlog
    fetch(position);
    // Only an engine with an empty buffer waits for work.
    if (position == 0) run_if_waiting();
  }
  /// The engine would fetch more if the dispatcher handed it more: it may have instructions in
  /// the program (`used`), its backlog is empty and its fetch buffer has room.
  bool wants_instructions() const { return used_ && stream_.size() < fetch_buffer_size_; }
  /// Whether the program may have instructions for this engine (InstructionSource::engines_used).
  void set_used(bool used) { used_ = used; }

  /// Called by the dispatcher before `item` enters this engine's stream (the item's instruction
  /// is filled in): records what the engine needs to know at dispatch (TensorE: the PE
  /// placement) and returns the dependency tracker's in-order stream of the instruction
  /// (deps::DependencyTracker, "In-order streams"; deps::kUnorderedStream for a DMA or
  /// collective it triggers). An engine that overrides it calls set_own_prepare() in its
  /// constructor; the others get the default without a virtual call per instruction.
  std::uint32_t prepare_dispatched(QueuedInstruction& item) {
    if (own_prepare_) return prepare(item);
    return default_stream(item.instruction.engine);
  }
  virtual std::uint32_t prepare(QueuedInstruction& item);

  /// The sequencer's work: runs the fetch buffer until it must wait (SC_METHOD body; also run in
  /// place by the core: run_if_waiting(), NeuronCore::run_ahead()). Each final engine class
  /// implements it as run_loop(*this) (engine_run.hpp), so that the hooks below are bound
  /// statically: one virtual call per run, none per instruction.
  virtual void run() = 0;
  /// Runs the sequencer now if it waits for work or for a producer's times: a call, not a
  /// process switch.
  void run_if_waiting() {
    if (!waiting_) return;
    waiting_ = false;
    run();
  }
  /// The sequencer's event: its planned start and barrier releases.
  sc_core::sc_event& wake_event() { return wake_; }

 protected:
  /// When the engine can start `item` (dependencies aside), and the trace sub-track it runs on
  /// (`lane`, 0 unless the engine runs instructions concurrently). Default: when the previous
  /// instruction ended.
  virtual sc_core::sc_time available_at(const QueuedInstruction& /*item*/, std::uint32_t& lane) {
    lane = 0;
    return free_at_;
  }
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
  /// A DMA or collective trigger on this engine issued from `start` to `end`: returns the
  /// engine busy time to add to its statistics. Default: the whole interval.
  virtual double trigger_issued(const sc_core::sc_time& start, const sc_core::sc_time& end) {
    return sim_time::to_ns(end - start);
  }
  /// Of the planned front instruction's dependency wait (wait_ns() > 0, from the engine being
  /// available or the instruction fetched, whichever is later), the time the engine was idle:
  /// called before the instruction commits. Default: all of it (one instruction at a time).
  virtual double idle_wait_ns(const QueuedInstruction& /*item*/) { return wait_ns_; }

  /// The engine overrides prepare() (see prepare_dispatched()).
  void set_own_prepare() { own_prepare_ = true; }
  /// The in-order stream of an instruction of `engine` on this engine's queue: one per engine;
  /// none (deps::kUnorderedStream) for DMAs and collectives, which complete out of order.
  std::uint32_t default_stream(kernel::Engine engine) const {
    if (kernel::engine_info(engine).triggered) {
      return deps::kUnorderedStream;
    }
    return static_cast<std::uint32_t>(unit());
  }

  /// The sequencer loop of run() for the final engine class `Self` (engine_run.hpp, included by
  /// the file that defines Self's hooks): its hooks are called on `self`, bound statically.
  template <typename Self>
  void run_loop(Self& self);

  /// The cost of an instruction of this engine by the cost model the config selects
  /// (cost::selected_cost_model), memoised by content key (Instruction::content_key).
  const cost::EngineCost& cost_of(const kernel::Instruction& instruction,
                                  const cost::CostContext& context) {
    if (instruction.content_key == 0) return cost_uncached(instruction, context);
    // The memo key packs every field of the context; a new field must be packed too.
    static_assert(sizeof(cost::CostContext) == 3, "cost_of: pack the new CostContext field");
    const auto bits = static_cast<std::uint8_t>((context.depends_on_recent ? 1 : 0) |
                                                (context.stationary_reused ? 2 : 0) |
                                                (context.activation_table_switch ? 4 : 0));
    CostMemo& memo = cost_memo_[(instruction.content_key * 8 + bits) & (kCostMemoEntries - 1)];
    if (memo.key != instruction.content_key || memo.context != bits) {
      fill_cost_memo(memo, instruction, context, bits);
    }
    return memo.cost;
  }
  /// The core's current time.
  const sc_core::sc_time& now() const;
  /// When the engine could start the front instruction, dependencies aside (planned).
  const sc_core::sc_time& engine_available() const { return engine_available_; }
  /// The planned front instruction's start.
  const sc_core::sc_time& planned_start() const { return start_; }
  /// The planned front instruction's dependency wait, ns.
  double wait_ns() const { return wait_ns_; }

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
  template <typename Self>
  bool plan_start(Self& self, const sc_core::sc_time& deps_ready);
  /// If the front instruction is a core_barrier, arrives at it. True if released now (or not
  /// a barrier).
  bool arrive_at_barrier() {
    return stream_.front().instruction.opcode != kernel::Opcode::kCoreBarrier ||
           arrive_at_core_barrier();
  }
  bool arrive_at_core_barrier();
  /// At the front instruction's start: its end and visible times, statistics, observer, then
  /// it leaves the buffer (a DMA or collective to the DMA dispatcher).
  template <typename Self>
  void commit_start(Self& self);
  /// The `core` component's debug line for the instruction committed now (log.hpp).
  void trace(const QueuedInstruction& item, double slice_start_ns, const sc_core::sc_time& end,
             const sc_core::sc_time& visible) const;
  /// The observer's record of the instruction committed now.
  void observe(const QueuedInstruction& item, double slice_start_ns, const sc_core::sc_time& end,
               const sc_core::sc_time& visible);
  /// The stream's next instruction to fetch (`position` behind the front) gets its fetch-buffer
  /// slot: the first fetch_buffer_size_ of the stream are in the buffer when the kernel starts
  /// (the launch fills it, within sequencer.launch_overhead_us); a later one is fetched at
  /// max(its slot's previous occupant started + fetch latency, previous fetch + one fetch
  /// interval). Where the program walk reaches it later than that (a simulator bound, never the
  /// hardware's), it is still the fetch time: an instruction never starts before the core's time
  /// anyway.
  void fetch(std::size_t position) {
    sc_core::sc_time fetched;
    if (buffer_refilled_) {
      fetched =
          std::max(slot_free_at_[fetch_slot_] + fetch_latency_, last_fetched_at_ + fetch_interval_);
    }
    stream_.set_fetched_at(position, fetched);
    last_fetched_at_ = fetched;
    if (++fetch_slot_ == fetch_buffer_size_) {
      fetch_slot_ = 0;
      buffer_refilled_ = true;  // the launch filled every slot once
    }
  }

  const kernel::Engine kind_;
  const sc_core::sc_time fetch_latency_;
  const sc_core::sc_time fetch_interval_;  ///< 1 / fetch_instructions_per_ns
  const std::size_t fetch_buffer_size_;
  /// The stream's instructions the dispatcher has walked past, in stream order: the first
  /// min(size, fetch_buffer_size_) are in the fetch buffer (fetched or being fetched), the rest
  /// wait in the backlog. Never longer than the core's in-flight bound.
  InstructionRing stream_;
  sc_core::sc_time last_fetched_at_;  ///< when the previous fetch completed
  /// When each fetch-buffer slot's occupant started (slot = stream index % buffer size).
  std::vector<sc_core::sc_time> slot_free_at_;
  /// The fetch-buffer slot of the next fetch and of the next start (stream index % buffer
  /// size, kept as wrapping counters).
  std::size_t fetch_slot_ = 0;
  std::size_t start_slot_ = 0;
  bool buffer_refilled_ = false;  ///< past the launch's fill: fetches wait for free slots
  bool used_ = true;
  bool own_prepare_ = false;
  const bool trace_;  ///< the `core` component logs at debug level (fixed when built)
  Phase phase_ = Phase::kIdle;
  /// Idle with an empty buffer, or its front instruction waiting for a producer's times:
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
  const cost::EngineCost& cost_uncached(const kernel::Instruction& instruction,
                                        const cost::CostContext& context);
  void fill_cost_memo(CostMemo& memo, const kernel::Instruction& instruction,
                      const cost::CostContext& context, std::uint8_t bits);
  cost::EngineCost uncached_cost_;  ///< cost_uncached()'s result
  /// The selected cost model's result for `instruction`.
  cost::EngineCost cost_with_model(const kernel::Instruction& instruction,
                                   const cost::CostContext& context) const;
  /// The config's cost model of this engine (<engine>.cost_model); none for the sync engine.
  const cost::CostModel* cost_model_;
};

}  // namespace trnsim::core
