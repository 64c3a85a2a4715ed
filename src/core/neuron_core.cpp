#include "core/neuron_core.hpp"

#include <algorithm>
#include <exception>

#include "core/core_time.hpp"
#include "core/engines/data_path_engines.hpp"
#include "core/engines/sync_engine.hpp"
#include "core/engines/tensor_engine.hpp"

namespace trnsim::core {

using EngineKind = kernel::Engine;
using kernel::Instruction;
using kernel::Opcode;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

namespace {

constexpr std::size_t kInFlightCapacity = 4096;  // power of two; bounds run-ahead, not timing

/// The engine that executes (or, for DMAs, triggers) an instruction.
std::size_t engine_of(const Instruction& instruction) {
  if (instruction.engine == EngineKind::kDma)
    return static_cast<std::size_t>(instruction.dma_trigger);
  if (instruction.engine == EngineKind::kCollective)
    return static_cast<std::size_t>(EngineKind::kSync);
  return static_cast<std::size_t>(instruction.engine);
}

}  // namespace

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
      run_ahead_(may_run_ahead && (barrier == nullptr || barrier->cores() == 1)) {
  stats_.pid = pid;
  dependency_scratch_.reserve(64);
  // Processes are created in this order (the dispatcher, the DMA dispatcher, the engines in
  // kernel::Engine order), which is the order they first run in.
  sc_core::sc_spawn_options dispatcher;
  dispatcher.spawn_method();
  dispatcher.set_sensitivity(&dispatcher_wake_);
  sc_core::sc_spawn(sc_bind(&NeuronCore::dispatcher_process, this), "dispatcher", &dispatcher);
  dma_dispatcher_ = std::make_unique<DmaDispatcher>("dma", *this, dma, collectives);
  // NC-v2 shared ports: VectorE/GpSimdE on SBUF, VectorE/ScalarE on PSUM.
  SharedPort* sbuf_port = nullptr;
  SharedPort* psum_port = nullptr;
  if (params.vector.shares_sbuf_port_with_gpsimd) sbuf_port = &shared_sbuf_port_;
  if (params.vector.shares_psum_port_with_scalar) psum_port = &shared_psum_port_;
  engines_[static_cast<std::size_t>(EngineKind::kTensor)] =
      std::make_unique<TensorEngine>("tensor", *this);
  engines_[static_cast<std::size_t>(EngineKind::kVector)] =
      std::make_unique<VectorEngine>("vector", *this, sbuf_port, psum_port);
  engines_[static_cast<std::size_t>(EngineKind::kScalar)] =
      std::make_unique<ScalarEngine>("scalar", *this, psum_port);
  engines_[static_cast<std::size_t>(EngineKind::kGpSimd)] =
      std::make_unique<GpSimdEngine>("gpsimd", *this, sbuf_port);
  engines_[static_cast<std::size_t>(EngineKind::kSync)] =
      std::make_unique<SyncEngine>("sync", *this);
}

NeuronCore::~NeuronCore() = default;

void NeuronCore::fail(std::exception_ptr error) {
  error_ = std::move(error);
  sc_core::sc_stop();
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

void NeuronCore::notify_wake(std::size_t waker, const sc_time& at) {
  ++wakes_through_kernel_;
  if (at == now_) {
    event_of(waker).notify();
  } else {
    event_of(waker).notify(at - sc_core::sc_time_stamp());
  }
}

sc_core::sc_event& NeuronCore::event_of(std::size_t waker) {
  if (waker < kEngines) return engines_[waker]->wake_event();
  return waker == kDispatcherWake ? dispatcher_wake_ : dma_dispatcher_->wake_event();
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
  // changes only when something notifies the kernel: engines and the dispatcher do not while
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
    if (next < kEngines) {
      engines_[next]->run();
    } else if (next == kDispatcherWake) {
      dispatcher_wake_.cancel();  // as an immediate notification would: it runs now
      dispatch();
    } else {
      gap_known = false;
      if (dma_dispatcher_->run_ahead_step()) break;
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
      if (next == kDmaDispatcherWake) event.cancel();  // it sleeps until its next ready time
      event.notify(at - real);
    }
  }
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
          for (const auto& engine : engines_) engine->run_if_waiting();
          return;  // never woken again
        }
      } catch (...) {
        fail(std::current_exception());
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
    const std::size_t unit = engine_of(staged);
    Engine& engine = *engines_[unit];
    InstructionQueue& queue = engine.queue();
    if (queue.full()) {
      dispatcher_waits_for_queue_ = unit;  // its engine calls queue_popped() when it pops
      return;
    }

    retire_until(now);
    dependency_scratch_.clear();
    const std::uint32_t stream = engine.prepare(*staging_);
    tracker_.add(id, {staged.reads.data(), staged.num_reads},
                 {staged.writes.data(), staged.num_writes}, dependency_scratch_, stream);
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
    QueuedInstruction& item = *staging_;
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
    // Only an engine with an empty queue waits for work.
    if (was_empty) engine.run_if_waiting();
  }
}

void NeuronCore::queue_popped(std::size_t unit) {
  if (dispatcher_waits_for_queue_ != unit) return;
  // The dispatcher would run now, at this time: it runs here, without a process switch.
  dispatcher_waits_for_queue_ = kEngines;
  dispatch();
}

void NeuronCore::engine_finished() {
  if (--running_engines_ == 0) finished_ = true;
}

bool NeuronCore::dependencies_known(const QueuedInstruction& item, EngineKind consumer,
                                    sc_time& ready, EngineKind& last_engine,
                                    std::uint64_t& last_id) {
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

std::optional<std::uint64_t> NeuronCore::unscheduled_producer(const QueuedInstruction& item) {
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

sc_time NeuronCore::other_engines_ready(const QueuedInstruction& item, EngineKind consumer) {
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

void NeuronCore::run_engine_when_scheduled(std::uint64_t producer, std::size_t unit) {
  slot(producer).waiting_engines |= static_cast<std::uint8_t>(1u << unit);
}

void NeuronCore::finish(InFlight& record, EngineKind producer, const sc_time& end,
                        const sc_time& visible) {
  record.engine = producer;
  record.end = end;
  record.visible = visible;
  record.scheduled = true;
  if (record.id == dispatcher_waits_for_id_) {
    dispatcher_waits_for_id_ = kNoId;
    wake(kDispatcherWake, now_);
  }
  if (record.waiting_engines != 0) {
    const std::uint8_t waiting = record.waiting_engines;
    record.waiting_engines = 0;
    for (std::size_t unit = 0; unit < kEngines; ++unit) {
      if ((waiting >> unit & 1u) != 0) engines_[unit]->run_if_waiting();
    }
  }
  dma_dispatcher_->producer_scheduled(record);
  pending_retire_.push({visible + semaphore_latency_, record.id});
  stats_.end_ns = std::max(stats_.end_ns, to_ns(visible));
}

}  // namespace trnsim::core
