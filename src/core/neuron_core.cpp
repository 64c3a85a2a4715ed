#include "core/neuron_core.hpp"

#include <algorithm>
#include <bit>
#include <exception>

#include "core/engines/data_path_engines.hpp"
#include "core/engines/sync_engine.hpp"
#include "core/engines/tensor_engine.hpp"
#include "util/sim_time.hpp"

namespace trnsim::core {

using EngineKind = kernel::Engine;
using kernel::Instruction;
using kernel::Opcode;
using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;

namespace {

/// The engine that executes (or, for DMAs, triggers) an instruction.
std::size_t engine_of(const Instruction& instruction) {
  return static_cast<std::size_t>(
      InstructionSource::stream_engine(instruction.engine, instruction.dma_trigger));
}

}  // namespace

NeuronCore::NeuronCore(sc_core::sc_module_name name, const config::Params& params,
                       std::uint32_t pid, std::unique_ptr<InstructionSource> source,
                       DmaBackend& dma, CollectiveBackend* collectives, BarrierHub* barrier,
                       InstructionObserver observer, bool may_run_ahead, ExecuteHook execute,
                       RunGroup* run_group)
    : sc_module(name),
      params_(params),
      pid_(pid),
      source_(std::move(source)),
      barrier_(barrier),
      observer_(std::move(observer)),
      execute_(std::move(execute)),
      semaphore_latency_(sim_time::setup_from_ns(params.sequencer.semaphore_latency_ns)),
      issue_time_(sim_time::from_ns(params.sequencer.issue_ns)),
      max_in_flight_(static_cast<std::size_t>(
          std::clamp<int>(params.sequencer.max_in_flight_instructions, 1, kMaxInFlight))),
      run_ahead_(may_run_ahead &&
                 (barrier == nullptr || barrier->cores() == 1 || run_group != nullptr)),
      run_group_(may_run_ahead ? run_group : nullptr) {
  if (run_group_ != nullptr) run_group_->members.push_back(this);
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
  const std::uint32_t used = source_->engines_used();
  for (const auto& engine : engines_) engine->set_used((used >> engine->unit() & 1u) != 0);
  // A program without instructions is walked to its end all the same.
  walk_without_demand_ = used == 0;
}

NeuronCore::~NeuronCore() = default;

void NeuronCore::fail(std::exception_ptr error) {
  error_ = std::move(error);
  sc_core::sc_stop();
}

void NeuronCore::time_moved_back(const sc_time& real) {
  fail(std::make_exception_ptr(
      std::logic_error("core " + std::to_string(pid_) + ": a process ran at " +
                       std::to_string(sim_time::to_ns(real)) + " ns, before the core's own time, " +
                       std::to_string(sim_time::to_ns(now_)) + " ns (NeuronCore::run_ahead())")));
}

void NeuronCore::dispatcher_process() {
  enter();
  kernel_wake_ran(kDispatcherWake);
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

void NeuronCore::forget_wake(std::size_t waker) {
  pending_wakes_ &= ~(1u << waker);
}

std::size_t NeuronCore::earliest_wake() const {
  std::uint32_t pending = pending_wakes_;
  if (pending == 0) return kWakers;
  auto next = static_cast<std::size_t>(std::countr_zero(pending));
  std::uint64_t next_at = wakes_[next].at.value();
  std::uint64_t next_order = wakes_[next].order;
  for (pending &= pending - 1; pending != 0; pending &= pending - 1) {
    const auto waker = static_cast<std::size_t>(std::countr_zero(pending));
    const std::uint64_t at = wakes_[waker].at.value();
    if (at < next_at || (at == next_at && wakes_[waker].order < next_order)) {
      next = waker;
      next_at = at;
      next_order = wakes_[waker].order;
    }
  }
  return next;
}

void NeuronCore::run_ahead(bool may_move) {
  if (may_move && run_group_ != nullptr && run_group_ahead()) return;
  const sc_time real = sc_core::sc_time_stamp();
  // The kernel's next activity, as a delay from `real`; zero when something else runs now. It
  // changes only when something notifies the kernel: engines and the dispatcher do not while
  // running ahead, the DMA dispatcher may (a backend's own events), so it is looked up again
  // after that.
  sc_time gap;
  bool gap_known = false;
  while (may_move && pending_wakes_ != 0 && !error_) {
    const std::size_t next = earliest_wake();
    // Anything else pending at or before then (a DMA or collective model's process, this
    // core's processes notified before) runs first: the kernel orders it.
    const sc_time at = wakes_[next].at;
    if (!gap_known) {
      gap = sc_core::sc_time_to_pending_activity(sc_core::sc_get_curr_simcontext());
      gap_known = true;
    }
    if (gap <= at - real) {
      // The kernel's next activity may be this core's own wake-ups notified to it before: they
      // come back here, and the kernel is asked again.
      if (kernel_wakes_ == 0) break;
      reclaim_kernel_wakes();
      gap_known = false;
      continue;
    }
    now_ = at;
    forget_wake(next);
    ++wakes_run_ahead_;
    if (next == kDmaDispatcherWake) gap_known = false;
    if (run_wake(next)) break;
  }
  notify_pending(real);
}

bool NeuronCore::run_wake(std::size_t waker) {
  if (waker < kEngines) {
    engines_[waker]->run();
  } else if (waker == kDispatcherWake) {
    // As an immediate notification would, it cancels a timed one (only run_ahead() makes
    // those, and reclaim_kernel_wakes() takes them back).
    if ((kernel_wakes_ >> kDispatcherWake & 1u) != 0) {
      dispatcher_wake_.cancel();
      kernel_wakes_ &= ~(1u << kDispatcherWake);
    }
    dispatch();
  } else {
    return dma_dispatcher_->run_ahead_step();
  }
  return false;
}

bool NeuronCore::run_group_ahead() {
  const std::vector<NeuronCore*>& members = run_group_->members;
  for (const NeuronCore* member : members) {
    if (member->started_processes_ != kAllWakers || member->immediate_wakes_ != 0) return false;
  }
  DmaBackend& dma = *run_group_->dma;
  const std::uint32_t group = run_group_->id;
  for (NeuronCore* member : members) {
    if (member->kernel_wakes_ != 0) member->reclaim_kernel_wakes();
  }
  for (;;) {
    // The earliest wake-up of any member (ties: the first core; one core's, the first made).
    NeuronCore* core = nullptr;
    std::size_t waker = kWakers;
    sc_time at;
    bool failed = false;
    for (NeuronCore* member : members) {
      failed = failed || member->error_ != nullptr;
      if (member->pending_wakes_ == 0) continue;
      const std::size_t next = member->earliest_wake();
      if (core == nullptr || member->wakes_[next].at < at) {
        core = member;
        waker = next;
        at = member->wakes_[next].at;
      }
    }
    if (failed) break;
    // Every wake-up of the time the backend holds DMAs of has run: settle them.
    const sc_time settles = dma.settles_at(group);
    if (settles != sc_core::sc_max_time() && (core == nullptr || settles < at)) {
      for (NeuronCore* member : members) {
        member->now_ = settles;  // each member's wake-ups so far were at or before it
        ++member->activation_depth_;
      }
      dma.settle(group);
      for (NeuronCore* member : members) --member->activation_depth_;
      continue;
    }
    if (core == nullptr) break;
    core->now_ = at;
    core->forget_wake(waker);
    ++core->wakes_run_ahead_;
    ++core->activation_depth_;
    const bool needs_kernel = core->run_wake(waker);
    --core->activation_depth_;
    if (needs_kernel) break;
  }
  const sc_time real = sc_core::sc_time_stamp();
  for (NeuronCore* member : members) member->notify_pending(real);
  return true;
}

void NeuronCore::notify_pending(const sc_time& real) {
  // The rest goes to the kernel, earliest (and first made) first: at the simulation time as an
  // immediate notification, as the process would have made it, later as a timed one.
  while (pending_wakes_ != 0) {
    const std::size_t next = earliest_wake();
    const sc_time at = wakes_[next].at;
    forget_wake(next);
    ++wakes_through_kernel_;
    sc_core::sc_event& event = event_of(next);
    const std::uint32_t bit = 1u << next;
    if (at == real) {
      event.notify();  // cancels a timed notification
      kernel_wakes_ &= ~bit;
      immediate_wakes_ |= bit;
    } else {
      if (next == kDmaDispatcherWake) {
        event.cancel();  // it sleeps until its next ready time
        kernel_wakes_ &= ~bit;
      }
      event.notify(at - real);  // an earlier timed notification stands
      if ((kernel_wakes_ & bit) == 0 || at < kernel_wake_at_[next]) kernel_wake_at_[next] = at;
      kernel_wakes_ |= bit;
    }
  }
}

void NeuronCore::reclaim_kernel_wakes() {
  for (std::size_t waker = 0; waker < kWakers; ++waker) {
    if ((kernel_wakes_ >> waker & 1u) == 0) continue;
    event_of(waker).cancel();
    wake_later(waker, kernel_wake_at_[waker]);
  }
  kernel_wakes_ = 0;
}

void NeuronCore::retire_due(const sc_time& now) {
  std::pair<sc_time, std::uint64_t> due;
  while (pending_retire_.pop_first_not_after(now, due)) {
    const std::uint64_t id = due.second;
    tracker_.retire(id);
    slot(id).id = kNoId;
    in_flight_.release(slot_of(id));
  }
}

bool NeuronCore::engines_want_instructions() const {
  for (const auto& engine : engines_) {
    if (engine->wants_instructions()) return true;
  }
  return false;
}

void NeuronCore::dispatch() {
  dispatching_ = true;
  for (;;) {
    if (!staged_) {
      // Usually the engine that took the last instruction still wants more: no need to ask
      // the others.
      if (!(last_fed_ != nullptr && last_fed_->wants_instructions()) &&
          !engines_want_instructions() && !walk_without_demand_) {
        dispatcher_waits_for_demand_ = true;  // an engine calls instructions_wanted()
        break;
      }
      try {
        if (!source_->next(staging_.instruction)) {
          dispatch_done_ = true;
          dispatching_ = false;
          for (const auto& engine : engines_) engine->run_if_waiting();
          return;  // never woken again
        }
      } catch (...) {
        fail(std::current_exception());
        break;
      }
      staged_ = true;
      staging_.id = in_flight_id(next_sequence_++, 0);
    }
    const sc_time now = now_;

    retire_until(now);
    if (!in_flight_.has_free() && in_flight_.size() >= max_in_flight_) {
      // Every record is taken: wait until the first can retire (finish() moves the wake-up
      // earlier for a record that gets its times meanwhile).
      dispatcher_waits_for_retirement_ = true;
      if (!pending_retire_.empty()) {
        wake(kDispatcherWake, pending_retire_.top().first);
      }
      break;
    }
    if (dispatcher_waits_for_retirement_) {
      dispatcher_waits_for_retirement_ = false;
      forget_wake(kDispatcherWake);  // the wake-up at the first retirement
    }
    const std::uint32_t slot_index = in_flight_.acquire();
    const std::uint64_t id = in_flight_id(sequence_of(staging_.id), slot_index);

    const Instruction& staged = staging_.instruction;
    Engine& engine = *engines_[engine_of(staged)];
    dependency_scratch_.clear();
    const std::uint32_t stream = engine.prepare_dispatched(staging_);
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
      for (const InFlight& earlier : in_flight_) {
        if (earlier.id != kNoId) {
          dependency_scratch_.push_back({earlier.id, deps::DependencyKind::kReadAfterWrite});
        }
      }
      std::sort(dependency_scratch_.begin(), dependency_scratch_.end(),
                [](const deps::Dependency& a, const deps::Dependency& b) {
                  return a.producer < b.producer;
                });
      fence_id_ = id;
    }
    QueuedInstruction& item = staging_;
    item.id = id;
    item.dependencies.clear();
    for (const deps::Dependency& dependency : dependency_scratch_) {
      item.dependencies.push_back(dependency.producer);
    }
    InFlight& record = in_flight_[slot_index];
    record.id = id;
    record.scheduled = false;
    record.engine = staged.engine;
    staged_ = false;
    engine.accept(staging_);
    last_fed_ = &engine;
  }
  dispatching_ = false;
}

void NeuronCore::dispatch_on_demand() {
  // The dispatcher would run now, at this time: it runs here, without a process switch.
  dispatcher_waits_for_demand_ = false;
  dispatch();
}

void NeuronCore::engine_finished() {
  if (--running_engines_ == 0) {
    finished_ = true;
    dma_dispatcher_->all_issued();
  }
}

void NeuronCore::finish(InFlight& record, EngineKind producer, const sc_time& end,
                        const sc_time& visible) {
  record.engine = producer;
  record.end = end;
  record.visible = visible;
  record.scheduled = true;
  if (record.waiting_engines != 0) {
    std::uint32_t waiting = record.waiting_engines;
    record.waiting_engines = 0;
    for (; waiting != 0; waiting &= waiting - 1) {
      engines_[static_cast<std::size_t>(std::countr_zero(waiting))]->run_if_waiting();
    }
  }
  dma_dispatcher_->producer_scheduled(record);
  pending_retire_.push({visible + semaphore_latency_, record.id});
  latest_visible_ = std::max(latest_visible_, visible);
  if (dispatcher_waits_for_retirement_) {
    // Every in-flight record is taken: the program walk goes on exactly when the first record
    // can retire (now, or a wake-up then; an earlier wake-up stands), so where it goes on does
    // not depend on which other events happen to come between.
    if (!dispatching_ && pending_retire_.top().first <= now_) {
      dispatch();
    } else {
      wake(kDispatcherWake, pending_retire_.top().first);
    }
  }
}

}  // namespace trnsim::core
