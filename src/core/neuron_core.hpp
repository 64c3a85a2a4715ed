// NeuronCore timing model: a SystemC module whose children are the five engines (Tensor, Vector,
// Scalar, GpSimd, Sync: core/engines), each fetching and running its own instruction stream
// concurrently, and the DMA queues' dispatcher (core/dma_dispatcher.hpp). The core itself is the
// dispatcher that walks the program in order, finds each instruction's dependencies with the
// tracker (as the compiler's semaphores order them) and hands it to its engine's stream, and the
// in-flight records that stand for the semaphores.
//
// Event-driven: an engine's sequencer (an SC_METHOD, like the dispatchers: no thread, no context
// switch) wakes only when an instruction can start (its dependencies visible, the engine free)
// or when work arrives; there is no clock and no idle wake-up. A single-core system runs ahead
// of the SystemC kernel while nothing else is pending (run_ahead()): the same simulation
// without a round trip through the kernel per wake-up.
// Costs come from the pure cost models (core/cost); the engines add who waits for whom.
// Leaves out: data values; instruction fetch beyond latency and bandwidth per engine (no shared
// fetch path, no instruction cache); DMA and collective timing come from the DmaBackend and
// CollectiveBackend.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <systemc>
#include <vector>

#include "config/params.hpp"
#include "core/barrier_hub.hpp"
#include "core/collective_backend.hpp"
#include "core/core_stats.hpp"
#include "core/deps/dependency_tracker.hpp"
#include "core/dma_backend.hpp"
#include "core/dma_dispatcher.hpp"
#include "core/engines/engine.hpp"
#include "core/engines/shared_port.hpp"
#include "core/in_flight.hpp"
#include "core/instruction_source.hpp"
#include "core/queued_instruction.hpp"
#include "core/retire_queue.hpp"
#include "kernel/instruction.hpp"
#include "util/sim_time.hpp"
#include "util/slot_pool.hpp"

namespace trnsim::core {

/// Per-instruction observer (traces, profiles). Called once per instruction when its timing is
/// known; must not block.
struct InstructionTiming {
  const kernel::Instruction* instruction = nullptr;
  double fetched_ns = 0;  ///< in its engine's fetch buffer (queued) from then on
  double start_ns = 0;    ///< engine starts the instruction
  double end_ns = 0;      ///< engine is free again
  double visible_ns = 0;  ///< result visible to dependants (DMA: transfer complete)
  double wait_ns = 0;     ///< dependency wait before start
  kernel::Engine waited_on = kernel::Engine::kSync;  ///< producer engine of the longest wait
  std::uint64_t waited_on_sequence = 0;              ///< its sequence number (if wait_ns > 0)
  /// Sub-track of the engine: 0 for everything but TensorE instructions that run concurrently
  /// (PE tiles: index of the first PE tile cell used; background transposes: the cell count).
  /// Instructions of one engine and lane never overlap in time.
  std::uint32_t lane = 0;
};
using InstructionObserver = std::function<void(const InstructionTiming&)>;

/// Called once per instruction at the point where its inputs are final: a compute instruction
/// when its engine starts it, a DMA or collective when it is submitted to the memory system or
/// the collective cores (its producers have completed). Every instruction it depends on (reads
/// what it writes, writes what it reads) was passed before it, so applying each instruction's
/// effect on values in this order computes the kernel's values (functional execution). `group`
/// lists the global cores of a collective (empty: every core of the kernel, or not a
/// collective). Must not block.
using ExecuteHook =
    std::function<void(const kernel::Instruction&, std::span<const std::uint32_t> group)>;

class NeuronCore;

/// Cores that run ahead of the SystemC kernel together, without a bound (NeuronCore::run_ahead()):
/// the DMA model makes their DMAs' timing depend on each other's only
/// (DmaBackend::isolation_group()), no program of the system waits for or exchanges data with
/// another core, and no observer sees the order the cores interleave in. Built by the system;
/// each member joins it when constructed.
struct RunGroup {
  std::uint32_t id = 0;  ///< DmaBackend::isolation_group()
  DmaBackend* dma = nullptr;
  std::vector<NeuronCore*> members;  ///< in core order
};

class NeuronCore : public sc_core::sc_module {
 public:
  /// Engines with a sequencer and an instruction queue, in kernel::Engine order.
  static constexpr std::size_t kEngines = 5;  // tensor, vector, scalar, gpsimd, sync

  NeuronCore(sc_core::sc_module_name name, const config::Params& params, std::uint32_t pid,
             std::unique_ptr<InstructionSource> source, DmaBackend& dma,
             CollectiveBackend* collectives, BarrierHub* barrier, InstructionObserver observer,
             bool may_run_ahead = true, ExecuteHook execute = {}, RunGroup* run_group = nullptr);
  ~NeuronCore() override;

  const CoreStats& stats() const {
    // The latest visible time in ns, converted once (sim_time::to_ns() is monotonic: the same as
    // the maximum of the converted times).
    stats_.end_ns = sim_time::to_ns(latest_visible_);
    // Every instruction is committed by one of the engines (DMAs by their trigger engine).
    stats_.instructions = 0;
    for (std::size_t unit = 0; unit < kEngines; ++unit) {
      stats_.instructions += stats_.engines[unit].instructions;
    }
    return stats_;
  }
  bool finished() const { return finished_; }
  /// Wake-ups of the core's processes (an engine's start, the DMA dispatcher's next ready
  /// DMA, the dispatcher's retry) run ahead of the SystemC kernel, and those notified to it.
  std::uint64_t wakes_run_ahead() const { return wakes_run_ahead_; }
  std::uint64_t wakes_through_kernel() const { return wakes_through_kernel_; }
  /// Set when walking the program raised bad input: the simulation stops and this rethrows.
  std::exception_ptr error() const { return error_; }

  // --- For the core's child modules (engines, DMA dispatcher) ---------------------------------
  const config::Params& params() const { return params_; }
  std::uint32_t pid() const { return pid_; }
  CoreStats& mutable_stats() { return stats_; }
  const InstructionSource& source() const { return *source_; }
  BarrierHub* barrier_hub() const { return barrier_; }
  const InstructionObserver& observer() const { return observer_; }
  const ExecuteHook& execute_hook() const { return execute_; }
  DmaDispatcher& dma_dispatcher() { return *dma_dispatcher_; }
  /// The core's spare packed queue entries (queued_instruction.hpp).
  EntryPool& entry_pool() { return entry_pool_; }
  const sc_core::sc_time& semaphore_latency() const { return semaphore_latency_; }
  const sc_core::sc_time& issue_time() const { return issue_time_; }
  /// The core's current time: the simulation time, except while run_ahead() runs a wake-up
  /// ahead of it.
  const sc_core::sc_time& now() const { return now_; }
  /// Whether the core runs ahead of the SystemC kernel (see run_ahead()).
  bool runs_ahead() const { return run_ahead_; }
  bool has_error() const { return static_cast<bool>(error_); }
  /// Stops the simulation with `error` (rethrown by simulate()).
  void fail(std::exception_ptr error);
  /// The in-flight record of instruction `id` (its slot; the slot holds another id once `id`
  /// retired).
  InFlight& slot(std::uint64_t id) { return in_flight_[slot_of(id)]; }
  /// Non-blocking: true when every dependency of `item` is scheduled; then `ready` is when the
  /// last becomes visible to `consumer` (with semaphore latency) and last_* name that producer.
  /// Otherwise false, and `unscheduled` is the first producer whose times are not known yet.
  /// `Item`: QueuedInstruction or PackedInstruction (dependency_count(), dependency(i)).
  template <typename Item>
  bool dependencies_known(const Item& item, kernel::Engine consumer, sc_core::sc_time& ready,
                          kernel::Engine& last_engine, std::uint64_t& last_id,
                          std::uint64_t& unscheduled) {
    ready = sc_core::SC_ZERO_TIME;
    const std::size_t count = item.dependency_count();
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint64_t producer = item.dependency(i);
      if (!dependency_known(producer, consumer, ready, last_engine, last_id)) {
        unscheduled = producer;
        return false;
      }
    }
    return true;
  }
  /// One dependency of dependencies_known(): false if `producer` has no times yet.
  bool dependency_known(std::uint64_t producer, kernel::Engine consumer, sc_core::sc_time& ready,
                        kernel::Engine& last_engine, std::uint64_t& last_id) {
    const InFlight& record = slot(producer);
    // A recycled slot means the producer retired: its result was visible (with the
    // semaphore latency) no later than now.
    if (record.id != producer) return true;
    if (!record.scheduled) return false;
    // The same engine sees its own results in program order as soon as it is done (e.g.
    // matmuls accumulating into one PSUM bank); other engines wait for the result to be
    // visible and for the semaphore.
    const sc_core::sc_time visible =
        record.engine == consumer ? record.end : record.visible + semaphore_latency_;
    if (visible > ready) {
      ready = visible;
      last_engine = record.engine;
      last_id = producer;
    }
    return true;
  }
  /// When the results of other engines (not `consumer` itself) that `item` depends on are
  /// visible to it. Requires dependencies_known() to have returned true.
  sc_core::sc_time other_engines_ready(const QueuedInstruction& item, kernel::Engine consumer) {
    sc_core::sc_time ready = sc_core::SC_ZERO_TIME;
    auto consider = [&](std::uint64_t producer) {
      const InFlight& record = slot(producer);
      if (record.id == producer && record.engine != consumer) {
        ready = std::max(ready, record.visible + semaphore_latency_);
      }
    };
    for (const std::uint64_t producer : item.dependencies) consider(producer);
    return ready;
  }
  /// The front instruction of `unit`'s queue waits for `producer`'s times: runs that engine
  /// when they become known.
  void run_engine_when_scheduled(std::uint64_t producer, std::size_t unit) {
    slot(producer).waiting_engines |= static_cast<std::uint8_t>(1u << unit);
  }
  /// Instruction `record` (produced by `producer`) has its times: the engine is done at `end`,
  /// its result visible at `visible`. Runs whoever waits for them.
  void finish(InFlight& record, kernel::Engine producer, const sc_core::sc_time& end,
              const sc_core::sc_time& visible);
  /// An engine wants more instructions of its stream (Engine::wants_instructions()): if the
  /// dispatcher waits for that, it dispatches now (a call, not a process switch).
  void instructions_wanted() {
    if (!dispatching_ && dispatcher_waits_for_demand_) dispatch_on_demand();
  }
  /// True when the dispatcher has walked the whole program.
  bool dispatch_done() const { return dispatch_done_; }
  /// An engine has run its last instruction.
  void engine_finished();
  /// Wakers of the core's processes: the engines' units, then these two.
  static constexpr std::size_t kDmaDispatcherWake = kEngines;
  static constexpr std::size_t kDispatcherWake = kEngines + 1;
  /// `waker` is to run at `at` (>= now()): kept pending while the core runs ahead
  /// (wake_later()), else its event is notified, immediately when `at` is now().
  void wake(std::size_t waker, const sc_core::sc_time& at) {
    if (run_ahead_) {
      wake_later(waker, at);
    } else {
      notify_wake(waker, at);
    }
  }
  /// While the core runs ahead, the core's processes do not notify each other's events:
  /// `waker` is to run at `at` (>= now()), kept pending for run_ahead(). An earlier pending
  /// wake-up of the same waker stands, as an event keeps its earlier notification.
  void wake_later(std::size_t waker, const sc_core::sc_time& at) {
    PendingWake& wake = wakes_[waker];
    const std::uint32_t bit = 1u << waker;
    // As an event keeps its earlier notification.
    if ((pending_wakes_ & bit) != 0 && wake.at <= at) return;
    pending_wakes_ |= bit;
    wake.at = at;
    wake.order = next_wake_order_++;
  }
  void forget_wake(std::size_t waker);
  /// A wake-up that went through the SystemC kernel (statistics of the simulator).
  void count_wake_through_kernel() { ++wakes_through_kernel_; }
  /// `waker`'s process runs, woken by its event: no notification of it is pending any more.
  void kernel_wake_ran(std::size_t waker) {
    const std::uint32_t bit = 1u << waker;
    kernel_wakes_ &= ~bit;
    immediate_wakes_ &= ~bit;
    started_processes_ |= bit;
  }
  /// Bracket a process's run (leave(true)) or a call from another module's process
  /// (leave(false)): the outermost enter() sets now() to the simulation time, the outermost
  /// leave() runs run_ahead().
  void enter() {
    if (activation_depth_++ == 0) {
      const sc_core::sc_time real = sc_core::sc_time_stamp();
      // Nothing runs a process of the core, or calls into it, before the core's own time:
      // run_ahead() leaves nothing it ran to the kernel.
      if (real < now_) [[unlikely]]
        time_moved_back(real);
      now_ = real;
    }
  }
  void leave(bool may_move) {
    if (activation_depth_ == 1) run_ahead(may_move);
    --activation_depth_;
  }

 private:
  /// Walks the program in order and hands each instruction to its engine's stream, while an
  /// engine wants more (Engine::wants_instructions(): the walk goes only as far as some engine
  /// would fetch; the engine calls instructions_wanted() when it wants more again) and fewer
  /// than sequencer.max_in_flight_instructions are in flight (dispatcher_wake_ is notified when
  /// the first can retire). The dispatcher SC_METHOD,
  /// statically sensitive to dispatcher_wake_, runs it otherwise. Either way it runs at the
  /// time the dispatch happens. No engine waits for another engine's stream: an instruction
  /// goes to its engine's backlog when that engine's fetch buffer is full.
  void dispatch();
  void dispatch_on_demand();
  /// Any engine wants more instructions.
  bool engines_want_instructions() const;
  Engine* last_fed_ = nullptr;        ///< the engine the program walk handed its last instruction
  bool walk_without_demand_ = false;  ///< no engine has instructions: walk to the end
  void dispatcher_process();
  sc_core::sc_event& event_of(std::size_t waker);
  /// Notifies `waker`'s event for `at` (the core does not run ahead).
  void notify_wake(std::size_t waker, const sc_core::sc_time& at);
  /// The pending waker with the earliest time (ties: the first made); kWakers: none.
  std::size_t earliest_wake() const;
  /// At the end of a process's run (run_ahead_ only), the core runs ahead of the simulation
  /// time: while the earliest pending wake-up (an engine's start, the DMA dispatcher's next
  /// ready DMA, the dispatcher's retry) comes before any other activity of the simulation (the
  /// SystemC kernel has nothing pending until after it), moves now_ to it and runs it here.
  /// Every process would sleep until then and this one wake first, so it is the same
  /// simulation without the round trip through the kernel. DMAs start ahead only on a backend
  /// that accepts_submit_ahead(), collectives never. Then notifies the events of the wake-ups
  /// still pending, earliest first: one due now immediately, as the process that made it would
  /// have, a later one timed. `may_move` false: only notifies. A call from another module's
  /// process must not move ahead: that process goes on at the simulation time after the call.
  /// The cores of a RunGroup do not look at the kernel's activity once each of their processes
  /// has made its first run and none is runnable in the kernel: nothing else acts on them, so
  /// they run every wake-up here, all cores' in time order, while they have one
  /// (run_group_ahead()).
  void run_ahead(bool may_move);
  /// run_ahead() for the cores of run_group_: runs their wake-ups in time order and settles
  /// the DMAs the backend holds to the end of their time step (DmaBackend::settle()) once
  /// every wake-up of that time has run. False when it cannot (a process of a member has not
  /// made its first run yet, or is runnable in the kernel): then the core runs ahead on its own.
  bool run_group_ahead();
  /// Runs pending wake-up `waker` (its time is now_); true when it needs the kernel's time to
  /// go on (the DMA dispatcher starts a collective).
  bool run_wake(std::size_t waker);
  /// Gives the pending wake-ups to the kernel (simulation time `real`), earliest first.
  void notify_pending(const sc_core::sc_time& real);
  /// A process of the core ran, or another module called in, at `real`, before the core's own
  /// time: a simulator bug; fails the run with an internal error.
  void time_moved_back(const sc_core::sc_time& real);
  /// Takes the timed notifications run_ahead() gave the kernel back (cancels them; they are
  /// pending wake-ups of the core again).
  void reclaim_kernel_wakes();
  /// Retires the records whose results have been visible for the semaphore latency by `now`.
  void retire_until(const sc_core::sc_time& now) {
    if (!pending_retire_.empty() && pending_retire_.top().first <= now) retire_due(now);
  }
  void retire_due(const sc_core::sc_time& now);

  const config::Params params_;
  const std::uint32_t pid_;
  std::unique_ptr<InstructionSource> source_;
  BarrierHub* barrier_;
  InstructionObserver observer_;
  ExecuteHook execute_;
  const sc_core::sc_time semaphore_latency_;
  const sc_core::sc_time issue_time_;
  mutable CoreStats stats_;          ///< end_ns and instructions are set by stats()
  sc_core::sc_time latest_visible_;  ///< when the last result became visible (so far)

  deps::DependencyTracker tracker_;
  std::vector<deps::Dependency> dependency_scratch_;
  /// Every packed queue entry of the core comes from here (declared before its holders).
  EntryPool entry_pool_;
  /// The dispatcher's next instruction (when staged_), filled in place and packed into its
  /// engine's stream.
  QueuedInstruction staging_;
  bool staged_ = false;
  /// In-flight records by slot (slot_of(id)), at most sequencer.max_in_flight_instructions,
  /// allocated on first use; a slot is reused only after the occupant's result is visible
  /// (plus the semaphore latency) and it left the tracker.
  util::SlotPool<InFlight> in_flight_;  ///< records of dispatched, not yet retired instructions
  const std::size_t max_in_flight_;
  /// (visible + semaphore latency, id) of scheduled instructions not yet retired, min first.
  RetireQueue<std::pair<sc_core::sc_time, std::uint64_t>> pending_retire_;

  std::unique_ptr<DmaDispatcher> dma_dispatcher_;
  std::array<std::unique_ptr<Engine>, kEngines> engines_;
  SharedPort shared_sbuf_port_;  ///< NC-v2: VectorE/GpSimdE SBUF port (if the config shares it)
  SharedPort shared_psum_port_;  ///< NC-v2: VectorE/ScalarE PSUM port (if the config shares it)

  std::uint64_t next_sequence_ = 0;
  std::uint64_t fence_id_ = kNoId;  ///< the latest core_barrier (kNoId: none)
  std::uint32_t running_engines_ = kEngines;
  sc_core::sc_event dispatcher_wake_;
  /// What the dispatcher waits for: an engine that wants instructions, or (all in-flight
  /// records taken) the first record that can retire.
  bool dispatcher_waits_for_demand_ = false;
  bool dispatcher_waits_for_retirement_ = false;
  bool dispatching_ = false;  ///< dispatch() is running (it sees new demand by itself)
  bool dispatch_done_ = false;
  bool finished_ = false;
  std::exception_ptr error_;
  /// The core's current time: the simulation time, except while run_ahead() runs a wake-up
  /// ahead of it. The outermost enter() sets it.
  sc_core::sc_time now_;
  std::uint32_t activation_depth_ = 0;
  /// Whether the core may run ahead (run_ahead()): when the constructor allows it, on a
  /// single-core system, where no other core's process calls into this one while it is
  /// ahead (a barrier release, a collective's completion), or when the core belongs to a
  /// RunGroup. Otherwise it never moves ahead.
  bool run_ahead_ = false;
  /// The constructor's `run_group` (may_run_ahead only): the cores it runs ahead with.
  RunGroup* const run_group_;
  static constexpr std::size_t kWakers = kEngines + 2;
  static constexpr std::uint32_t kAllWakers = (1u << kWakers) - 1;
  /// Processes (a bit per waker) that have made their first run, which the kernel starts.
  std::uint32_t started_processes_ = 0;
  /// Wakers whose event run_ahead() notified immediately: runnable in the kernel now.
  std::uint32_t immediate_wakes_ = 0;
  struct PendingWake {
    sc_core::sc_time at;
    std::uint64_t order = 0;  ///< when it was made: ties go to the first made
  };
  std::array<PendingWake, kWakers> wakes_{};
  /// Wakers whose event run_ahead() notified to the kernel for a later time (a bit each), and
  /// that time (the earliest, as the event keeps it).
  std::uint32_t kernel_wakes_ = 0;
  std::array<sc_core::sc_time, kWakers> kernel_wake_at_{};
  std::uint32_t pending_wakes_ = 0;  ///< wakers with a pending wake-up (a bit each)
  std::uint64_t next_wake_order_ = 0;
  std::uint64_t wakes_run_ahead_ = 0;
  std::uint64_t wakes_through_kernel_ = 0;
};

}  // namespace trnsim::core
