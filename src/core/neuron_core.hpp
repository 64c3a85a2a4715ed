// NeuronCore timing model: the five engine sequencers (Tensor, Vector, Scalar, GpSimd, Sync)
// running their own in-order queues concurrently, a dispatcher feeding them in program order with
// the dependencies the tracker finds, cross-engine semaphores, and the DMA queues.
//
// Event-driven: an engine's sequencer (an SC_METHOD, like the dispatchers: no thread, no context
// switch) wakes only when an instruction can start (its dependencies visible, the engine free)
// or when work arrives; there is no clock and no idle wake-up. A single-core system runs ahead
// of the SystemC kernel while nothing else is pending (run_ahead()): the same simulation
// without a round trip through the kernel per wake-up.
// Costs come from the pure cost models (core/cost); this module adds who waits for whom.
// Leaves out: instruction fetch (sequencer issue is a fixed cost per instruction) and data
// values; DMA and collective timing come from the DmaBackend and CollectiveBackend.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <systemc>
#include <vector>

#include "config/params.hpp"
#include "core/collective_backend.hpp"
#include "core/core_stats.hpp"
#include "core/cost/cost_model.hpp"
#include "core/cost/tensor_throttle.hpp"
#include "core/deps/dependency_tracker.hpp"
#include "core/dma_backend.hpp"
#include "core/instruction_source.hpp"
#include "core/retire_queue.hpp"
#include "kernel/instruction.hpp"

namespace trnsim::core {

/// Rendezvous for core_barrier across the cores of one simulation. A core arriving at a barrier
/// of a group waits until every core of that group has arrived at it.
class BarrierHub {
  struct Barrier;

 public:
  explicit BarrierHub(std::uint32_t cores) : cores_(cores) {}
  /// A core's arrival at one barrier, until it is released.
  struct Ticket {
    const Barrier* barrier = nullptr;
    std::uint64_t generation = 0;
  };
  /// The calling core arrives at the barrier of `group` (empty: all cores). Returns true when
  /// it is the last to arrive: the barrier is released now. Otherwise `wake` is notified at the
  /// release, when released() starts to hold.
  bool arrive(std::span<const std::uint32_t> group, Ticket& ticket, sc_core::sc_event& wake);
  static bool released(const Ticket& ticket);
  std::uint32_t cores() const { return cores_; }

 private:
  struct Barrier {
    std::uint32_t arrived = 0;
    std::uint64_t generation = 0;
    std::vector<sc_core::sc_event*> waiters;  ///< to notify at the release
  };
  std::uint32_t cores_;
  std::map<std::vector<std::uint32_t>, Barrier> barriers_;  ///< by sorted group
};

/// Per-instruction observer (traces, profiles). Called once per instruction when its timing is
/// known; must not block.
struct InstructionTiming {
  const kernel::Instruction* instruction = nullptr;
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

class NeuronCore : public sc_core::sc_module, public DmaClient, public CollectiveClient {
 public:
  /// Engines with a sequencer and an instruction queue, in kernel::Engine order.
  static constexpr std::size_t kSequencers = 5;  // tensor, vector, scalar, gpsimd, sync

  NeuronCore(sc_core::sc_module_name name, const config::Params& params, std::uint32_t pid,
             std::unique_ptr<InstructionSource> source, DmaBackend& dma,
             CollectiveBackend* collectives, BarrierHub* barrier, InstructionObserver observer,
             bool may_run_ahead = true);

  void dma_complete(std::uint64_t id, const sc_core::sc_time& complete,
                    double transfer_ns) override;
  void collective_complete(std::uint64_t id, const sc_core::sc_time& complete) override;

  const CoreStats& stats() const { return stats_; }
  bool finished() const { return finished_; }
  /// Wake-ups of the core's processes (a sequencer's start, the DMA dispatcher's next ready
  /// DMA, the dispatcher's retry) run ahead of the SystemC kernel, and those notified to it.
  std::uint64_t wakes_run_ahead() const { return wakes_run_ahead_; }
  std::uint64_t wakes_through_kernel() const { return wakes_through_kernel_; }
  /// Set when walking the program raised bad input: the simulation stops and this rethrows.
  std::exception_ptr error() const { return error_; }

 private:
  /// The PE-array cells a TensorE instruction occupies (row-major grid of pe_tile_granularity
  /// cells), or the background-transpose lane (`background`, no cells).
  struct PePlacement {
    bool background = false;
    std::size_t first_cell = 0;
    std::size_t cell_rows = 0;
    std::size_t cell_cols = 0;
  };

  struct Queued {
    kernel::Instruction instruction;
    std::uint64_t id = 0;
    sc_core::sc_time pushed_at;
    PePlacement placement;  ///< set by the dispatcher; empty unless a TensorE instruction
    std::uint8_t dependency_count = 0;
    std::array<std::uint64_t, 8> dependencies{};
    std::vector<std::uint64_t> more_dependencies;  ///< rare overflow beyond 8

    /// True if `predicate(producer id)` holds for any dependency.
    template <typename Predicate>
    bool any_dependency(Predicate predicate) const {
      for (std::uint8_t i = 0; i < dependency_count; ++i) {
        if (predicate(dependencies[i])) return true;
      }
      for (const std::uint64_t producer : more_dependencies) {
        if (predicate(producer)) return true;
      }
      return false;
    }
  };

  /// An instruction between dispatch and retirement. Slot = id % capacity, reused only after the
  /// occupant's result is visible (plus the semaphore latency) and it left the tracker.
  struct InFlight {
    std::uint64_t id = ~std::uint64_t{0};
    kernel::Engine engine = kernel::Engine::kSync;  ///< who produces the result (kDma for DMAs)
    bool scheduled = false;                         ///< end and visible times known
    sc_core::sc_time end;      ///< producing engine done (same-engine dependants may start)
    sc_core::sc_time visible;  ///< result visible to other engines (before semaphore latency)
    /// Sequencers (bit = unit) whose front instruction waits for these times: woken by
    /// finish().
    std::uint8_t waiting_sequencers = 0;
    /// dma_pending_ slots waiting for these times, linked by PendingDma::next_blocked in the
    /// order they blocked: looked at only when the times become known, so a wake costs
    /// O(DMAs it unblocks), not O(DMAs waiting), and blocking allocates nothing.
    std::uint32_t blocked_first = kNoSlot;
    std::uint32_t blocked_last = kNoSlot;
  };

  static constexpr std::uint32_t kNoSlot = ~std::uint32_t{0};

  /// Bounded FIFO of one sequencer, a ring of entries allocated on first use and then reused
  /// (no allocation per instruction; a queue that never fills never holds `depth` entries).
  /// Entries are handed over by swapping owners, never copied: the dispatcher swaps its staged
  /// entry in at the back; the sequencer works on front() in place and may swap it out (a
  /// triggered DMA moves to the DMA dispatcher) before pop_front().
  class EngineQueue {
   public:
    explicit EngineQueue(std::size_t depth) : entries_(depth) {}
    bool full() const { return size_ == entries_.size(); }
    bool empty() const { return size_ == 0; }
    Queued& front() { return *entries_[head_]; }
    /// Exchanges the front entry with `entry` (which must hold one): the caller keeps the front
    /// instruction, the ring gets a spare entry.
    void swap_front(std::unique_ptr<Queued>& entry) { entries_[head_].swap(entry); }
    /// Publishes `entry` at the back and hands back the ring's spare entry in its place (a
    /// consumed one, or a new one on first use): the dispatcher stages the next instruction in
    /// it, so instructions are never copied on the way to their sequencer.
    void push_back(std::unique_ptr<Queued>& entry) {
      std::unique_ptr<Queued>& back = entries_[(head_ + size_) % entries_.size()];
      back.swap(entry);
      if (!entry) entry = std::make_unique<Queued>();
      ++size_;
    }
    void pop_front() {
      head_ = (head_ + 1) % entries_.size();
      --size_;
    }

   private:
    std::vector<std::unique_ptr<Queued>> entries_;
    std::size_t head_ = 0;
    std::size_t size_ = 0;
  };

  /// A triggered DMA or collective whose dependencies are not all visible yet.
  struct PendingDma {
    std::unique_ptr<Queued> item = std::make_unique<Queued>();
    sc_core::sc_time issued;               ///< when the trigger engine issued it
    std::uint32_t next_blocked = kNoSlot;  ///< next slot blocked on the same producer
  };

  /// Dispatches instructions in program order until one cannot be: its engine's queue is full
  /// (the sequencer calls dispatch() when it pops that queue: a full queue frees up once per
  /// instruction, and a process switch each time cost more than the dispatch) or its in-flight
  /// slot is still occupied (dispatcher_wake_ is notified when the occupant's times are known
  /// or it can retire). The dispatcher SC_METHOD, statically sensitive to dispatcher_wake_,
  /// runs it otherwise. Either way it runs at the time the dispatch happens.
  void dispatch();
  /// SC_METHOD entry points of the dispatcher and the sequencers (enter(), the work, leave()).
  void dispatcher_process();
  void sequencer_process(std::size_t unit);
  /// Notifies `event` at absolute time `at` (> the simulation time).
  static void notify_at(sc_core::sc_event& event, const sc_core::sc_time& at);
  /// `waker` (a sequencer's unit, kDmaDispatcherWake, kDispatcherWake) is to run at `at`
  /// (>= now_): kept pending with run_ahead_ (wake_later()), else its event is notified,
  /// immediately when `at` is now_.
  void wake(std::size_t waker, const sc_core::sc_time& at);
  sc_core::sc_event& event_of(std::size_t waker);
  /// With run_ahead_, the core's processes do not notify each other's events: `waker` (a
  /// sequencer's unit, kDmaDispatcherWake, kDispatcherWake) is to run at `at` (>= now_), kept
  /// pending for run_ahead(). An earlier pending wake-up of the same waker stands, as an
  /// event keeps its earlier notification.
  void wake_later(std::size_t waker, const sc_core::sc_time& at);
  void forget_wake(std::size_t waker);
  /// The pending waker with the earliest time (ties: the first made); kWakers: none.
  std::size_t earliest_wake() const;
  /// At the end of a process's run (run_ahead_ only), the core runs ahead of the simulation
  /// time: while the earliest pending wake-up (a sequencer's start, the DMA dispatcher's next
  /// ready DMA, the dispatcher's retry) comes before any other activity of the simulation (the
  /// SystemC kernel has nothing pending until after it), moves now_ to it and runs it here.
  /// Every process would sleep until then and this one wake first, so it is the same
  /// simulation without the round trip through the kernel. DMAs start ahead only on a backend
  /// that accepts_submit_ahead(), collectives never. Then notifies the events of the wake-ups
  /// still pending, earliest first: one due now immediately, as the process that made it would
  /// have, a later one timed. `may_move` false: only notifies. A call from another module's
  /// process must not move ahead: that process goes on at the simulation time after the call.
  void run_ahead(bool may_move);
  /// Bracket a process's run (leave(true)) or a call from another module's process
  /// (leave(false)): the outermost enter() sets now_ to the simulation time, the outermost
  /// leave() runs run_ahead().
  void enter();
  void leave(bool may_move);
  /// SC_METHOD: starts ready DMAs and collectives at their ready time, earliest first (ties by
  /// id); re-triggers itself on the next ready time or on an earlier one becoming known (with
  /// run_ahead_, the next ready time is left to run_ahead(), and dma_work_ is notified).
  void dma_dispatch_method();
  /// Starts the DMAs and collectives ready by now_, in order. Returns the next ready time
  /// (sc_max_time(): none), or now_ when the next one must start at the simulation time and
  /// now_ is ahead of it.
  sc_core::sc_time start_ready_dmas();
  /// A triggered DMA or collective (slot `index` of dma_pending_), or one whose producer just
  /// got its times: blocked on the first producer without times, else ready when its
  /// dependencies are visible (and not before its trigger issued it).
  void consider_dma(std::uint32_t index);
  /// The tracker's in-order stream of an instruction on sequencer `unit`
  /// (deps::DependencyTracker, "In-order streams").
  std::uint32_t in_order_stream(const kernel::Instruction& instruction,
                                const PePlacement& placement) const;
  PePlacement pe_placement(const kernel::Instruction& instruction);
  PePlacement compute_pe_placement(const kernel::Instruction& instruction) const;
  /// cost::engine_cost, memoised by content key (Instruction::content_key).
  cost::EngineCost cost_of(const kernel::Instruction& instruction,
                           const cost::CostContext& context);
  /// The first producer of `item` whose times are not known yet; nullopt when all are.
  std::optional<std::uint64_t> unscheduled_producer(const Queued& item);
  /// Non-blocking: true when every dependency of `item` is scheduled; then `ready` is when the
  /// last becomes visible to `consumer` (with semaphore latency) and last_* name that producer.
  bool dependencies_known(const Queued& item, kernel::Engine consumer, sc_core::sc_time& ready,
                          kernel::Engine& last_engine, std::uint64_t& last_id);
  /// When the results of other engines (not `consumer` itself) that `item` depends on are
  /// visible to it. Requires dependencies_known() to have returned true.
  sc_core::sc_time other_engines_ready(const Queued& item, kernel::Engine consumer);
  /// SC_METHOD of sequencer `unit` (a method, not a thread: no context switch per
  /// instruction). Runs its queue in order: waits for the front instruction's producers to have
  /// times, plans its start (plan_start), waits until then, arrives at a barrier if it is one,
  /// and commits it (commit_start).
  void sequencer_method(std::size_t unit);
  /// Computes the front instruction's start and what its commit needs, at the current time with
  /// its dependencies known. Returns true when it starts now (and, a barrier, is released).
  bool plan_start(std::size_t unit, const sc_core::sc_time& deps_ready);
  /// The front instruction is a core_barrier: arrives at it. True if released now.
  bool arrive_at_barrier(std::size_t unit);
  /// At the front instruction's start: its end and visible times, statistics, observer, then
  /// it leaves the queue (a DMA or collective to the DMA dispatcher).
  void commit_start(std::size_t unit);
  void retire_until(const sc_core::sc_time& now);
  InFlight& slot(std::uint64_t id) { return in_flight_[id & (in_flight_.size() - 1)]; }
  /// Runs sequencer `unit` now if it waits for work or for a producer's times (see Sequencer):
  /// the wake-up costs a call, not a process switch.
  void wake_sequencer(std::size_t unit);
  void finish(InFlight& record, kernel::Engine producer, const sc_core::sc_time& end,
              const sc_core::sc_time& visible);

  const config::Params params_;
  const std::uint32_t pid_;
  std::unique_ptr<InstructionSource> source_;
  BarrierHub* barrier_;
  InstructionObserver observer_;
  const sc_core::sc_time semaphore_latency_;
  const sc_core::sc_time issue_time_;

  deps::DependencyTracker tracker_;
  std::vector<deps::Dependency> dependency_scratch_;
  /// The dispatcher's next instruction (when staged_), filled in place and swapped into its
  /// engine's queue.
  std::unique_ptr<Queued> staging_ = std::make_unique<Queued>();
  bool staged_ = false;
  std::uint64_t staged_id_ = 0;
  std::vector<InFlight> in_flight_;
  /// (visible + semaphore latency, id) of scheduled instructions not yet retired, min first.
  RetireQueue<std::pair<sc_core::sc_time, std::uint64_t>> pending_retire_;
  std::array<std::unique_ptr<EngineQueue>, kSequencers> queues_;
  /// One sequencer's state: what it keeps from instruction to instruction, and its front
  /// instruction's plan between plan_start() and commit_start().
  struct Sequencer {
    enum class Phase : std::uint8_t {
      kIdle,          ///< looking at the front instruction (if any) afresh
      kWaitingStart,  ///< planned; woken at its start
      kAtBarrier,     ///< a core_barrier waiting for the other cores
    };
    Phase phase = Phase::kIdle;
    /// Idle with an empty queue, or its front instruction waiting for a producer's times:
    /// wake_sequencer() runs it in place. Otherwise it waits for `wake` (its start, a barrier).
    bool waiting = false;
    /// The sequencer method is statically sensitive to it and never uses next_trigger(), so
    /// it can equally run from another process (wake_sequencer()).
    sc_core::sc_event wake;
    sc_core::sc_time ls_free_at;  ///< TensorE: LoadStationary unit free
    kernel::AccessPattern last_stationary;
    bool have_stationary = false;
    std::uint64_t last_matmul_id = ~std::uint64_t{0};
    kernel::ActivationFunc loaded_table = kernel::ActivationFunc::kCopy;
    // The front instruction's plan.
    sc_core::sc_time start;
    sc_core::sc_time engine_available;
    sc_core::sc_time ls_start;
    double wait_ns = 0;
    kernel::Engine waited_on = kernel::Engine::kSync;
    std::uint64_t waited_on_id = 0;
    std::uint32_t lane = 0;
    cost::EngineCost cost;
    sc_core::sc_time* sbuf_port = nullptr;
    sc_core::sc_time* psum_port = nullptr;
    BarrierHub::Ticket barrier;
  };
  std::array<Sequencer, kSequencers> sequencers_{};
  std::array<sc_core::sc_time, kSequencers> engine_free_at_{};
  std::array<std::uint64_t, kSequencers> last_id_on_engine_{};
  /// When each cell of the PE array (row-major grid of pe_tile_granularity cells) is free.
  /// A cell's time only grows (an instruction starts once its cells are free), so an
  /// instruction on the whole array is O(1): it reads the latest time of any cell and sets
  /// `whole_`, which every cell's own time is read against.
  class PeCells {
   public:
    void reset(std::size_t rows, std::size_t cols) {
      cols_ = cols;
      cells_.assign(rows * cols, sc_core::SC_ZERO_TIME);
    }
    std::size_t size() const { return cells_.size(); }
    std::size_t cols() const { return cols_; }
    /// When every cell of `placement` is free (zero for an empty placement).
    sc_core::sc_time free_at(const PePlacement& placement) const {
      if (is_whole(placement)) return latest_;
      sc_core::sc_time free;
      for (std::size_t r = 0; r < placement.cell_rows; ++r) {
        for (std::size_t c = 0; c < placement.cell_cols; ++c) {
          free = std::max(free, cells_[placement.first_cell + r * cols_ + c]);
        }
      }
      return std::max(free, placement.cell_rows > 0 ? whole_ : sc_core::SC_ZERO_TIME);
    }
    /// The cells of `placement` are busy until `end` (not before free_at(placement)).
    void occupy(const PePlacement& placement, const sc_core::sc_time& end) {
      if (placement.cell_rows == 0) return;
      latest_ = std::max(latest_, end);
      if (is_whole(placement)) {
        whole_ = end;
        return;
      }
      for (std::size_t r = 0; r < placement.cell_rows; ++r) {
        for (std::size_t c = 0; c < placement.cell_cols; ++c) {
          cells_[placement.first_cell + r * cols_ + c] = end;
        }
      }
    }

   private:
    bool is_whole(const PePlacement& placement) const {
      return placement.first_cell == 0 &&
             placement.cell_rows * placement.cell_cols == cells_.size();
    }
    std::size_t cols_ = 1;
    std::vector<sc_core::sc_time> cells_;  ///< own times, read as max(cell, whole_)
    sc_core::sc_time whole_;               ///< end of the latest whole-array instruction
    sc_core::sc_time latest_;              ///< the latest time of any cell
  };

  /// Recent costs and PE placements by content key: an instruction recurring in a loop is
  /// costed once per context. Direct-mapped; key 0 (no promise) is never stored.
  struct CostMemo {
    std::uint64_t key = 0;
    std::uint8_t context = 0;
    cost::EngineCost cost;
  };
  struct PlacementMemo {
    std::uint64_t key = 0;
    PePlacement placement;
  };
  static constexpr std::size_t kCostMemoEntries = 256;  // power of two
  static constexpr std::size_t kPlacementMemoEntries = 64;
  std::vector<CostMemo> cost_memo_ = std::vector<CostMemo>(kCostMemoEntries);
  std::vector<PlacementMemo> placement_memo_ = std::vector<PlacementMemo>(kPlacementMemoEntries);

  // TensorE concurrency: PE tiles and the background transpose unit.
  PeCells pe_cells_;
  sc_core::sc_time background_transpose_free_at_;
  sc_core::sc_time
      tensor_issue_at_;  ///< TensorE issue order: previous start (a DMA trigger: its end)
  sc_core::sc_time tensor_busy_until_;         ///< end of the union of TensorE busy intervals
  sc_core::sc_time shared_sbuf_port_free_at_;  ///< NC-v2: VectorE/GpSimdE SBUF port
  sc_core::sc_time shared_psum_port_free_at_;  ///< NC-v2: VectorE/ScalarE PSUM port
  DmaBackend& dma_;
  CollectiveBackend* collectives_;  ///< null: the system has no collective model
  /// Triggered DMAs/collectives not yet started, by slot (no copies of the instruction while
  /// they wait); free slots in dma_free_slots_.
  std::vector<PendingDma> dma_pending_;
  std::vector<std::uint32_t> dma_free_slots_;
  /// Ready slots by (time their dependencies are visible, id): started in this order.
  struct ReadyDma {
    sc_core::sc_time ready;
    std::uint64_t id = 0;
    std::uint32_t slot = 0;
    bool operator>(const ReadyDma& other) const {
      return ready != other.ready ? ready > other.ready : id > other.id;
    }
  };
  std::priority_queue<ReadyDma, std::vector<ReadyDma>, std::greater<>> dma_ready_;
  sc_core::sc_event dma_work_;  ///< a DMA became ready earlier than dma_wakes_at_
  /// When dma_dispatch_method runs next unless notified (zero while it runs, the maximum time
  /// while nothing is ready).
  sc_core::sc_time dma_wakes_at_;
  cost::TensorThrottle throttle_;
  std::uint64_t next_id_ = 0;
  std::uint64_t fence_id_ = ~std::uint64_t{0};  ///< the latest core_barrier (kNoId: none)
  std::uint32_t running_sequencers_ = kSequencers;
  sc_core::sc_event dispatcher_wake_;
  /// What the dispatcher waits for: the sequencer whose full queue blocks it (kSequencers:
  /// none), the in-flight instruction whose slot it needs and whose times are unknown (kNoId:
  /// none).
  std::size_t dispatcher_waits_for_queue_ = kSequencers;
  std::uint64_t dispatcher_waits_for_id_ = ~std::uint64_t{0};
  bool dispatch_done_ = false;
  bool finished_ = false;
  std::exception_ptr error_;
  CoreStats stats_;
  /// Busy time and dependency waits of the core's DMAs and collectives (into stats_).
  ConcurrentUnitTime dma_time_;
  ConcurrentUnitTime collective_time_;
  /// The core's current time: the simulation time, except while run_ahead() runs a wake-up
  /// ahead of it. The outermost enter() sets it.
  sc_core::sc_time now_;
  std::uint32_t activation_depth_ = 0;
  /// Whether the core may run ahead (run_ahead()): when the constructor allows it, on a
  /// single-core system only, where no other core's process calls into this one while it is
  /// ahead (a barrier release, a collective's completion). Otherwise it never moves ahead.
  bool run_ahead_ = false;
  /// Pending wake-ups (wake_later()), by waker: the sequencers' units, then these two.
  static constexpr std::size_t kDmaDispatcherWake = kSequencers;
  static constexpr std::size_t kDispatcherWake = kSequencers + 1;
  static constexpr std::size_t kWakers = kSequencers + 2;
  struct PendingWake {
    bool pending = false;
    sc_core::sc_time at;
    std::uint64_t order = 0;  ///< when it was made: ties go to the first made
  };
  std::array<PendingWake, kWakers> wakes_{};
  std::uint32_t pending_wakes_ = 0;
  std::uint64_t next_wake_order_ = 0;
  std::uint64_t wakes_run_ahead_ = 0;
  std::uint64_t wakes_through_kernel_ = 0;
};

}  // namespace trnsim::core
