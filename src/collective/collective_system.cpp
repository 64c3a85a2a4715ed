#include "collective/collective_system.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <numeric>

#include "collective/algorithm_choice.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/sim_time.hpp"

namespace trnsim::collective {

namespace {

constexpr std::uint32_t kNoRank = 0xFFFFFFFFu;
/// DMA ids of collective legs: high bit set, so they never equal a core's instruction ids.
constexpr std::uint64_t kLegTag = std::uint64_t{1} << 63;
/// Times within this many ns of now count as now (sc_time rounds to femtoseconds).
constexpr double kTimeEpsilonNs = 1e-6;

Operation operation_of(kernel::Opcode opcode) {
  switch (opcode) {
    case kernel::Opcode::kAllGather:
      return Operation::kAllGather;
    case kernel::Opcode::kReduceScatter:
      return Operation::kReduceScatter;
    case kernel::Opcode::kAllToAll:
      return Operation::kAllToAll;
    case kernel::Opcode::kSend:
    case kernel::Opcode::kRecv:
      return Operation::kSendRecv;
    default:
      return Operation::kAllReduce;
  }
}

/// Bytes of a rank's message by the nccom-test convention (schedule.hpp), per physical core.
std::uint64_t core_message_bytes(Operation operation, const kernel::AccessPattern& src,
                                 const kernel::AccessPattern& dst) {
  switch (operation) {
    case Operation::kAllGather:
      return dst.bytes();
    case Operation::kAllReduce:
    case Operation::kReduceScatter:
    case Operation::kAllToAll:
    case Operation::kPermute:
    case Operation::kSendRecv:
      return src.used() ? src.bytes() : dst.bytes();
  }
  return 0;
}

std::string group_text(std::span<const std::uint32_t> group) {
  std::string text = "[";
  for (std::size_t i = 0; i < group.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(group[i]);
  }
  return text + "]";
}

/// `bytes` (rounded up to whole rows) as a [rows, bytes / rows] uint8 pattern over up to 128 rows
/// (on chip: the operand's partitions), so a DMA backend spreads it over all the core's engines,
/// in `like`'s memory, space and base address.
kernel::AccessPattern leg_pattern(const kernel::AccessPattern& like, std::uint32_t space,
                                  std::uint64_t bytes) {
  kernel::AccessPattern pattern;
  pattern.memory = like.memory;
  pattern.dtype = kernel::DType::kUInt8;
  pattern.tensor = like.tensor;
  pattern.space = space;
  pattern.offset = like.offset;
  if (like.on_chip()) {
    pattern.partition_start = like.partition_start;
    pattern.partitions =
        static_cast<std::uint32_t>(std::clamp<std::uint64_t>(bytes, 1, like.partitions));
    pattern.rank = 1;
    pattern.sizes[0] = static_cast<std::uint32_t>(ceil_div(bytes, pattern.partitions));
    pattern.strides[0] = 1;
    return pattern;
  }
  const std::uint64_t rows = std::clamp<std::uint64_t>(bytes, 1, 128);
  const std::uint64_t row_bytes = ceil_div(bytes, rows);
  pattern.rank = 2;
  pattern.sizes[0] = static_cast<std::uint32_t>(rows);
  pattern.sizes[1] = static_cast<std::uint32_t>(row_bytes);
  pattern.strides[0] = static_cast<std::int64_t>(row_bytes);
  pattern.strides[1] = 1;
  return pattern;
}

}  // namespace

void rethrow_if_failed(const CollectiveLog& log) {
  if (log.error) std::rethrow_exception(log.error);
}

void add_statistics(stats::Group& collectives, const CollectiveLog& log) {
  using stats::Unit;
  collectives.add("fabric", log.fabric, Unit::kText);
  std::deque<stats::Group>& operations = collectives.list("operations");
  for (const OperationRecord& r : log.operations) {
    stats::Group& operation = operations.emplace_back("operations");
    operation.add("operation", operation_name(r.operation), Unit::kText);
    operation.add("algorithm_requested", kernel::collective_algorithm_name(r.requested),
                  Unit::kText);
    operation.add("algorithm", kernel::collective_algorithm_name(r.algorithm), Unit::kText);
    operation.add("ranks", r.ranks, Unit::kCount);
    operation.add("bytes", r.bytes, Unit::kBytes);
    operation.add("steps", r.steps, Unit::kCount);
    operation.add("messages", r.messages, Unit::kCount);
    operation.add("joined_ns", r.joined_ns, Unit::kNs);
    operation.add("start_ns", r.start_ns, Unit::kNs);
    operation.add("end_ns", r.end_ns, Unit::kNs);
    operation.add("time_ns", r.end_ns - r.joined_ns, Unit::kNs);
  }
  std::deque<stats::Group>& servers = collectives.list("servers");
  for (const LinkUse& link : log.links) {
    stats::Group& server = servers.emplace_back("servers");
    server.add("name", link.name, Unit::kText);
    server.add("bytes", link.bytes, Unit::kBytes);
    server.add("busy_ns", link.busy_ns, Unit::kNs);
  }
}

CollectiveSystem::CollectiveSystem(sc_core::sc_module_name name, const config::Params& params,
                                   std::uint32_t cores, core::DmaBackend& dma,
                                   std::shared_ptr<CollectiveLog> log)
    : sc_core::sc_module(name),
      params_(params),
      cores_(cores),
      cores_per_chip_(static_cast<std::uint32_t>(std::max(1, params.chip.cores))),
      lnc_(static_cast<std::uint32_t>(std::clamp(params.system.lnc, 1, 2))),
      cc_per_core_(static_cast<std::uint32_t>(
          std::clamp(params.chip.collective_cores / std::max(1, params.chip.cores), 1, 64))),
      fixed_ns_(params.dma.fixed_cost_ns),
      dma_(dma),
      log_(log ? std::move(log) : std::make_shared<CollectiveLog>()),
      fabric_(params, pool_),
      trace_(trnsim::log::debug_enabled("collective")) {
  sim_time::scale();  // before any conversion (util/sim_time.hpp)
  log_->fabric = fabric_.describe();
  reduce_unit_.reserve(cores_);
  for (std::uint32_t pid = 0; pid < cores_; ++pid) {
    reduce_unit_.push_back(
        pool_.add(params.collective.reduce_bandwidth_gbps, fmt::format("core{}.reduce", pid)));
  }
  cc_busy_.assign(cores_, 0);
  // A method, not a thread: no coroutine, so no stack switching (which AddressSanitizer cannot
  // follow through SystemC) in a run.
  SC_METHOD(run);
}

CollectiveSystem::~CollectiveSystem() {
  for (fabric::ResourceId id = 0; id < pool_.size(); ++id) {
    if (pool_.bytes(id) > 0)
      log_->links.push_back({pool_.name(id), pool_.bytes(id), pool_.busy_ns(id)});
  }
}

double CollectiveSystem::now_ns() {
  return sim_time::now_ns();
}

void CollectiveSystem::fail(const std::string& where, const std::string& message) {
  if (!log_->error) log_->error = std::make_exception_ptr(InputError(where, message));
  sc_core::sc_stop();
}

void CollectiveSystem::push_event(double time_ns, std::uint32_t op, std::uint32_t rank) {
  events_.push(time_ns, Event{op, rank});
  work_.notify(sc_core::SC_ZERO_TIME);
}

void CollectiveSystem::run() {
  while (!events_.empty()) {
    const double now = now_ns();
    const double next = events_.top().time_ns;
    if (next > now + kTimeEpsilonNs) {
      next_trigger(sim_time::from_ns(next - now), work_);
      return;
    }
    const Event event = events_.top().value;
    events_.pop();
    if (event.rank == kNoRank) {
      release(event.op);
    } else {
      start_rank_step(event.op, event.rank);
    }
  }
  next_trigger(work_);
}

void CollectiveSystem::submit(std::uint32_t pid, std::uint64_t id,
                              const kernel::Instruction& instruction,
                              std::span<const std::uint32_t> group,
                              core::CollectiveClient& client) {
  Member member;
  member.pid = pid;
  member.id = id;
  member.client = &client;
  member.opcode = instruction.opcode;
  member.requested = instruction.algorithm;
  member.source = instruction.source;
  member.src = instruction.src();
  member.dst = instruction.dst();
  member.joined_ns = now_ns();
  if (instruction.opcode == kernel::Opcode::kSend || instruction.opcode == kernel::Opcode::kRecv) {
    join_point_to_point(std::move(member), instruction.peer);
    return;
  }
  join_group(std::move(member), group);
}

void CollectiveSystem::join_point_to_point(Member member, std::uint32_t peer) {
  const bool sending = member.opcode == kernel::Opcode::kSend;
  const auto key = sending ? std::make_pair(member.pid, peer) : std::make_pair(peer, member.pid);
  auto& mine = sending ? sends_[key] : recvs_[key];
  auto& theirs = sending ? recvs_[key] : sends_[key];
  if (theirs.empty()) {
    mine.push_back(std::move(member));
    return;
  }
  Member other = std::move(theirs.front());
  theirs.erase(theirs.begin());
  std::vector<Member> members;
  if (sending) {
    members.push_back(std::move(member));
    members.push_back(std::move(other));
  } else {
    members.push_back(std::move(other));
    members.push_back(std::move(member));
  }
  create_op(Operation::kSendRecv, std::move(members));
}

void CollectiveSystem::join_group(Member member, std::span<const std::uint32_t> group) {
  std::vector<std::uint32_t> key(group.begin(), group.end());
  if (key.empty()) {
    key.resize(cores_);
    std::iota(key.begin(), key.end(), 0u);
  }
  std::sort(key.begin(), key.end());
  auto [it, inserted] = groups_.try_emplace(key);
  Rendezvous& rendezvous = it->second;
  if (inserted) {
    rendezvous.group = key;
    rendezvous.joined.assign(key.size(), 0);
  }
  const auto position =
      static_cast<std::size_t>(std::lower_bound(key.begin(), key.end(), member.pid) - key.begin());
  const std::uint64_t k = rendezvous.joined[position]++;
  const std::size_t slot = static_cast<std::size_t>(k - rendezvous.started);
  if (slot == rendezvous.pending.size()) rendezvous.pending.emplace_back();
  std::vector<Member>& members = rendezvous.pending[slot];
  if (!members.empty() && members.front().opcode != member.opcode) {
    fail(fmt::format("collective #{} of group {}", k, group_text(key)),
         fmt::format("core {} issues {} but core {} issued {}: every core of a group must issue "
                     "the same collectives in the same order",
                     member.pid, kernel::opcode_name(member.opcode), members.front().pid,
                     kernel::opcode_name(members.front().opcode)));
    return;
  }
  const Operation operation = operation_of(member.opcode);
  members.push_back(std::move(member));
  while (!rendezvous.pending.empty() && rendezvous.pending.front().size() == key.size()) {
    std::vector<Member> complete = std::move(rendezvous.pending.front());
    rendezvous.pending.pop_front();
    ++rendezvous.started;
    create_op(operation, std::move(complete));
  }
}

void CollectiveSystem::create_op(Operation operation, std::vector<Member> members) {
  auto op = std::make_unique<Op>();
  op->operation = operation;
  op->members = std::move(members);
  const std::uint32_t lanes = operation == Operation::kSendRecv ? 1 : lnc_;
  if (operation == Operation::kSendRecv) {
    // Members are (sender, receiver): rank 0 sends to rank 1.
    op->rank_cores = {{0, 0}, {1, 1}};
    op->rank_chip = {op->members[0].pid / cores_per_chip_, op->members[1].pid / cores_per_chip_};
  } else {
    std::sort(op->members.begin(), op->members.end(),
              [](const Member& a, const Member& b) { return a.pid < b.pid; });
    // Ranks: one per member, or per LNC pair (2k, 2k+1).
    for (std::uint32_t i = 0; i < op->members.size(); i += lanes) {
      const std::uint32_t pid = op->members[i].pid;
      if (lanes == 2 &&
          (pid % 2 != 0 || i + 1 >= op->members.size() || op->members[i + 1].pid != pid + 1)) {
        std::vector<std::uint32_t> pids;
        for (const Member& m : op->members) pids.push_back(m.pid);
        fail(fmt::format("{} of group {}", kernel::opcode_name(op->members[i].opcode),
                         group_text(pids)),
             fmt::format("with system.lnc = 2 a rank is a core pair (2k, 2k+1); core {} has no "
                         "partner core {} in the group",
                         pid, pid % 2 == 0 ? pid + 1 : pid - 1));
        return;
      }
      op->rank_cores.push_back({i, lanes == 2 ? i + 1 : i});
      op->rank_chip.push_back(pid / cores_per_chip_);
    }
  }
  const auto ranks = static_cast<std::uint32_t>(op->rank_cores.size());
  const Member& first = op->members.front();
  const std::uint64_t bytes = core_message_bytes(operation, first.src, first.dst) * lanes;
  // Layout: ring in snake order of the chips, domains dense.
  RankLayout layout;
  layout.ring.resize(ranks);
  std::iota(layout.ring.begin(), layout.ring.end(), 0u);
  std::stable_sort(layout.ring.begin(), layout.ring.end(), [&](std::uint32_t a, std::uint32_t b) {
    return fabric_.ring_position(op->rank_chip[a]) < fabric_.ring_position(op->rank_chip[b]);
  });
  std::map<std::uint32_t, std::uint32_t> domain_index;
  std::map<std::uint32_t, std::uint32_t> domain_ranks;
  for (std::uint32_t r = 0; r < ranks; ++r) {
    const std::uint32_t domain = fabric_.domain_of(op->rank_chip[r]);
    domain_index.try_emplace(domain, static_cast<std::uint32_t>(domain_index.size()));
    ++domain_ranks[domain];
  }
  layout.domain.resize(ranks);
  for (std::uint32_t r = 0; r < ranks; ++r) {
    layout.domain[r] = domain_index[fabric_.domain_of(op->rank_chip[r])];
  }
  bool even = true;
  for (const auto& [domain, count] : domain_ranks)
    even = even && count == domain_ranks.begin()->second;
  const Algorithm requested = first.requested;
  const Algorithm algorithm =
      choose_algorithm(operation, requested, bytes, ranks,
                       static_cast<std::uint32_t>(domain_index.size()), even, params_.collective);
  op->schedule = std::make_unique<Schedule>(operation, algorithm, ranks, bytes, layout);
  const std::uint32_t steps = op->schedule->steps();
  op->ranks.assign(ranks, RankState{});
  op->received.assign(static_cast<std::size_t>(ranks) * steps, 0);
  op->received_ns.assign(static_cast<std::size_t>(ranks) * steps, 0.0);
  op->cc_slot.assign(op->members.size(), 0);
  OperationRecord& record = op->record;
  record.operation = operation;
  record.requested = requested;
  record.algorithm = op->schedule->algorithm();
  record.ranks = ranks;
  record.bytes = bytes;
  record.steps = steps;
  record.joined_ns = now_ns();

  const std::uint32_t index = ops_.acquire();
  ops_[index] = std::move(op);
  waiting_.push_back(index);
  try_start_waiting();
}

void CollectiveSystem::try_start_waiting() {
  const std::uint32_t all = cc_per_core_ >= 32 ? 0xFFFFFFFFu : (1u << cc_per_core_) - 1;
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    Op& op = *ops_[*it];
    const bool free = std::all_of(op.members.begin(), op.members.end(),
                                  [&](const Member& m) { return (cc_busy_[m.pid] & all) != all; });
    if (!free) {
      ++it;
      continue;
    }
    for (std::size_t i = 0; i < op.members.size(); ++i) {
      const std::uint32_t busy = cc_busy_[op.members[i].pid];
      const auto slot = static_cast<std::uint8_t>(std::countr_one(busy));
      op.cc_slot[i] = slot;
      cc_busy_[op.members[i].pid] |= 1u << slot;
    }
    const double start = now_ns() + params_.collective.op_overhead_ns;
    op.record.start_ns = start;
    op.done_ns = start;
    const std::uint32_t index = *it;
    it = waiting_.erase(it);
    if (op.schedule->steps() == 0) {
      for (std::uint32_t r = 0; r < op.ranks.size(); ++r) {
        op.ranks[r].in_step = true;
        op.ranks[r].step_start_ns = start;
        op.ranks[r].step_end_ns = start;
        check_rank(op, index, r);
      }
    } else {
      for (std::uint32_t r = 0; r < op.ranks.size(); ++r) push_event(start, index, r);
    }
  }
}

void CollectiveSystem::start_rank_step(std::uint32_t op_index, std::uint32_t rank) {
  Op& op = *ops_[op_index];
  RankState& state = op.ranks[rank];
  const double now = now_ns();
  state.in_step = true;
  state.step_start_ns = now;
  state.step_end_ns = now;
  messages_.clear();
  op.schedule->sends(rank, state.step, messages_);
  state.pending_sends = static_cast<std::uint32_t>(messages_.size());
  op.record.messages += messages_.size();
  // start_message() may land a message at once (from inside DmaBackend::submit); landing only
  // queues events, so messages_ stays intact.
  for (const Message& message : messages_) start_message(op_index, rank, message);
  check_rank(*ops_[op_index], op_index, rank);
}

kernel::Instruction CollectiveSystem::make_leg(const Op& op, const Member& from, const Member& to,
                                               std::uint64_t bytes, std::uint64_t leg_id) const {
  kernel::Instruction leg;
  leg.opcode = kernel::Opcode::kDmaCopy;
  leg.engine = kernel::Engine::kDma;
  leg.pid = from.pid;
  leg.sequence = leg_id;
  leg.source = from.source;
  leg.peer = to.pid;  // the receiving core (a dma_copy has no peer otherwise)
  // CC cores drive their own DMA rings: the highest queues, one per CC core of the core.
  const auto member_index = static_cast<std::size_t>(&from - op.members.data());
  const int queues = std::max(1, params_.dma.queues_per_engine);
  leg.dma_queue = static_cast<std::uint8_t>((queues - 1 - op.cc_slot[member_index] % queues));
  leg.dma_trigger = kernel::Engine::kSync;
  const kernel::AccessPattern& src_like = from.src.used() ? from.src : from.dst;
  const kernel::AccessPattern& dst_like = to.dst.used() ? to.dst : to.src;
  const std::uint32_t src_space = src_like.on_chip() ? from.pid : from.pid / cores_per_chip_;
  const std::uint32_t dst_space = dst_like.on_chip() ? to.pid : to.pid / cores_per_chip_;
  leg.operand(kernel::Slot::kSrc) = leg_pattern(src_like, src_space, bytes);
  leg.operand(kernel::Slot::kDst) = leg_pattern(dst_like, dst_space, bytes);
  leg.bytes_read = bytes;
  leg.bytes_written = bytes;
  leg.hbm_bytes = (src_like.on_chip() ? 0 : bytes) + (dst_like.on_chip() ? 0 : bytes);
  return leg;
}

void CollectiveSystem::start_message(std::uint32_t op_index, std::uint32_t rank,
                                     const Message& message) {
  Op& op = *ops_[op_index];
  const double now = now_ns();
  const std::uint32_t index = transfers_.acquire();
  const std::array<std::uint32_t, 2>& from_cores = op.rank_cores[rank];
  const std::array<std::uint32_t, 2>& to_cores = op.rank_cores[message.to];
  const std::uint32_t lanes = from_cores[0] == from_cores[1] ? 1 : 2;

  fabric_.route(op.rank_chip[rank], op.rank_chip[message.to], route_);
  const double bytes = static_cast<double>(message.bytes);
  const double data_start = now + fixed_ns_;
  double link_done = pool_.reserve(route_.resources, data_start, bytes);
  if (message.reduce) {
    for (std::uint32_t lane = 0; lane < lanes; ++lane) {
      const fabric::ResourceId unit = reduce_unit_[op.members[to_cores[lane]].pid];
      link_done = std::max(link_done, pool_.reserve({&unit, 1}, data_start, bytes / lanes));
    }
  }
  link_done += route_.wire_latency_ns;
  const double hop = route_.efa ? params_.collective.inter_node_latency_ns
                                : params_.collective.intra_hop_latency_ns;
  const double latency = std::max(hop, route_.wire_latency_ns);

  Transfer& transfer = transfers_[index];
  transfer.op = op_index;
  transfer.from = rank;
  transfer.to = message.to;
  transfer.step = op.ranks[rank].step;
  transfer.link_done_ns = link_done - route_.wire_latency_ns;
  transfer.dma_done_ns = now;
  transfer.tail_ns = std::max(0.0, latency - fixed_ns_);
  if (message.bytes == 0) {
    transfer.legs_pending = 0;
    transfer.tail_ns = latency;
    landed(index);
    return;
  }
  transfer.legs_pending = lanes;
  std::uint64_t remaining = message.bytes;
  for (std::uint32_t lane = 0; lane < lanes; ++lane) {
    const std::uint64_t part = lane + 1 == lanes ? remaining : message.bytes / lanes;
    remaining -= part;
    const std::uint64_t leg_id = kLegTag | (static_cast<std::uint64_t>(index) << 1) | lane;
    const kernel::Instruction leg =
        make_leg(op, op.members[from_cores[lane]], op.members[to_cores[lane]], part, leg_id);
    dma_.submit(leg.pid, leg_id, leg, *this);
  }
}

void CollectiveSystem::dma_complete(std::uint64_t id, const sc_core::sc_time& complete,
                                    double /*transfer_ns*/) {
  const auto index = static_cast<std::uint32_t>((id & ~kLegTag) >> 1);
  Transfer& transfer = transfers_[index];
  transfer.dma_done_ns = std::max(transfer.dma_done_ns, sim_time::to_ns(complete));
  if (--transfer.legs_pending == 0) landed(index);
}

void CollectiveSystem::landed(std::uint32_t transfer_index) {
  const Transfer transfer = transfers_[transfer_index];
  transfers_.release(transfer_index);
  Op& op = *ops_[transfer.op];
  const double arrival = std::max(transfer.link_done_ns, transfer.dma_done_ns) + transfer.tail_ns;
  RankState& sender = op.ranks[transfer.from];
  sender.step_end_ns = std::max(sender.step_end_ns, arrival);
  --sender.pending_sends;
  const std::size_t slot =
      static_cast<std::size_t>(transfer.to) * op.schedule->steps() + transfer.step;
  ++op.received[slot];
  op.received_ns[slot] = std::max(op.received_ns[slot], arrival);
  check_rank(op, transfer.op, transfer.from);
  check_rank(op, transfer.op, transfer.to);
}

void CollectiveSystem::check_rank(Op& op, std::uint32_t op_index, std::uint32_t rank) {
  RankState& state = op.ranks[rank];
  if (!state.in_step || state.pending_sends > 0) return;
  const std::uint32_t steps = op.schedule->steps();
  double done = std::max(state.step_start_ns, state.step_end_ns);
  if (steps > 0) {
    const std::size_t slot = static_cast<std::size_t>(rank) * steps + state.step;
    if (op.received[slot] < op.schedule->receives(rank, state.step)) return;
    done = std::max(done, op.received_ns[slot]);
    ++state.step;
  }
  state.in_step = false;
  if (state.step < steps) {
    push_event(done, op_index, rank);
    return;
  }
  // The rank is done: every core of it completes.
  const sc_core::sc_time at = sim_time::from_ns(std::max(done, now_ns()));
  const std::array<std::uint32_t, 2>& cores = op.rank_cores[rank];
  op.members[cores[0]].client->collective_complete(op.members[cores[0]].id, at);
  if (cores[1] != cores[0]) {
    op.members[cores[1]].client->collective_complete(op.members[cores[1]].id, at);
  }
  op.done_ns = std::max(op.done_ns, done);
  if (++op.ranks_done == op.ranks.size()) push_event(op.done_ns, op_index, kNoRank);
}

void CollectiveSystem::release(std::uint32_t op_index) {
  Op& op = *ops_[op_index];
  for (std::size_t i = 0; i < op.members.size(); ++i) {
    cc_busy_[op.members[i].pid] &= ~(1u << op.cc_slot[i]);
  }
  op.record.end_ns = op.done_ns;
  if (trace_) [[unlikely]] {
    const OperationRecord& r = op.record;
    trnsim::log::component("collective")
        .debug(
            "{} over {} ranks, {} B per rank, {} ({} steps, {} messages): joined {:.3f} ns, "
            "started {:.3f} ns, done {:.3f} ns",
            operation_name(r.operation), r.ranks, r.bytes,
            kernel::collective_algorithm_name(r.algorithm), r.steps, r.messages, r.joined_ns,
            r.start_ns, r.end_ns);
  }
  log_->operations.push_back(op.record);
  ops_[op_index].reset();
  ops_.release(op_index);
  try_start_waiting();
}

system::CollectiveBackendFactory backend_factory(std::shared_ptr<CollectiveLog> log) {
  return [log](const config::Params& params, std::uint32_t cores,
               core::DmaBackend& dma) -> std::unique_ptr<core::CollectiveBackend> {
    return std::make_unique<CollectiveSystem>("collectives", params, cores, dma, log);
  };
}

}  // namespace trnsim::collective
