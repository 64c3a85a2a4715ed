#include "core/neuron_core.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>

#include "util/error.hpp"

namespace trnsim::core {

using kernel::Engine;
using kernel::Instruction;
using kernel::MemoryKind;
using kernel::Opcode;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

namespace {

constexpr std::size_t kInFlightCapacity = 4096;  // power of two; bounds run-ahead, not timing
constexpr std::uint64_t kNoId = ~std::uint64_t{0};

// sc_time <-> double ns, bit-identical to t.to_seconds() * 1e9 and sc_time(value, SC_NS)
// without their out-of-line calls and simcontext lookups (they were ~5% of a compute-bound run).
// The kernel's time resolution, read on first use (it is fixed before any core exists).
struct TimeScale {
  double fs_per_tick = 0;   ///< 0: not read yet
  double ticks_per_ns = 0;  ///< 1e6 / fs_per_tick
  sc_time one_tick;
};
TimeScale time_scale;

[[gnu::noinline]] void read_time_scale() {
  const sc_time resolution = sc_core::sc_get_time_resolution();
  for (const auto& [unit, value] : {std::pair{sc_core::SC_FS, 1.0}, std::pair{sc_core::SC_PS, 1e3},
                                    std::pair{sc_core::SC_NS, 1e6}}) {
    if (resolution == sc_time(1, unit)) {
      time_scale.fs_per_tick = value;
      time_scale.ticks_per_ns = 1e6 / value;
      time_scale.one_tick = sc_time::from_value(1);
      return;
    }
  }
  throw std::logic_error("NeuronCore: unsupported SystemC time resolution " +
                         resolution.to_string());
}
const TimeScale& scale() {
  if (time_scale.fs_per_tick == 0) [[unlikely]]
    read_time_scale();
  return time_scale;
}
double ticks_to_ns(std::uint64_t ticks) {
  return static_cast<double>(ticks) * scale().fs_per_tick * 1e-15 * 1e9;
}
double to_ns(const sc_time& t) {
  return ticks_to_ns(t.value());
}
sc_time ns(double value) {
  if (value == 0) return SC_ZERO_TIME;
  // sc_time * double is inline and rounds as sc_time(value, SC_NS) does: one tick times the
  // tick count, plus 0.5, truncated (SC_NS is 1e6 fs).
  const TimeScale& time = scale();
  return time.one_tick * (value * time.ticks_per_ns);
}

/// The sequencer that executes (or, for DMAs, triggers) an instruction.
std::size_t sequencer_of(const Instruction& instruction) {
  if (instruction.engine == Engine::kDma) return static_cast<std::size_t>(instruction.dma_trigger);
  if (instruction.engine == Engine::kCollective) return static_cast<std::size_t>(Engine::kSync);
  return static_cast<std::size_t>(instruction.engine);
}

bool touches(const Instruction& instruction, MemoryKind memory) {
  for (std::uint8_t i = 0; i < instruction.num_reads; ++i) {
    if (instruction.reads[i].memory == memory) return true;
  }
  for (std::uint8_t i = 0; i < instruction.num_writes; ++i) {
    if (instruction.writes[i].memory == memory) return true;
  }
  return false;
}

bool same_pattern(const kernel::AccessPattern& a, const kernel::AccessPattern& b) {
  return a.tensor == b.tensor && a.offset == b.offset && a.partition_start == b.partition_start &&
         a.partitions == b.partitions && a.rank == b.rank && a.sizes == b.sizes &&
         a.strides == b.strides && a.dtype == b.dtype;
}

/// Peak FLOP/s of the Tensor Engine for this matmul's input type.
double peak_flops_for(const Instruction& instruction, const config::Params& params) {
  const kernel::DType dtype = instruction.operand(kernel::Slot::kSrc).dtype;
  if (instruction.opcode == Opcode::kNcMatmulMx) {
    return dtype == kernel::DType::kFloat4E2M1FnX4 ? params.peak_mxfp4_flops_per_core()
                                                   : params.peak_mxfp8_flops_per_core();
  }
  if (dtype == kernel::DType::kFloat32) return params.peak_fp32_flops_per_core();
  if (instruction.double_row) return params.peak_fp8_flops_per_core();
  return params.peak_bf16_flops_per_core();
}

}  // namespace

bool BarrierHub::arrive(std::span<const std::uint32_t> group, Ticket& ticket,
                        sc_core::sc_event& wake) {
  std::vector<std::uint32_t> key(group.begin(), group.end());
  std::sort(key.begin(), key.end());
  key.erase(std::unique(key.begin(), key.end()), key.end());
  const auto participants = key.empty() ? cores_ : static_cast<std::uint32_t>(key.size());
  Barrier& barrier = barriers_[key];
  ticket.barrier = &barrier;
  ticket.generation = barrier.generation;
  if (++barrier.arrived == participants) {
    barrier.arrived = 0;
    ++barrier.generation;
    // Only a system of several cores has waiters, and it never runs ahead (run_ahead_).
    for (sc_core::sc_event* waiter : barrier.waiters) waiter->notify();
    barrier.waiters.clear();
    return true;
  }
  barrier.waiters.push_back(&wake);
  return false;
}

bool BarrierHub::released(const Ticket& ticket) {
  return ticket.barrier->generation != ticket.generation;
}

NeuronCore::NeuronCore(sc_core::sc_module_name name, const config::Params& params,
                       std::uint32_t pid, std::unique_ptr<InstructionSource> source,
                       DmaBackend& dma, CollectiveBackend* collectives, BarrierHub* barrier,
                       InstructionObserver observer, bool may_run_ahead)
    : sc_module(name),
      params_(params),
      pid_(pid),
      source_(std::move(source)),
      barrier_(barrier),
      observer_(std::move(observer)),
      semaphore_latency_(ns(params.sequencer.semaphore_latency_ns)),
      issue_time_(ns(params.sequencer.issue_ns)),
      in_flight_(kInFlightCapacity),
      dma_(dma),
      collectives_(collectives),
      throttle_(params_.tensor),
      dma_time_(stats_.engines[static_cast<std::size_t>(Engine::kDma)], scale().fs_per_tick),
      collective_time_(stats_.engines[static_cast<std::size_t>(Engine::kCollective)],
                       scale().fs_per_tick),
      run_ahead_(may_run_ahead && (barrier == nullptr || barrier->cores() == 1)) {
  stats_.pid = pid;
  const auto granularity = static_cast<std::size_t>(std::max(1, params.tensor.pe_tile_granularity));
  pe_cells_.reset(
      std::max<std::size_t>(1, static_cast<std::size_t>(params.tensor.rows) / granularity),
      std::max<std::size_t>(1, static_cast<std::size_t>(params.tensor.cols) / granularity));
  last_id_on_engine_.fill(kNoId);
  for (auto& queue : queues_) {
    queue = std::make_unique<EngineQueue>(static_cast<std::size_t>(params.sequencer.queue_depth));
  }
  dependency_scratch_.reserve(64);
  sc_core::sc_spawn_options method;
  method.spawn_method();
  sc_core::sc_spawn_options dispatcher;
  dispatcher.spawn_method();
  dispatcher.set_sensitivity(&dispatcher_wake_);
  sc_core::sc_spawn(sc_bind(&NeuronCore::dispatcher_process, this), "dispatcher", &dispatcher);
  sc_core::sc_spawn(sc_bind(&NeuronCore::dma_dispatch_method, this), "dma_dispatcher", &method);
  for (std::size_t unit = 0; unit < kSequencers; ++unit) {
    sc_core::sc_spawn_options sequencer;
    sequencer.spawn_method();
    sequencer.set_sensitivity(&sequencers_[unit].wake);
    sc_core::sc_spawn(sc_bind(&NeuronCore::sequencer_process, this, unit),
                      sc_core::sc_gen_unique_name("sequencer"), &sequencer);
  }
}

void NeuronCore::enter() {
  if (activation_depth_++ == 0) now_ = sc_core::sc_time_stamp();
}

void NeuronCore::leave(bool may_move) {
  if (activation_depth_ == 1) run_ahead(may_move);
  --activation_depth_;
}

void NeuronCore::dispatcher_process() {
  enter();
  forget_wake(kDispatcherWake);  // it looks afresh
  dispatch();
  leave(true);
}

void NeuronCore::sequencer_process(std::size_t unit) {
  enter();
  sequencer_method(unit);
  leave(true);
}

[[gnu::always_inline]] inline void NeuronCore::wake(std::size_t waker, const sc_time& at) {
  if (run_ahead_) {
    wake_later(waker, at);
    return;
  }
  ++wakes_through_kernel_;
  if (at == now_) {
    event_of(waker).notify();
  } else {
    notify_at(event_of(waker), at);
  }
}

sc_core::sc_event& NeuronCore::event_of(std::size_t waker) {
  if (waker < kSequencers) return sequencers_[waker].wake;
  return waker == kDispatcherWake ? dispatcher_wake_ : dma_work_;
}

void NeuronCore::wake_later(std::size_t waker, const sc_time& at) {
  PendingWake& wake = wakes_[waker];
  if (wake.pending && wake.at <= at) return;  // as an event keeps its earlier notification
  if (!wake.pending) ++pending_wakes_;
  wake.pending = true;
  wake.at = at;
  wake.order = next_wake_order_++;
}

void NeuronCore::forget_wake(std::size_t waker) {
  if (!wakes_[waker].pending) return;
  wakes_[waker].pending = false;
  --pending_wakes_;
}

std::size_t NeuronCore::earliest_wake() const {
  std::size_t next = kWakers;
  for (std::size_t waker = 0; waker < kWakers; ++waker) {
    const PendingWake& wake = wakes_[waker];
    if (!wake.pending) continue;
    if (next == kWakers || wake.at < wakes_[next].at ||
        (wake.at == wakes_[next].at && wake.order < wakes_[next].order)) {
      next = waker;
    }
  }
  return next;
}

void NeuronCore::run_ahead(bool may_move) {
  const sc_time real = sc_core::sc_time_stamp();
  // The kernel's next activity, as a delay from `real`; zero when something else runs now. It
  // changes only when something notifies the kernel: sequencers and the dispatcher do not while
  // running ahead, the DMA dispatcher may (a backend's own events), so it is looked up again
  // after that.
  sc_time gap;
  bool gap_known = false;
  while (may_move && pending_wakes_ > 0 && !error_) {
    const std::size_t next = earliest_wake();
    // Anything else pending at or before then (a DMA or collective model's process, this
    // core's processes notified before) runs first: the kernel orders it.
    const sc_time at = wakes_[next].at;
    if (!gap_known) {
      gap = sc_core::sc_time_to_pending_activity(sc_core::sc_get_curr_simcontext());
      gap_known = true;
    }
    if (gap <= at - real) break;
    now_ = at;
    forget_wake(next);
    ++wakes_run_ahead_;
    if (next < kSequencers) {
      sequencer_method(next);
    } else if (next == kDispatcherWake) {
      dispatcher_wake_.cancel();  // as an immediate notification would: it runs now
      dispatch();
    } else {
      gap_known = false;
      dma_work_.cancel();  // a wake-up notified before is superseded: it sets its next one here
      dma_wakes_at_ = SC_ZERO_TIME;
      const sc_time ready = start_ready_dmas();
      dma_wakes_at_ = ready;
      if (ready != sc_core::sc_max_time() && !error_) {
        wake_later(kDmaDispatcherWake, ready);
        if (ready == now_) break;  // the next one needs the simulation time to be now_
      }
    }
  }
  // The rest goes to the kernel, earliest (and first made) first: at the simulation time as an
  // immediate notification, as the process would have made it, later as a timed one.
  while (pending_wakes_ > 0) {
    const std::size_t next = earliest_wake();
    const sc_time at = wakes_[next].at;
    forget_wake(next);
    ++wakes_through_kernel_;
    sc_core::sc_event& event = event_of(next);
    if (at == real) {
      event.notify();
    } else {
      if (next == kDmaDispatcherWake) dma_work_.cancel();  // it sleeps until dma_wakes_at_
      event.notify(at - real);
    }
  }
}

void NeuronCore::notify_at(sc_core::sc_event& event, const sc_time& at) {
  event.notify(at - sc_core::sc_time_stamp());
}

void NeuronCore::retire_until(const sc_time& now) {
  while (!pending_retire_.empty() && pending_retire_.top().first <= now) {
    const std::uint64_t id = pending_retire_.top().second;
    pending_retire_.pop();
    tracker_.retire(id);
    slot(id).id = kNoId;
  }
}

void NeuronCore::dispatch() {
  for (;;) {
    if (!staged_) {
      try {
        if (!source_->next(staging_->instruction)) {
          dispatch_done_ = true;
          for (std::size_t unit = 0; unit < kSequencers; ++unit) wake_sequencer(unit);
          return;  // never woken again
        }
      } catch (...) {
        error_ = std::current_exception();
        sc_core::sc_stop();
        return;
      }
      staged_ = true;
      staged_id_ = next_id_++;
    }
    const std::uint64_t id = staged_id_;
    const sc_time now = now_;

    // The ring slot must be free: its previous occupant retired.
    InFlight& record = slot(id);
    if (record.id != kNoId) {
      if (!record.scheduled) {
        dispatcher_waits_for_id_ = record.id;  // finish() wakes the dispatcher
        return;
      }
      const sc_time until = record.visible + semaphore_latency_;
      if (until > now) {
        wake(kDispatcherWake, until);
        return;
      }
      retire_until(now);
      continue;
    }

    const Instruction& staged = staging_->instruction;
    const std::size_t unit = sequencer_of(staged);
    EngineQueue& queue = *queues_[unit];
    if (queue.full()) {
      dispatcher_waits_for_queue_ = unit;  // its sequencer dispatches when it pops
      return;
    }

    retire_until(now);
    dependency_scratch_.clear();
    // Entries are reused: a non-TensorE instruction (a DMA on TensorE's queue) gets an empty one.
    staging_->placement = staged.engine == Engine::kTensor ? pe_placement(staged) : PePlacement{};
    tracker_.add(id, {staged.reads.data(), staged.num_reads},
                 {staged.writes.data(), staged.num_writes}, dependency_scratch_,
                 in_order_stream(staged, staging_->placement));
    // core_barrier is a fence: it waits for every earlier instruction of the core (DMAs and
    // collectives included, so their writes are visible to the other cores after it), and every
    // later instruction waits for it.
    if (fence_id_ != kNoId && slot(fence_id_).id == fence_id_) {
      dependency_scratch_.push_back({fence_id_, deps::DependencyKind::kReadAfterWrite});
    }
    if (staged.opcode == Opcode::kCoreBarrier) {
      dependency_scratch_.clear();
      const std::uint64_t ring = in_flight_.size();
      for (std::uint64_t earlier = id > ring ? id - ring : 0; earlier < id; ++earlier) {
        if (slot(earlier).id == earlier) {
          dependency_scratch_.push_back({earlier, deps::DependencyKind::kReadAfterWrite});
        }
      }
      fence_id_ = id;
    }
    Queued& item = *staging_;
    item.id = id;
    item.pushed_at = now;
    item.dependency_count = 0;
    item.more_dependencies.clear();
    for (const deps::Dependency& dependency : dependency_scratch_) {
      if (item.dependency_count < item.dependencies.size()) {
        item.dependencies[item.dependency_count++] = dependency.producer;
      } else {
        item.more_dependencies.push_back(dependency.producer);
      }
    }
    record.id = id;
    record.scheduled = false;
    record.engine = staged.engine;
    const bool was_empty = queue.empty();
    queue.push_back(staging_);
    staged_ = false;
    // Only a sequencer with an empty queue waits for work.
    if (was_empty) wake_sequencer(unit);
  }
}

bool NeuronCore::dependencies_known(const Queued& item, Engine consumer, sc_time& ready,
                                    Engine& last_engine, std::uint64_t& last_id) {
  ready = SC_ZERO_TIME;
  auto consider = [&](std::uint64_t producer) {
    const InFlight& record = slot(producer);
    // A recycled slot means the producer retired: its result was visible (with the
    // semaphore latency) no later than now.
    if (record.id != producer) return true;
    if (!record.scheduled) return false;
    // The same engine sees its own results in program order as soon as it is done (e.g.
    // matmuls accumulating into one PSUM bank); other engines wait for the result to be
    // visible and for the semaphore.
    const sc_time visible =
        record.engine == consumer ? record.end : record.visible + semaphore_latency_;
    if (visible > ready) {
      ready = visible;
      last_engine = record.engine;
      last_id = producer;
    }
    return true;
  };
  for (std::uint8_t i = 0; i < item.dependency_count; ++i) {
    if (!consider(item.dependencies[i])) return false;
  }
  for (std::uint64_t producer : item.more_dependencies) {
    if (!consider(producer)) return false;
  }
  return true;
}

NeuronCore::PePlacement NeuronCore::pe_placement(const Instruction& instruction) {
  if (instruction.content_key == 0) return compute_pe_placement(instruction);
  PlacementMemo& memo = placement_memo_[instruction.content_key & (kPlacementMemoEntries - 1)];
  if (memo.key != instruction.content_key) {
    memo.key = instruction.content_key;
    memo.placement = compute_pe_placement(instruction);
  }
  return memo.placement;
}

cost::EngineCost NeuronCore::cost_of(const Instruction& instruction,
                                     const cost::CostContext& context) {
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

NeuronCore::PePlacement NeuronCore::compute_pe_placement(const Instruction& instruction) const {
  PePlacement placement;
  if (params_.tensor.background_transpose && instruction.opcode == Opcode::kNcTranspose) {
    placement.background = true;
    return placement;
  }
  const cost::PeTile tile = cost::pe_tile(instruction, params_);
  const auto granularity = static_cast<std::uint32_t>(params_.tensor.pe_tile_granularity);
  placement.first_cell =
      (tile.row_begin / granularity) * pe_cells_.cols() + tile.col_begin / granularity;
  placement.cell_rows = std::max<std::size_t>(1, tile.rows / granularity);
  placement.cell_cols = std::max<std::size_t>(1, tile.cols / granularity);
  return placement;
}

std::uint32_t NeuronCore::in_order_stream(const Instruction& instruction,
                                          const PePlacement& placement) const {
  // DMAs and collectives complete out of order. A sequencer runs one instruction after the
  // other, except TensorE: matmuls on disjoint PE tiles and background transposes overlap, so
  // its streams are per first PE cell of a tile and the background-transpose lane.
  if (instruction.engine == Engine::kDma || instruction.engine == Engine::kCollective) {
    return deps::kUnorderedStream;
  }
  if (instruction.engine != Engine::kTensor)
    return static_cast<std::uint32_t>(sequencer_of(instruction));
  constexpr std::uint32_t kTensorStreams = 1u << 20;
  if (placement.background) return kTensorStreams;
  // Tiles with the same first PE cell share that cell, so the later waits for the earlier.
  return kTensorStreams + 1 + static_cast<std::uint32_t>(placement.first_cell);
}

std::optional<std::uint64_t> NeuronCore::unscheduled_producer(const Queued& item) {
  for (std::uint8_t i = 0; i < item.dependency_count; ++i) {
    const InFlight& record = slot(item.dependencies[i]);
    if (record.id == item.dependencies[i] && !record.scheduled) return item.dependencies[i];
  }
  for (const std::uint64_t producer : item.more_dependencies) {
    const InFlight& record = slot(producer);
    if (record.id == producer && !record.scheduled) return producer;
  }
  return std::nullopt;
}

sc_time NeuronCore::other_engines_ready(const Queued& item, Engine consumer) {
  sc_time ready = SC_ZERO_TIME;
  auto consider = [&](std::uint64_t producer) {
    const InFlight& record = slot(producer);
    if (record.id == producer && record.engine != consumer) {
      ready = std::max(ready, record.visible + semaphore_latency_);
    }
  };
  for (std::uint8_t i = 0; i < item.dependency_count; ++i) consider(item.dependencies[i]);
  for (std::uint64_t producer : item.more_dependencies) consider(producer);
  return ready;
}

void NeuronCore::consider_dma(std::uint32_t index) {
  PendingDma& pending = dma_pending_[index];
  if (const std::optional<std::uint64_t> producer = unscheduled_producer(*pending.item)) {
    InFlight& blocking = slot(*producer);
    pending.next_blocked = kNoSlot;
    if (blocking.blocked_first == kNoSlot) {
      blocking.blocked_first = index;
    } else {
      dma_pending_[blocking.blocked_last].next_blocked = index;
    }
    blocking.blocked_last = index;
    return;
  }
  sc_time ready;
  Engine last_engine = Engine::kSync;
  std::uint64_t last_id = 0;
  dependencies_known(*pending.item, Engine::kDma, ready, last_engine, last_id);
  ConcurrentUnitTime& unit_time =
      pending.item->instruction.engine == Engine::kDma ? dma_time_ : collective_time_;
  unit_time.waited(pending.issued.value(), ready.value(), last_engine, now_.value());
  ready = std::max(ready, pending.issued);
  dma_ready_.push({ready, pending.item->id, index});
  // The DMA dispatcher sleeps until the earliest ready DMA it knew of: wake it only for an
  // earlier one.
  if (ready < dma_wakes_at_) {
    if (run_ahead_) {
      // It would only set its timer to `ready` (now_ if that has passed): set the timer.
      dma_wakes_at_ = std::max(ready, now_);
      wake_later(kDmaDispatcherWake, dma_wakes_at_);
    } else {
      dma_wakes_at_ = SC_ZERO_TIME;
      dma_work_.notify();
    }
  }
}

void NeuronCore::dma_dispatch_method() {
  enter();
  forget_wake(kDmaDispatcherWake);  // it looks afresh
  // Running: DMAs considered meanwhile are seen below without a notification.
  dma_wakes_at_ = SC_ZERO_TIME;
  const sc_time next = start_ready_dmas();
  dma_wakes_at_ = next;
  if (next == sc_core::sc_max_time() || error_) {
    sc_core::next_trigger(dma_work_);
  } else if (run_ahead_) {
    wake_later(kDmaDispatcherWake, next);  // run_ahead() runs it or notifies dma_work_
    sc_core::next_trigger(dma_work_);
  } else {
    sc_core::next_trigger(next - now_, dma_work_);
    ++wakes_through_kernel_;
  }
  leave(true);
}

sc_time NeuronCore::start_ready_dmas() {
  const bool ahead = now_ != sc_core::sc_time_stamp();
  for (;;) {
    if (dma_ready_.empty()) return sc_core::sc_max_time();
    const ReadyDma first = dma_ready_.top();
    if (first.ready > now_) return first.ready;
    const std::uint32_t index = first.slot;
    const PendingDma& dma = dma_pending_[index];
    const Instruction& instruction = dma.item->instruction;
    // Ahead of the simulation time only a backend that takes the time as an argument can start
    // it; otherwise the process runs at this time (run_ahead()).
    if (ahead && (instruction.engine != Engine::kDma || !dma_.accepts_submit_ahead())) {
      return now_;
    }
    dma_ready_.pop();
    // The record is finished by dma_complete()/collective_complete(), possibly from inside
    // submit().
    if (instruction.engine == Engine::kDma) {
      if (ahead) {
        dma_.submit_ahead(now_, pid_, dma.item->id, instruction, *this);
      } else {
        dma_.submit(pid_, dma.item->id, instruction, *this);
      }
    } else if (collectives_ != nullptr) {
      std::span<const std::uint32_t> group;
      if (instruction.core_group != kernel::kAllCores) {
        group = source_->core_group(instruction.core_group);
      }
      collectives_->submit(pid_, dma.item->id, instruction, group, *this);
    } else {
      error_ = std::make_exception_ptr(InputError(
          source_->location(instruction),
          std::string(kernel::opcode_name(instruction.opcode)) +
              ": collectives and send/recv need a system with collective-communication cores; "
              "this build does not model them yet"));
      sc_core::sc_stop();
      return sc_core::sc_max_time();
    }
    dma_free_slots_.push_back(index);
  }
}

void NeuronCore::wake_sequencer(std::size_t unit) {
  Sequencer& state = sequencers_[unit];
  if (!state.waiting) return;
  state.waiting = false;
  sequencer_method(unit);
}

void NeuronCore::finish(InFlight& record, Engine producer, const sc_time& end,
                        const sc_time& visible) {
  record.engine = producer;
  record.end = end;
  record.visible = visible;
  record.scheduled = true;
  if (record.id == dispatcher_waits_for_id_) {
    dispatcher_waits_for_id_ = kNoId;
    wake(kDispatcherWake, now_);
  }
  if (record.waiting_sequencers != 0) {
    const std::uint8_t waiting = record.waiting_sequencers;
    record.waiting_sequencers = 0;
    for (std::size_t unit = 0; unit < kSequencers; ++unit) {
      if ((waiting >> unit & 1u) != 0) wake_sequencer(unit);
    }
  }
  // Taken out first: considering a DMA may block it on another producer, which relinks it.
  std::uint32_t blocked = record.blocked_first;
  record.blocked_first = kNoSlot;
  record.blocked_last = kNoSlot;
  while (blocked != kNoSlot) {
    const std::uint32_t next = dma_pending_[blocked].next_blocked;
    consider_dma(blocked);
    blocked = next;
  }
  pending_retire_.push({visible + semaphore_latency_, record.id});
  stats_.end_ns = std::max(stats_.end_ns, to_ns(visible));
}

void NeuronCore::dma_complete(std::uint64_t id, const sc_time& complete, double transfer_ns) {
  // Possibly from another module's process, which goes on after the call: no running ahead.
  enter();
  InFlight& record = slot(id);
  // The DMA is busy while its data moves.
  const sc_time begin = complete - std::min(complete, ns(transfer_ns));
  dma_time_.completed(id, begin.value(), complete.value(), now_.value());
  finish(record, Engine::kDma, complete, complete);
  leave(false);
}

void NeuronCore::collective_complete(std::uint64_t id, const sc_time& complete) {
  enter();  // as dma_complete()
  InFlight& record = slot(id);
  // Busy from the report (CollectiveSystem reports at its last step) to completion.
  collective_time_.completed(id, std::min(now_, complete).value(), complete.value(), now_.value());
  finish(record, Engine::kCollective, complete, complete);
  leave(false);
}

void NeuronCore::sequencer_method(std::size_t unit) {
  EngineQueue& queue = *queues_[unit];
  const Engine engine = static_cast<Engine>(unit);
  Sequencer& state = sequencers_[unit];

  for (;;) {
    if (state.phase == Sequencer::Phase::kAtBarrier) {
      if (!BarrierHub::released(state.barrier)) return;
    } else if (state.phase == Sequencer::Phase::kWaitingStart) {
      if (!arrive_at_barrier(unit)) return;
    } else {
      if (queue.empty()) {
        if (dispatch_done_) {
          if (--running_sequencers_ == 0) {
            finished_ = true;
            dma_time_.all_issued();
            collective_time_.all_issued();
          }
          return;  // never woken again
        }
        state.waiting = true;  // dispatch() wakes it
        return;
      }
      const Queued& item = queue.front();
      const Instruction& instruction = item.instruction;
      // A DMA trigger does not wait for the DMA's data: the DMA waits for its own dependencies
      // (dma_dispatch_method) while the trigger engine goes on with its next instruction.
      const bool is_dma =
          instruction.engine == Engine::kDma || instruction.engine == Engine::kCollective;
      sc_time deps_ready = SC_ZERO_TIME;
      state.waited_on = Engine::kSync;
      state.waited_on_id = 0;
      if (!is_dma &&
          !dependencies_known(item, engine, deps_ready, state.waited_on, state.waited_on_id)) {
        // Wait for the first producer that has no time yet, then look again.
        slot(*unscheduled_producer(item)).waiting_sequencers |=
            static_cast<std::uint8_t>(1u << unit);
        state.waiting = true;
        return;
      }
      if (!plan_start(unit, deps_ready)) return;  // waiting for the start, or at a barrier
    }
    commit_start(unit);
    state.phase = Sequencer::Phase::kIdle;
  }
}

bool NeuronCore::plan_start(std::size_t unit, const sc_time& deps_ready) {
  EngineQueue& queue = *queues_[unit];
  const Engine engine = static_cast<Engine>(unit);
  Sequencer& state = sequencers_[unit];
  const Queued& item = queue.front();
  const Instruction& instruction = item.instruction;
  const sc_time now = now_;
  // When the engine could start it, dependencies aside. TensorE issues in order but runs
  // instructions on disjoint PE tiles (and, where the generation has it, transposes in the
  // background) concurrently: it waits for the tiles it uses, not for the whole array.
  sc_time engine_available = engine_free_at_[unit];
  state.lane = 0;
  if (engine == Engine::kTensor) {
    // TensorE issues in order. A DMA it triggers has an empty placement: no PE cell.
    engine_available = tensor_issue_at_;
    if (item.placement.background) {
      engine_available = std::max(engine_available, background_transpose_free_at_);
      state.lane = static_cast<std::uint32_t>(pe_cells_.size());
    } else {
      engine_available = std::max(engine_available, pe_cells_.free_at(item.placement));
      state.lane = static_cast<std::uint32_t>(item.placement.first_cell);
    }
  }
  state.engine_available = engine_available;
  // Dependency waits count from when the engine could otherwise have started.
  const sc_time earliest = std::max(engine_available, item.pushed_at);
  sc_time start = std::max({earliest, deps_ready, now});
  state.wait_ns = deps_ready > earliest ? to_ns(deps_ready - earliest) : 0.0;
  // DMA and collective triggers and barriers have nothing but their start to plan (a barrier is
  // arrived at at its start, arrive_at_barrier()).
  const bool computes = instruction.engine != Engine::kDma &&
                        instruction.engine != Engine::kCollective &&
                        instruction.opcode != Opcode::kCoreBarrier;
  cost::CostContext context;
  if (computes) {
    const std::uint64_t previous_on_engine = last_id_on_engine_[unit];
    context.depends_on_recent = item.any_dependency(
        [&](std::uint64_t dependency) { return dependency == previous_on_engine; });
  }
  if (computes && engine == Engine::kTensor) {
    const bool is_matmul =
        instruction.opcode == Opcode::kNcMatmul || instruction.opcode == Opcode::kNcMatmulMx;
    if (is_matmul) {
      const kernel::AccessPattern& stationary = instruction.operand(kernel::Slot::kStationary);
      // Conservative: any producer newer than the previous matmul may have rewritten it.
      const bool written_since = item.any_dependency([&](std::uint64_t dependency) {
        return state.last_matmul_id == kNoId || dependency > state.last_matmul_id;
      });
      context.stationary_reused = state.have_stationary && !written_since &&
                                  same_pattern(stationary, state.last_stationary);
      state.last_stationary = stationary;
      state.have_stationary = true;
      state.last_matmul_id = item.id;
    }
    state.cost = cost_of(instruction, context);
    const double cycle_ns = params_.tensor.cycle_ns();
    // LoadStationary runs in the background as soon as its inputs are ready. The stationary
    // is in SBUF, which TensorE never writes: only other engines' results can delay it.
    state.ls_start = std::max(other_engines_ready(item, engine), state.ls_free_at);
    const sc_time ls_end = state.ls_start + ns(state.cost.load_stationary_cycles * cycle_ns);
    state.ls_free_at = ls_end;
    start = std::max(start, ls_end);
  } else if (computes) {
    if (instruction.opcode == Opcode::kActivation) {
      context.activation_table_switch = instruction.func != state.loaded_table;
      state.loaded_table = instruction.func;
    }
    // NC-v2 shared ports: VectorE/GpSimdE on SBUF, VectorE/ScalarE on PSUM.
    state.sbuf_port = nullptr;
    state.psum_port = nullptr;
    if (params_.vector.shares_sbuf_port_with_gpsimd &&
        (engine == Engine::kVector || engine == Engine::kGpSimd) &&
        touches(instruction, MemoryKind::kSbuf)) {
      state.sbuf_port = &shared_sbuf_port_free_at_;
    }
    if (params_.vector.shares_psum_port_with_scalar &&
        (engine == Engine::kVector || engine == Engine::kScalar) &&
        touches(instruction, MemoryKind::kPsum)) {
      state.psum_port = &shared_psum_port_free_at_;
    }
    const sc_time before_ports = start;
    if (state.sbuf_port != nullptr) start = std::max(start, *state.sbuf_port);
    if (state.psum_port != nullptr) start = std::max(start, *state.psum_port);
    stats_.engines[unit].port_wait_ns += to_ns(start - before_ports);
    state.cost = cost_of(instruction, context);
  }
  state.start = start;
  if (start > now) {
    state.phase = Sequencer::Phase::kWaitingStart;
    wake(unit, start);
    return false;
  }
  return arrive_at_barrier(unit);
}

bool NeuronCore::arrive_at_barrier(std::size_t unit) {
  const Instruction& instruction = queues_[unit]->front().instruction;
  if (instruction.opcode != Opcode::kCoreBarrier || barrier_ == nullptr) return true;
  std::span<const std::uint32_t> group;
  if (instruction.core_group != kernel::kAllCores) {
    group = source_->core_group(instruction.core_group);
  }
  Sequencer& state = sequencers_[unit];
  if (barrier_->arrive(group, state.barrier, state.wake)) return true;
  state.phase = Sequencer::Phase::kAtBarrier;
  return false;
}

void NeuronCore::commit_start(std::size_t unit) {
  EngineQueue& queue = *queues_[unit];
  const Engine engine = static_cast<Engine>(unit);
  Sequencer& state = sequencers_[unit];
  Queued& item = queue.front();
  const Instruction& instruction = item.instruction;
  InFlight& record = slot(item.id);
  const sc_time start = state.start;
  // TensorE's earlier work (other PE tiles) may still run while this instruction waits.
  const sc_time tensor_busy_before = tensor_busy_until_;

  EngineStats& engine_stats = stats_.engines[unit];
  double busy_ns = 0;
  double slice_start_ns = 0;
  sc_time end;
  sc_time visible;

  bool completes_later = false;
  if (instruction.engine == Engine::kDma) {
    end = start + issue_time_;
    busy_ns = to_ns(issue_time_);
    if (engine == Engine::kTensor) {
      tensor_issue_at_ = end;
      // TensorE's busy time is the union over its concurrent PE tiles and this trigger.
      busy_ns = end > tensor_busy_until_ ? to_ns(end - std::max(start, tensor_busy_until_)) : 0.0;
      tensor_busy_until_ = std::max(tensor_busy_until_, end);
    }
    dma_time_.issued(unit, item.id, end.value());
    EngineStats& dma_stats = stats_.engines[static_cast<std::size_t>(Engine::kDma)];
    ++dma_stats.instructions;
    ++dma_stats.op_counts[static_cast<std::size_t>(instruction.opcode)];
    ++stats_.dma_transfers;
    stats_.dma_bytes += std::max(instruction.src().bytes(), instruction.dst().bytes());
    if (instruction.src().memory == MemoryKind::kHbm) {
      stats_.hbm_read_bytes += instruction.src().bytes();
    }
    if (instruction.dst().memory == MemoryKind::kHbm) {
      stats_.hbm_write_bytes += instruction.dst().bytes();
    }
    slice_start_ns = to_ns(start);
    completes_later = true;
  } else if (instruction.engine == Engine::kCollective) {
    end = start + issue_time_;
    busy_ns = to_ns(issue_time_);
    collective_time_.issued(unit, item.id, end.value());
    EngineStats& collective_stats = stats_.engines[static_cast<std::size_t>(Engine::kCollective)];
    ++collective_stats.instructions;
    ++collective_stats.op_counts[static_cast<std::size_t>(instruction.opcode)];
    slice_start_ns = to_ns(start);
    completes_later = true;
  } else if (instruction.opcode == Opcode::kCoreBarrier) {
    // Released now (every core of the group arrived), or no barrier hub: at the start.
    end = barrier_ != nullptr ? now_ : start;
    end = std::max(end, start + issue_time_);
    visible = end;
    busy_ns = to_ns(end - start);
    slice_start_ns = to_ns(start);
  } else if (engine == Engine::kTensor) {
    const cost::EngineCost& cost = state.cost;
    const double cycle_ns = params_.tensor.cycle_ns();
    const double full_rate_ns = cost.cycles * cycle_ns;
    const double start_ns = to_ns(start);
    const double end_ns = throttle_.run(start_ns, full_rate_ns);
    stats_.throttled_ns += end_ns - start_ns - full_rate_ns;
    end = ns(end_ns);
    visible = end + ns(cost.latency_cycles * cycle_ns);
    slice_start_ns = std::max(to_ns(state.ls_start), to_ns(state.engine_available));
    slice_start_ns = std::min(slice_start_ns, start_ns);
    // Busy time is the union over concurrent tiles.
    busy_ns = end > tensor_busy_until_
                  ? end_ns - std::max(slice_start_ns, to_ns(tensor_busy_until_))
                  : 0.0;
    tensor_busy_until_ = std::max(tensor_busy_until_, end);
    tensor_issue_at_ = start;
    if (item.placement.background) {
      background_transpose_free_at_ = end;
    } else {
      pe_cells_.occupy(item.placement, end);
    }
    if (instruction.opcode == Opcode::kNcMatmul || instruction.opcode == Opcode::kNcMatmulMx) {
      stats_.matmul_flops += instruction.flops;
      stats_.tensor_ideal_ns +=
          static_cast<double>(instruction.flops) / peak_flops_for(instruction, params_) * 1e9;
    }
  } else {
    end = start + ns(state.cost.ns);
    visible = end;
    if (state.sbuf_port != nullptr) *state.sbuf_port = end;
    if (state.psum_port != nullptr) *state.psum_port = end;
    busy_ns = state.cost.ns;
    slice_start_ns = to_ns(start);
  }

  ++engine_stats.instructions;
  ++engine_stats.op_counts[static_cast<std::size_t>(instruction.opcode)];
  engine_stats.active_ns += busy_ns;
  if (state.wait_ns > 0) {
    double idle_ns = state.wait_ns;  // an engine that runs one instruction at a time is idle
    if (engine == Engine::kTensor) {
      // Not while other PE tiles run, nor once this instruction's LoadStationary started.
      const sc_time own_start = std::min(std::max(state.ls_start, state.engine_available), start);
      const sc_time wait_begin = std::max(state.engine_available, item.pushed_at);
      const sc_time wait_end = wait_begin + ns(state.wait_ns);
      if (tensor_busy_before > wait_begin || own_start < wait_end) {
        idle_ns = ticks_to_ns(idle_wait_ticks(wait_begin.value(), wait_end.value(),
                                              tensor_busy_before.value(), own_start.value()));
      }
    }
    engine_stats.wait_ns_by_producer[static_cast<std::size_t>(state.waited_on)] += idle_ns;
  }
  ++stats_.instructions;
  engine_free_at_[unit] = end;
  last_id_on_engine_[unit] = item.id;

  if (observer_) {
    InstructionTiming timing;
    timing.instruction = &instruction;
    timing.start_ns = slice_start_ns;
    timing.end_ns = to_ns(end);
    timing.visible_ns = to_ns(visible);
    timing.wait_ns = state.wait_ns;
    timing.waited_on = state.waited_on;
    timing.waited_on_sequence = state.waited_on_id;
    timing.lane = state.lane;
    observer_(timing);
  }
  if (completes_later) {
    std::uint32_t index;
    if (dma_free_slots_.empty()) {
      index = static_cast<std::uint32_t>(dma_pending_.size());
      dma_pending_.emplace_back();
    } else {
      index = dma_free_slots_.back();
      dma_free_slots_.pop_back();
    }
    queue.swap_front(dma_pending_[index].item);  // `item` now lives in the pending slot
    dma_pending_[index].issued = end;
    consider_dma(index);
  } else {
    finish(record, engine, end, visible);
  }
  queue.pop_front();
  if (dispatcher_waits_for_queue_ == unit) {
    // The dispatcher would run now, at this time: it runs here, without a process switch.
    dispatcher_waits_for_queue_ = kSequencers;
    dispatch();
  }
}

}  // namespace trnsim::core
