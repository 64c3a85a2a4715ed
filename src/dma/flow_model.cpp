#include "dma/flow_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "util/log.hpp"
#include "util/sim_time.hpp"

namespace trnsim::dma {

using kernel::MemoryKind;
using sim_time::kNeverNs;

FlowLevelDma::FlowLevelDma(sc_core::sc_module_name name, const config::Params& params,
                           std::uint32_t cores)
    : sc_core::sc_module(name),
      params_(params),
      cores_(std::max<std::uint32_t>(1, cores)),
      engines_per_core_(static_cast<std::uint32_t>(std::max(1, params.dma.engines_per_core))),
      queues_per_engine_(static_cast<std::uint32_t>(std::max(1, params.dma.queues_per_engine))),
      strict_priority_(params.dma.arbitration == config::DmaArbitration::strict_priority),
      priority_classes_(static_cast<std::uint32_t>(std::max(1, params.dma.priority_classes))),
      layout_(params, cores_),
      lookahead_ns_(std::max(params.dma.fixed_cost_ns, 0.0)),
      stack_bytes_per_ns_(refreshed_stack_bytes_per_ns(params.hbm)),
      depth_bytes_((engines_per_core_ - 1) *
                   static_cast<double>(std::max(1, params.dma.packet_bytes))),
      descriptors_per_ns_(
          params.dma.descriptor_overhead_ns > 0 ? 1.0 / params.dma.descriptor_overhead_ns : 0.0),
      prefetch_limit_(static_cast<double>(std::max(1, params.dma.descriptor_prefetch))),
      never_(sc_core::sc_max_time()),
      core_stats_(cores_),
      on_chip_(cores_),
      generators_(params.dma, cores_),
      trace_(log::debug_enabled("dma")) {
  sim_time::scale();  // before any conversion (util/sim_time.hpp)
  stack_stats_.resize(layout_.stacks());
  for (CoreDmaStats& stats : core_stats_) stats.queues.resize(queues_per_engine_);
  partition(false);
}

void FlowLevelDma::partition(bool by_home_stack) {
  by_home_stack_ = by_home_stack;
  std::vector<std::vector<std::uint32_t>> members(by_home_stack ? layout_.stacks() : 1);
  partition_of_.assign(cores_, 0);
  for (std::uint32_t pid = 0; pid < cores_; ++pid) {
    partition_of_[pid] = by_home_stack ? layout_.home(pid) : 0;
    members[partition_of_[pid]].push_back(pid);
  }
  partitions_.clear();
  partitions_.reserve(members.size());
  for (std::vector<std::uint32_t>& pids : members) partitions_.emplace_back(*this, std::move(pids));
}

void FlowLevelDma::home_stacks_only() {
  if (!by_home_stack_) partition(true);
}

std::uint32_t FlowLevelDma::isolation_group(std::uint32_t pid) const {
  return by_home_stack_ && pid < cores_ ? partition_of_[pid] : kNoIsolation;
}

sc_core::sc_time FlowLevelDma::settles_at(std::uint32_t group) const {
  return group < partitions_.size() ? partitions_[group].settles_at() : never_;
}

void FlowLevelDma::settle(std::uint32_t group) {
  if (group >= partitions_.size()) return;
  // Only this partition's time moved: a standing request at or before it stays (one that comes
  // too early finds nothing due and asks again).
  Partition& partition = partitions_[group];
  partition.settle();
  if (partition.settles_at() < asked_for()) ask_for(partition.settles_at());
}

void FlowLevelDma::time_step_ended() {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  for (Partition& partition : partitions_) {
    if (partition.settles_at() <= now) partition.settle();
  }
  request_settling();
}

void FlowLevelDma::request_settling() {
  sc_core::sc_time earliest = never_;
  for (const Partition& partition : partitions_) {
    earliest = std::min(earliest, partition.settles_at());
  }
  ask_for(earliest);
}

double FlowLevelDma::core_peak_bytes_per_ns() const {
  return std::min(engines_per_core_ * params_.dma.engine_bandwidth_gbps,
                  params_.dma.core_bandwidth_gbps);
}

void FlowLevelDma::submit(std::uint32_t pid, std::uint64_t id,
                          const kernel::Instruction& instruction, core::DmaClient& client) {
  submit_ahead(sc_core::sc_time_stamp(), pid, id, instruction, client);
}

void FlowLevelDma::compute_shape(const kernel::Instruction& instruction, Shape& shape) const {
  const TransferPlan plan = plan_transfer(instruction, params_, 0, 0);
  shape.rate = params_.dma.engine_bandwidth_gbps * plan.efficiency;
  shape.row_bytes = static_cast<double>(plan.inner) * plan.moved_element_bytes;
  const double descriptor_bytes =
      plan.descriptors_per_block > 0
          ? shape.row_bytes / static_cast<double>(plan.descriptors_per_block)
          : shape.row_bytes;
  shape.packet =
      std::max(1.0, std::min(descriptor_bytes, static_cast<double>(params_.dma.packet_bytes)));
  shape.latency_ns = hbm_tail_latency_ns(params_.hbm, instruction.src().memory == MemoryKind::kHbm,
                                         instruction.dst().memory == MemoryKind::kHbm, shape.packet,
                                         shape.packet / shape.rate);
  shape.outer = plan.outer;
  shape.rows = plan.rows;
  shape.rows_per_engine = plan.rows_per_engine;
  shape.descriptors_per_block = plan.descriptors_per_block;
  shape.bytes = plan.bytes;
  shape.engines = plan.engines;
  shape.descriptors = 0;
  shape.busy_ns.assign(engines_per_core_, 0.0);
  bool even = engines_per_core_ > 1;
  const auto rows_of = [&](std::uint32_t e) {
    return plan.outer > 0 ? plan.end_row(e) - plan.first_row(e) : 0;
  };
  for (std::uint32_t e = 0; e < engines_per_core_; ++e) {
    shape.busy_ns[e] = static_cast<double>(plan.outer * rows_of(e)) * shape.row_bytes / shape.rate;
    shape.descriptors += plan.descriptors_of(e);
    even = even && rows_of(e) == rows_of(0) && plan.descriptors_of(e) == plan.descriptors_of(0);
  }
  shape.even = even;
}

void FlowLevelDma::submit_ahead(const sc_core::sc_time& submitted, std::uint32_t pid,
                                std::uint64_t id, const kernel::Instruction& instruction,
                                core::DmaClient& client) {
  const double now = sim_time::to_ns(submitted);
  pid = std::min(pid, cores_ - 1);
  const Shape& shape = shapes_.get(
      instruction,
      [this](const kernel::Instruction& dma, Shape& computed) { compute_shape(dma, computed); });
  const kernel::AccessPattern& src = instruction.src();
  const kernel::AccessPattern& dst = instruction.dst();
  Submitted dma;
  dma.client = &client;
  dma.id = id;
  dma.pid = pid;
  dma.queue = instruction.dma_queue % queues_per_engine_;
  dma.issue_ns = now;
  dma.fetchable_ns = generators_.generate(pid, instruction, now);
  const double overhead = params_.dma.descriptor_overhead_ns;
  dma.ready_ns = dma.fetchable_ns + std::max(params_.dma.fixed_cost_ns, overhead);
  if (observed()) dma.event = core::dma_event_of(pid, id, instruction);

  const bool reads_hbm = src.memory == MemoryKind::kHbm;
  const bool writes_hbm = dst.memory == MemoryKind::kHbm;
  dma.read_stack = reads_hbm ? static_cast<std::int32_t>(layout_.of_operand(src.space, pid)) : -1;
  dma.write_stack = writes_hbm ? static_cast<std::int32_t>(layout_.of_operand(dst.space, pid)) : -1;
  if (reads_hbm) stack_stats_[static_cast<std::size_t>(dma.read_stack)].read += src.bytes();
  if (writes_hbm) stack_stats_[static_cast<std::size_t>(dma.write_stack)].write += dst.bytes();
  if (observed()) {
    dma.event.hbm_stack = reads_hbm && writes_hbm && dma.read_stack != dma.write_stack ? -1
                          : reads_hbm ? dma.read_stack
                                      : dma.write_stack;
  }
  dma.rate = shape.rate;
  dma.row_bytes = shape.row_bytes;
  dma.packet = shape.packet;
  dma.latency_ns = shape.latency_ns;
  dma.outer = shape.outer;
  dma.rows = shape.rows;
  dma.rows_per_engine = shape.rows_per_engine;
  dma.descriptors_per_block = shape.descriptors_per_block;
  dma.even = shape.even;

  CoreDmaStats& stats = core_stats_[pid];
  for (const double busy : shape.busy_ns) stats.engine_busy_ns += busy;
  stats.descriptors += shape.descriptors;
  if (trace_) [[unlikely]] {
    trace_plan("flow", pid, id, shape.bytes, shape.engines, shape.descriptors, now, dma.ready_ns);
  }
  ++stats.transfers;
  stats.bytes += shape.bytes;
  QueueStats& queue_stats = stats.queues[dma.queue];
  ++queue_stats.transfers;
  queue_stats.bytes += shape.bytes;
  OnChipBytes& on_chip = on_chip_[pid];
  if (src.memory == MemoryKind::kSbuf) on_chip.sbuf_read += src.bytes();
  if (src.memory == MemoryKind::kPsum) on_chip.psum_read += src.bytes();
  if (dst.memory == MemoryKind::kSbuf) on_chip.sbuf_write += dst.bytes();
  if (dst.memory == MemoryKind::kPsum) on_chip.psum_write += dst.bytes();

  partitions_[partition_of_[pid]].hold(submitted, std::move(dma));
  if (submitted < asked_for()) ask_for(submitted);
}

FlowLevelDma::Partition::Partition(FlowLevelDma& model, std::vector<std::uint32_t> pids)
    : model_(model),
      pids_(std::move(pids)),
      held_at_(model.never_),
      wake_at_(model.never_),
      engines_(pids_.size() * model.engines_per_core_),
      core_caps_(pids_.size(), Bucket{model.params_.dma.core_bandwidth_gbps, 0, 0}),
      read_ports_(pids_.size(), Bucket{model.params_.dma.hbm_port_bandwidth_gbps, 0, 0}),
      write_ports_(pids_.size(), Bucket{model.params_.dma.hbm_port_bandwidth_gbps, 0, 0}),
      core_touched_(pids_.size(), false),
      stack_load_(model.layout_.stacks(), 0.0),
      core_items_(pids_.size(), 0),
      lockstep_(pids_.size(), false) {
  for (std::vector<Bucket>* caps : {&core_caps_, &read_ports_, &write_ports_}) {
    for (Bucket& bucket : *caps) bucket.credit = model.depth_bytes_;
  }
  for (EngineState& engine : engines_) {
    engine.queues.resize(model.queues_per_engine_);
    engine.heads.assign(model.queues_per_engine_, 0);
    engine.queue_done_ns.assign(model.queues_per_engine_, 0.0);
  }
}

std::uint32_t FlowLevelDma::Partition::core_of(std::uint32_t pid) const {
  return static_cast<std::uint32_t>(std::lower_bound(pids_.begin(), pids_.end(), pid) -
                                    pids_.begin());
}

sc_core::sc_time FlowLevelDma::Partition::settles_at() const {
  return std::min(held_at_, wake_at_);
}

void FlowLevelDma::Partition::hold(const sc_core::sc_time& now, Submitted&& dma) {
  // The end of an earlier time step has always come before a later submission; should it not
  // have, its DMAs join first.
  while (!held_.empty() && held_at_ != now) settle();
  held_at_ = now;
  held_.push_back(std::move(dma));
}

void FlowLevelDma::Partition::settle() {
  const sc_core::sc_time now = settles_at();
  if (now == model_.never_) return;
  const double now_ns = sim_time::to_ns(now);
  if (held_at_ == now) {
    // In core order, one core's DMAs in the order it submitted them. What the completions
    // below make the cores submit is held anew.
    std::vector<Submitted>& joining = joining_;  // held_ takes its (empty) buffer
    joining.swap(held_);
    held_at_ = model_.never_;
    const auto by_core = [](const Submitted& a, const Submitted& b) { return a.pid < b.pid; };
    if (!std::is_sorted(joining.begin(), joining.end(), by_core)) {
      std::stable_sort(joining.begin(), joining.end(), by_core);
    }
    for (Submitted& dma : joining) join(dma);
    joining.clear();
    schedule_wake(now, now_ns);
  }
  if (wake_at_ <= now) wake(now);
}

void FlowLevelDma::Partition::join(Submitted& dma) {
  const std::uint32_t core = core_of(dma.pid);
  const std::uint32_t engines_per_core = model_.engines_per_core_;
  const std::uint32_t slot = transfers_.acquire();
  Transfer& transfer = transfers_[slot];
  transfer = Transfer{};
  transfer.client = dma.client;
  transfer.id = dma.id;
  transfer.pid = dma.pid;
  transfer.queue = dma.queue;
  transfer.issue_ns = dma.issue_ns;
  transfer.first_data_ns = sim_time::kNeverNs;
  transfer.latency_ns = dma.latency_ns;
  if (model_.observed()) transfer.event = dma.event;

  if (core_items_[core] == 0) {
    lockstep_[core] = dma.even;
  } else if (lockstep_[core] && !dma.even) {
    split_lanes(core);
  }
  const double overhead = model_.params_.dma.descriptor_overhead_ns;
  const std::uint32_t lanes = lockstep_[core] ? engines_per_core : 1;
  for (std::uint32_t e = 0; e < engines_per_core; e += lanes) {
    const double bytes = static_cast<double>(dma.outer * dma.rows_of(e)) * dma.row_bytes;
    const auto descriptors =
        static_cast<double>(dma.outer * dma.rows_of(e) * dma.descriptors_per_block);
    const std::uint32_t item_slot = new_item();
    Item& item = items_[item_slot];
    item.transfer = slot;
    item.engine = core * engines_per_core + e;
    item.core = core;
    item.queue = dma.queue;
    item.priority_class = model_.class_of(dma.queue);
    item.lanes = lanes;
    item.ready_ns = dma.ready_ns;
    item.remaining = bytes;
    item.packet = dma.packet;
    item.data_ns_per_byte = 1.0 / dma.rate;
    item.descriptors = bytes > 0 && overhead > 0 ? descriptors : 0.0;
    item.descriptors_per_byte = item.descriptors > 0 ? descriptors / bytes : 0.0;
    item.descriptor_ns_per_byte = item.descriptors_per_byte * overhead;
    item.fetchable_ns = dma.fetchable_ns;
    item.read_stack = dma.read_stack;
    item.write_stack = dma.write_stack;
    ++transfer.pending;
    ++core_items_[core];
    EngineState& engine = engines_[item.engine];
    std::vector<std::uint32_t>& fifo = engine.queues[dma.queue];
    fifo.push_back(item_slot);
    if (fifo.size() - engine.heads[dma.queue] == 1) make_head_pending(item.engine, dma.queue);
    if (item.descriptors > 0) add_descriptors(item_slot, dma.fetchable_ns);
  }
}

void FlowLevelDma::Partition::wake(const sc_core::sc_time& now) {
  const double now_ns = sim_time::to_ns(now);
  wake_at_ = model_.never_;
  advance(now_ns + model_.lookahead_ns_ + sim_time::ns_per_tick());
  schedule_wake(now, now_ns);
}

void FlowLevelDma::Partition::schedule_wake(const sc_core::sc_time& now, double now_ns) {
  const double next = next_event_ns();
  if (next < sim_time::kNeverNs) {
    wake_at_ = std::min(wake_at_, now + sim_time::from_ns(std::max(0.0, next - now_ns)));
  }
}

std::uint32_t FlowLevelDma::Partition::new_item() {
  const std::uint32_t slot = items_.acquire();
  items_[slot] = Item{};
  return slot;
}

void FlowLevelDma::Partition::split_lanes(std::uint32_t core) {
  lockstep_[core] = false;
  const std::uint32_t first = core * model_.engines_per_core_;
  // Every engine's descriptor unit is where the leader's is.
  for (std::uint32_t e = 1; e < model_.engines_per_core_; ++e) {
    EngineState& engine = engines_[first + e];
    const EngineState& leader = engines_[first];
    engine.prefetched = leader.prefetched;
    engine.outstanding = leader.outstanding;
    engine.consumed_per_ns = leader.consumed_per_ns;
    engine.caught_up_ns = leader.caught_up_ns;
    engine.fetched_items = leader.fetched_items;
    if (leader.prefetching && !engine.prefetching) {
      engine.prefetching = true;
      prefetching_.push_back(first + e);
    }
  }
  for (std::uint32_t queue = 0; queue < model_.queues_per_engine_; ++queue) {
    const EngineState& leader = engines_[first];
    const std::vector<std::uint32_t> fifo(leader.queues[queue].begin() + leader.heads[queue],
                                          leader.queues[queue].end());
    const double queue_done = leader.queue_done_ns[queue];
    for (std::uint32_t e = 1; e < model_.engines_per_core_; ++e) {
      EngineState& engine = engines_[first + e];
      engine.queue_done_ns[queue] = queue_done;
      for (const std::uint32_t original : fifo) {
        const std::uint32_t copy = new_item();
        items_[copy] = items_[original];
        Item& item = items_[copy];
        item.engine = first + e;
        item.lanes = 1;
        item.active_slot = kNone;
        ++transfers_[item.transfer].pending;
        ++core_items_[core];
        engine.queues[queue].push_back(copy);
        // Descriptors the leader counts already are counted above; the others come later.
        if (item.descriptors > 0 && item.fetchable_ns > model_ns_) {
          fetchable_.push(item.fetchable_ns, copy);
        }
        if (items_[original].active_slot != kNone) {
          item.active_slot = static_cast<std::uint32_t>(active_.size());
          active_.push_back(copy);
          ++engine.ready_queues;
        }
      }
      // A head that is not moving yet waits to become ready, as the original does.
      if (!fifo.empty() && items_[fifo.front()].active_slot == kNone) {
        make_head_pending(first + e, queue);
      }
    }
    for (const std::uint32_t original : fifo) items_[original].lanes = 1;
  }
}

void FlowLevelDma::Partition::add_descriptors(std::uint32_t index, double time_ns) {
  if (time_ns > model_ns_) {
    fetchable_.push(time_ns, index);
    return;
  }
  const Item& item = items_[index];
  EngineState& engine = engines_[item.engine];
  // A unit that had caught up would have started on these at `time_ns` (<= model_ns_: the
  // model may have run ahead of their submission by up to its lookahead).
  const bool caught_up = engine.prefetched >= engine.outstanding;
  engine.outstanding += item.descriptors;
  ++engine.fetched_items;
  if (caught_up) {
    const double idle_ns = model_ns_ - std::max(time_ns, engine.caught_up_ns);
    engine.prefetched +=
        std::max(0.0, std::min({model_.prefetch_limit_ - engine.prefetched, item.descriptors,
                                model_.descriptors_per_ns_ * idle_ns}));
  }
  if (!engine.prefetching) {
    engine.prefetching = true;
    prefetching_.push_back(item.engine);
  }
}

double FlowLevelDma::Partition::prefetch_dry_ns(const EngineState& engine) const {
  const double net_use = engine.consumed_per_ns - model_.descriptors_per_ns_;
  if (engine.prefetched <= 0 || net_use <= 0 || engine.prefetched >= engine.outstanding) {
    return sim_time::kNeverNs;
  }
  // Draining at net_use unless the data path's use catches up with the unit first (the gap
  // between outstanding and prefetched closes at the unit's rate): then both end together.
  const double dry = engine.prefetched / net_use;
  const double catch_up = (engine.outstanding - engine.prefetched) / model_.descriptors_per_ns_;
  return dry < catch_up ? model_ns_ + dry : sim_time::kNeverNs;
}

void FlowLevelDma::Partition::make_head_pending(std::uint32_t engine_index, std::uint32_t queue) {
  EngineState& engine = engines_[engine_index];
  const std::uint32_t item = engine.queues[queue][engine.heads[queue]];
  pending_.push(items_[item].ready_ns, item);
}

void FlowLevelDma::Partition::drain(Bucket& bucket, double dt_ns) const {
  bucket.credit =
      std::clamp(bucket.credit + (bucket.capacity - bucket.load) * dt_ns, 0.0, model_.depth_bytes_);
}

double FlowLevelDma::Partition::exhausted_ns(const Bucket& bucket) const {
  if (bucket.load <= bucket.capacity || bucket.credit <= 0) return sim_time::kNeverNs;
  return model_ns_ + bucket.credit / (bucket.load - bucket.capacity);
}

double FlowLevelDma::Partition::next_change_ns() const {
  double next = pending_.empty() ? sim_time::kNeverNs : std::max(pending_.top().time_ns, model_ns_);
  for (std::uint32_t core : draining_) {
    next = std::min({next, exhausted_ns(core_caps_[core]), exhausted_ns(read_ports_[core]),
                     exhausted_ns(write_ports_[core])});
  }
  if (!fetchable_.empty()) next = std::min(next, std::max(fetchable_.top().time_ns, model_ns_));
  for (std::uint32_t engine : prefetching_) {
    next = std::min(next, prefetch_dry_ns(engines_[engine]));
  }
  return next;
}

double FlowLevelDma::Partition::next_event_ns() const {
  double next = next_change_ns();
  for (std::uint32_t index : active_) {
    const Item& item = items_[index];
    if (item.rate > 0) next = std::min(next, model_ns_ + item.remaining / item.rate);
  }
  return next;
}

void FlowLevelDma::Partition::progress_to(double time_ns) {
  const double dt = time_ns - model_ns_;
  if (dt > 0) {
    for (std::uint32_t index : active_) {
      Item& item = items_[index];
      if (!item.moved && item.rate > 0) {
        // Its first data (later than its activation when a higher priority class held it).
        item.moved = true;
        Transfer& transfer = transfers_[item.transfer];
        transfer.first_data_ns = std::min(transfer.first_data_ns, model_ns_);
      }
      item.remaining -= item.rate * dt;
    }
    for (std::uint32_t core : touched_) {
      drain(core_caps_[core], dt);
      drain(read_ports_[core], dt);
      drain(write_ports_[core], dt);
    }
    for (std::uint32_t index : prefetching_) {
      EngineState& engine = engines_[index];
      const double outstanding = std::max(0.0, engine.outstanding - engine.consumed_per_ns * dt);
      if (engine.prefetched >= engine.outstanding) {
        engine.prefetched = outstanding;  // caught up: nothing to work on
      } else {
        const double grown =
            engine.prefetched + (model_.descriptors_per_ns_ - engine.consumed_per_ns) * dt;
        if (grown >= outstanding) {
          engine.caught_up_ns =
              model_ns_ + (engine.outstanding - engine.prefetched) / model_.descriptors_per_ns_;
        }
        engine.prefetched = std::clamp(grown, 0.0, std::min(model_.prefetch_limit_, outstanding));
      }
      engine.outstanding = outstanding;
    }
  }
  model_ns_ = std::max(model_ns_, time_ns);
}

void FlowLevelDma::Partition::advance(double horizon_ns) {
  while (true) {
    // The next completion among the moving items (and every item finishing then: exactly, so
    // that no rounding of the remaining bytes leaves one a few ulps short of its end), and the
    // next item to become ready or bucket to run dry.
    double next_finish = sim_time::kNeverNs;
    to_finish_.clear();
    for (std::uint32_t index : active_) {
      const Item& item = items_[index];
      if (item.rate <= 0) continue;
      const double finish_ns = model_ns_ + item.remaining / item.rate;
      if (finish_ns < next_finish) {
        next_finish = finish_ns;
        to_finish_.clear();
      }
      if (finish_ns == next_finish) to_finish_.push_back(index);
    }
    const double next_ready = next_change_ns();
    const double next = std::min(next_finish, next_ready);
    if (next > horizon_ns || next == sim_time::kNeverNs) break;
    if (next_ready < next_finish) to_finish_.clear();
    // Buckets whose credit runs out now are empty now (exactly, as items above).
    exhausted_.clear();
    for (std::uint32_t core : draining_) {
      for (Bucket* bucket : {&core_caps_[core], &read_ports_[core], &write_ports_[core]}) {
        if (exhausted_ns(*bucket) <= next) exhausted_.push_back(bucket);
      }
    }
    // Descriptor units whose prefetched descriptors run out now are empty now.
    dry_.clear();
    for (std::uint32_t engine : prefetching_) {
      if (prefetch_dry_ns(engines_[engine]) <= next) dry_.push_back(engine);
    }
    progress_to(next);
    for (Bucket* bucket : exhausted_) bucket->credit = 0;
    for (std::uint32_t engine : dry_) engines_[engine].prefetched = 0;
    while (!fetchable_.empty() && fetchable_.top().time_ns <= next) {
      const std::uint32_t index = fetchable_.top().value;
      fetchable_.pop();
      add_descriptors(index, next);
    }
    for (std::uint32_t index : to_finish_) finish(index, next);
    while (!pending_.empty() && pending_.top().time_ns <= next) {
      const std::uint32_t index = pending_.top().value;
      pending_.pop();
      activate(index, next);
    }
    recompute_rates();
  }
  progress_to(std::max(model_ns_, std::min(horizon_ns, next_event_ns())));
}

void FlowLevelDma::Partition::activate(std::uint32_t index, double time_ns) {
  Item& item = items_[index];
  if (item.remaining <= 0) {
    // An engine without rows: it writes its semaphore when the DMA is ready, in queue order.
    finish(index, time_ns);
    return;
  }
  item.active_slot = static_cast<std::uint32_t>(active_.size());
  active_.push_back(index);
  ++engines_[item.engine].ready_queues;
}

void FlowLevelDma::Partition::finish(std::uint32_t index, double time_ns) {
  Item& item = items_[index];
  EngineState& engine = engines_[item.engine];
  if (item.active_slot != kNone) {
    const std::uint32_t last = active_.back();
    active_[item.active_slot] = last;
    items_[last].active_slot = item.active_slot;
    active_.pop_back();
    item.active_slot = kNone;
    --engine.ready_queues;
  }
  const std::uint32_t queue = item.queue;
  double& queue_done = engine.queue_done_ns[queue];
  queue_done = std::max(queue_done, time_ns);
  Transfer& transfer = transfers_[item.transfer];
  transfer.done_ns = std::max(transfer.done_ns, queue_done);
  const std::uint32_t transfer_slot = item.transfer;
  // The next item of the queue becomes its head.
  std::vector<std::uint32_t>& fifo = engine.queues[queue];
  std::uint32_t& head = engine.heads[queue];
  ++head;
  if (head == fifo.size()) {
    fifo.clear();
    head = 0;
  } else {
    if (head >= 64 && head * 2 >= fifo.size()) {
      fifo.erase(fifo.begin(), fifo.begin() + head);
      head = 0;
    }
    make_head_pending(item.engine, queue);
  }
  if (item.descriptors > 0 && --engine.fetched_items == 0) {
    // The unit has nothing left: idle from now (or from when it caught up).
    if (engine.prefetched < engine.outstanding) engine.caught_up_ns = time_ns;
    engine.prefetched = engine.outstanding = engine.consumed_per_ns = 0;
  }
  --core_items_[item.core];
  items_.release(index);
  if (--transfer.pending == 0) transfer_done(transfer_slot);
}

void FlowLevelDma::Partition::recompute_rates() {
  // Each engine's round robin: one packet of every ready item per round (header). Cores whose
  // buckets may change: those with items moving, and those still refilling.
  for (std::uint32_t index : active_) {
    const Item& item = items_[index];
    EngineState& engine = engines_[item.engine];
    engine.round_data_ns = 0;
    engine.round_descriptor_ns = 0;
    engine.serving_class = ~0u;
    if (!core_touched_[item.core]) {
      core_touched_[item.core] = true;
      touched_.push_back(item.core);
    }
  }
  // Strict priority: the round robin runs between the ready items of the engine's highest class
  // only; the others wait.
  for (std::uint32_t index : active_) {
    const Item& item = items_[index];
    EngineState& engine = engines_[item.engine];
    engine.serving_class = std::min(engine.serving_class, item.priority_class);
  }
  for (std::uint32_t index : active_) {
    const Item& item = items_[index];
    EngineState& engine = engines_[item.engine];
    if (item.priority_class != engine.serving_class) continue;
    engine.round_data_ns += item.packet * item.data_ns_per_byte;
    engine.round_descriptor_ns += item.packet * item.descriptor_ns_per_byte;
  }
  // While the descriptor unit has prefetched descriptors the data path sets the pace; once
  // they are spent, the slower of the data path and the descriptor unit.
  for (std::uint32_t index : active_) {
    Item& item = items_[index];
    const EngineState& engine = engines_[item.engine];
    if (item.priority_class != engine.serving_class) {
      item.rate = 0;
      continue;
    }
    item.rate = item.packet / (engine.prefetched > 0
                                   ? engine.round_data_ns
                                   : std::max(engine.round_data_ns, engine.round_descriptor_ns));
  }
  // The core's cap, its HBM ports, then each HBM stack (all cores of the stack, no burst
  // allowance), in turn: each scales the items it carries in proportion when they exceed its
  // rate, the cap and ports only once their burst allowance is spent. An item carries
  // rate x lanes. A limit that binds nowhere skips its scaling pass.
  const auto binds = [](const Bucket& bucket) {
    return bucket.load > bucket.capacity && bucket.credit <= 0;
  };
  const auto limit = [&](std::vector<Bucket>& buckets, auto&& carries) {
    for (std::uint32_t core : touched_) buckets[core].load = 0;
    for (std::uint32_t index : active_) {
      const Item& item = items_[index];
      if (carries(item)) buckets[item.core].load += item.rate * item.lanes;
    }
    if (std::none_of(touched_.begin(), touched_.end(),
                     [&](std::uint32_t core) { return binds(buckets[core]); })) {
      return;
    }
    for (std::uint32_t index : active_) {
      Item& item = items_[index];
      const Bucket& bucket = buckets[item.core];
      if (carries(item) && binds(bucket)) item.rate *= bucket.capacity / bucket.load;
    }
  };
  limit(core_caps_, [](const Item&) { return true; });
  limit(read_ports_, [](const Item& item) { return item.read_stack >= 0; });
  limit(write_ports_, [](const Item& item) { return item.write_stack >= 0; });
  // A stack carries an item's reads and its writes: an HBM -> HBM copy within one stack twice.
  std::fill(stack_load_.begin(), stack_load_.end(), 0.0);
  for (std::uint32_t index : active_) {
    const Item& item = items_[index];
    const double carried = item.rate * item.lanes;
    if (item.read_stack >= 0) stack_load_[static_cast<std::size_t>(item.read_stack)] += carried;
    if (item.write_stack >= 0) stack_load_[static_cast<std::size_t>(item.write_stack)] += carried;
  }
  const double stack_rate = model_.stack_bytes_per_ns_;
  if (std::any_of(stack_load_.begin(), stack_load_.end(),
                  [&](double load) { return load > stack_rate; })) {
    const auto share = [&](std::int32_t stack) {
      if (stack < 0) return 1.0;
      const double load = stack_load_[static_cast<std::size_t>(stack)];
      return load > stack_rate ? stack_rate / load : 1.0;
    };
    for (std::uint32_t index : active_) {
      Item& item = items_[index];
      item.rate *= std::min(share(item.read_stack), share(item.write_stack));
    }
  }
  // The descriptors each engine's data path uses at the final rates; engines the unit cannot
  // keep up with use exactly its rate (no rounding noise that would read as prefetch).
  std::size_t listed = 0;
  for (std::uint32_t index : prefetching_) {
    EngineState& engine = engines_[index];
    engine.consumed_per_ns = 0;
    if (engine.fetched_items == 0) {
      engine.prefetching = false;
      continue;
    }
    prefetching_[listed++] = index;
  }
  prefetching_.resize(listed);
  for (std::uint32_t index : active_) {
    const Item& item = items_[index];
    engines_[item.engine].consumed_per_ns += item.rate * item.descriptors_per_byte;
  }
  for (std::uint32_t index : prefetching_) {
    EngineState& engine = engines_[index];
    if (engine.prefetched <= 0 &&
        engine.consumed_per_ns >= model_.descriptors_per_ns_ * (1 - 1e-9)) {
      engine.consumed_per_ns = std::min(engine.consumed_per_ns, model_.descriptors_per_ns_);
    }
  }
  // What passes each bucket at the final rates; which buckets drain, and which are full again.
  for (std::uint32_t core : touched_) {
    core_caps_[core].load = read_ports_[core].load = write_ports_[core].load = 0;
  }
  for (std::uint32_t index : active_) {
    const Item& item = items_[index];
    const double carried = item.rate * item.lanes;
    core_caps_[item.core].load += carried;
    if (item.read_stack >= 0) read_ports_[item.core].load += carried;
    if (item.write_stack >= 0) write_ports_[item.core].load += carried;
  }
  draining_.clear();
  std::size_t kept = 0;
  for (std::uint32_t core : touched_) {
    const bool full =
        core_caps_[core].credit >= model_.depth_bytes_ && core_caps_[core].load == 0 &&
        read_ports_[core].credit >= model_.depth_bytes_ && read_ports_[core].load == 0 &&
        write_ports_[core].credit >= model_.depth_bytes_ && write_ports_[core].load == 0;
    if (full) {
      core_touched_[core] = false;
      continue;
    }
    touched_[kept++] = core;
    if (exhausted_ns(core_caps_[core]) < sim_time::kNeverNs ||
        exhausted_ns(read_ports_[core]) < sim_time::kNeverNs ||
        exhausted_ns(write_ports_[core]) < sim_time::kNeverNs) {
      draining_.push_back(core);
    }
  }
  touched_.resize(kept);
}

void FlowLevelDma::Partition::transfer_done(std::uint32_t slot) {
  Transfer& transfer = transfers_[slot];
  const double complete = transfer.done_ns + transfer.latency_ns;
  const double first =
      transfer.first_data_ns < sim_time::kNeverNs ? transfer.first_data_ns : complete;
  count_completion(model_.core_stats_[transfer.pid], transfer.queue, first, complete,
                   model_.last_complete_ns_);
  model_.report_transfer(transfer.event, transfer.issue_ns, first, complete);
  core::DmaClient* client = transfer.client;
  const std::uint64_t id = transfer.id;
  transfers_.release(slot);
  client->dma_complete(id, sim_time::from_ns(complete), complete - first);
}

void FlowLevelDma::add_statistics(stats::Group& memory_system, double elapsed_ns) const {
  add_rate_model_statistics(memory_system, "flow", elapsed_ns > 0 ? elapsed_ns : last_complete_ns_,
                            core_peak_bytes_per_ns(), engines_per_core_, core_stats_, on_chip_,
                            stack_stats_, layout_, params_.hbm.stack_bandwidth_gbps);
}

}  // namespace trnsim::dma
