#include "collective/schedule.hpp"

#include <algorithm>
#include <map>

#include "collective/algorithms.hpp"

namespace trnsim::collective {

namespace {
constexpr std::uint32_t kNoGroup = 0xFFFFFFFFu;
}  // namespace

std::string_view operation_name(Operation operation) {
  switch (operation) {
    case Operation::kAllReduce:
      return "all_reduce";
    case Operation::kAllGather:
      return "all_gather";
    case Operation::kReduceScatter:
      return "reduce_scatter";
    case Operation::kAllToAll:
      return "all_to_all";
    case Operation::kPermute:
      return "permute";
    case Operation::kSendRecv:
      return "send_recv";
  }
  return "?";
}

double bus_bandwidth_factor(Operation operation, std::uint32_t ranks) {
  const double n = ranks;
  if (ranks <= 1) return 1.0;
  switch (operation) {
    case Operation::kAllReduce:
      return 2.0 * (n - 1) / n;
    case Operation::kAllGather:
    case Operation::kReduceScatter:
    case Operation::kAllToAll:
      return (n - 1) / n;
    case Operation::kPermute:
    case Operation::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

bool even_domains(const RankLayout& layout) {
  std::map<std::uint32_t, std::uint32_t> members;
  for (const std::uint32_t rank : layout.ring) {
    ++members[rank < layout.domain.size() ? layout.domain[rank] : 0];  // none given: one domain
  }
  for (const auto& [domain, count] : members) {
    if (count != members.begin()->second) return false;
  }
  return true;
}

Schedule::Schedule(Operation operation, Algorithm algorithm, std::uint32_t ranks,
                   std::uint64_t bytes, const RankLayout& layout)
    : operation_(operation), algorithm_(algorithm), ranks_(ranks) {
  if (operation == Operation::kSendRecv) {
    // Position 1 (rank 0) sends to position 0 (rank 1).
    const std::uint32_t groups = add_groups({{1, 0}});
    add_step(Pattern::kFold, groups, 1, 0, bytes, false);
    return;
  }
  if (ranks <= 1) return;
  if (operation == Operation::kPermute) {
    add_step(Pattern::kShift, add_groups({layout.ring}), 1, 0, bytes, false);
    return;
  }
  const AlgorithmModel* model = algorithm_model(algorithm);
  if (model == nullptr || !model->supports(operation, ranks, even_domains(layout))) {
    algorithm_ = Algorithm::kRing;
    model = algorithm_model(Algorithm::kRing);
  }
  model->build(*this, bytes, layout);
}

std::uint32_t Schedule::add_groups(std::vector<std::vector<std::uint32_t>> members) {
  Groups groups;
  groups.group_of.assign(ranks_ == 0 ? 2 : std::max<std::uint32_t>(ranks_, 2), kNoGroup);
  groups.position.assign(groups.group_of.size(), 0);
  for (std::uint32_t g = 0; g < members.size(); ++g) {
    for (std::uint32_t p = 0; p < members[g].size(); ++p) {
      groups.group_of[members[g][p]] = g;
      groups.position[members[g][p]] = p;
    }
  }
  groups.members = std::move(members);
  groups_.push_back(std::move(groups));
  return static_cast<std::uint32_t>(groups_.size() - 1);
}

void Schedule::add_step(Pattern pattern, std::uint32_t groups, std::uint32_t distance,
                        std::uint32_t limit, std::uint64_t bytes, bool reduce) {
  steps_.push_back({pattern, groups, distance, limit, bytes, reduce});
}

std::vector<std::uint32_t> Schedule::all_ranks() const {
  std::vector<std::uint32_t> all(ranks_);
  for (std::uint32_t r = 0; r < ranks_; ++r) all[r] = r;
  return all;
}

void Schedule::ring_phase(std::uint32_t groups, std::uint64_t bytes, bool reduce,
                          std::uint32_t steps) {
  for (std::uint32_t s = 0; s < steps; ++s) add_step(Pattern::kRing, groups, 1, 0, bytes, reduce);
}

void Schedule::biring_phase(std::uint32_t groups, std::uint64_t bytes, bool reduce) {
  const std::uint32_t m = static_cast<std::uint32_t>(groups_[groups].members.front().size());
  if (m < 2) return;
  const std::uint32_t both_ways = (m - 1) / 2;
  for (std::uint32_t s = 0; s < both_ways; ++s) {
    add_step(Pattern::kBiRing, groups, 1, 0, bytes, reduce);
  }
  if ((m - 1) % 2 == 1) add_step(Pattern::kBiRing, groups, 1, 1, bytes, reduce);
}

void Schedule::ring_all_reduce(std::uint32_t groups, std::uint64_t bytes) {
  const std::uint32_t m = static_cast<std::uint32_t>(groups_[groups].members.front().size());
  if (m < 2) return;
  const std::uint64_t chunk = ceil_div(bytes, m);
  ring_phase(groups, chunk, true, m - 1);
  ring_phase(groups, chunk, false, m - 1);
}

void Schedule::sends(std::uint32_t rank, std::uint32_t step, std::vector<Message>& out) const {
  const Step& s = steps_[step];
  const Groups& groups = groups_[s.groups];
  const std::uint32_t g = groups.group_of[rank];
  if (g == kNoGroup) return;
  const std::vector<std::uint32_t>& members = groups.members[g];
  const auto m = static_cast<std::uint32_t>(members.size());
  const std::uint32_t pos = groups.position[rank];
  auto send = [&](std::uint32_t to_position) {
    out.push_back({members[to_position], s.bytes, s.reduce});
  };
  switch (s.pattern) {
    case Pattern::kRing:
      if (m > 1) send((pos + 1) % m);
      break;
    case Pattern::kBiRing:
      if (m > 1) send((pos + 1) % m);
      if (m > 2 && s.limit == 0) send((pos + m - 1) % m);
      break;
    case Pattern::kExchange:
      if ((pos ^ s.distance) < m) send(pos ^ s.distance);
      break;
    case Pattern::kMesh:
      for (std::uint32_t j = 1; j < m; ++j) send((pos + j) % m);
      break;
    case Pattern::kShift:
      if (s.distance % m != 0) send((pos + s.distance) % m);
      break;
    case Pattern::kFold:
      if (pos >= s.distance) send(pos - s.distance);
      break;
    case Pattern::kUnfold:
      if (pos < s.limit) send(pos + s.distance);
      break;
  }
}

std::uint32_t Schedule::receives(std::uint32_t rank, std::uint32_t step) const {
  const Step& s = steps_[step];
  const Groups& groups = groups_[s.groups];
  const std::uint32_t g = groups.group_of[rank];
  if (g == kNoGroup) return 0;
  const auto m = static_cast<std::uint32_t>(groups.members[g].size());
  const std::uint32_t pos = groups.position[rank];
  switch (s.pattern) {
    case Pattern::kRing:
      return m > 1 ? 1 : 0;
    case Pattern::kBiRing:
      if (m < 2) return 0;
      return (m == 2 || s.limit != 0) ? 1 : 2;
    case Pattern::kExchange:
      return (pos ^ s.distance) < m ? 1 : 0;
    case Pattern::kMesh:
      return m - 1;
    case Pattern::kShift:
      return s.distance % m != 0 ? 1 : 0;
    case Pattern::kFold:
      return (pos < s.distance && pos + s.distance < m) ? 1 : 0;
    case Pattern::kUnfold:
      return (pos >= s.distance && pos - s.distance < s.limit) ? 1 : 0;
  }
  return 0;
}

}  // namespace trnsim::collective
