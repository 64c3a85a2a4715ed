#include "collective/schedule.hpp"

#include <algorithm>
#include <bit>
#include <map>

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

Schedule::Schedule(Operation operation, Algorithm algorithm, std::uint32_t ranks,
                   std::uint64_t bytes, const RankLayout& layout)
    : operation_(operation), algorithm_(algorithm), ranks_(ranks) {
  if (operation == Operation::kSendRecv) {
    // Position 1 (rank 0) sends to position 0 (rank 1).
    const std::uint32_t groups = add_groups({{1, 0}});
    steps_.push_back({Pattern::kFold, groups, 1, 0, bytes, false});
    return;
  }
  if (ranks <= 1) return;
  if (operation == Operation::kPermute) {
    steps_.push_back({Pattern::kShift, add_groups({layout.ring}), 1, 0, bytes, false});
    return;
  }
  switch (algorithm) {
    case Algorithm::kMesh:
      build_mesh(bytes);
      return;
    case Algorithm::kRdh:
      // Extra ranks fold into partners only for all-reduce; the others need 2^k ranks.
      if (operation == Operation::kAllReduce ||
          (operation != Operation::kAllToAll && std::has_single_bit(ranks))) {
        build_rdh(bytes);
        return;
      }
      break;
    case Algorithm::kKangaring:
      if (operation != Operation::kAllToAll) {
        build_kangaring(bytes, layout);
        return;
      }
      break;
    case Algorithm::kHierarchical:
      if (operation != Operation::kAllToAll) {
        build_hierarchical(bytes, layout);
        return;
      }
      break;
    case Algorithm::kAuto:
    case Algorithm::kRing:
      break;
  }
  algorithm_ = Algorithm::kRing;
  build_ring(bytes, layout);
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

void Schedule::ring_phase(std::uint32_t groups, std::uint64_t bytes, bool reduce,
                          std::uint32_t steps) {
  for (std::uint32_t s = 0; s < steps; ++s) {
    steps_.push_back({Pattern::kRing, groups, 1, 0, bytes, reduce});
  }
}

void Schedule::biring_phase(std::uint32_t groups, std::uint64_t bytes, bool reduce) {
  const std::uint32_t m = static_cast<std::uint32_t>(groups_[groups].members.front().size());
  if (m < 2) return;
  const std::uint32_t both_ways = (m - 1) / 2;
  for (std::uint32_t s = 0; s < both_ways; ++s) {
    steps_.push_back({Pattern::kBiRing, groups, 1, 0, bytes, reduce});
  }
  if ((m - 1) % 2 == 1) steps_.push_back({Pattern::kBiRing, groups, 1, 1, bytes, reduce});
}

void Schedule::ring_all_reduce(std::uint32_t groups, std::uint64_t bytes) {
  const std::uint32_t m = static_cast<std::uint32_t>(groups_[groups].members.front().size());
  if (m < 2) return;
  const std::uint64_t chunk = ceil_div(bytes, m);
  ring_phase(groups, chunk, true, m - 1);
  ring_phase(groups, chunk, false, m - 1);
}

void Schedule::build_ring(std::uint64_t bytes, const RankLayout& layout) {
  const std::uint32_t ring = add_groups({layout.ring});
  const std::uint32_t n = ranks_;
  const std::uint64_t chunk = ceil_div(bytes, n);
  switch (operation_) {
    case Operation::kAllReduce:
      ring_all_reduce(ring, bytes);
      break;
    case Operation::kAllGather:
      ring_phase(ring, chunk, false, n - 1);
      break;
    case Operation::kReduceScatter:
      ring_phase(ring, chunk, true, n - 1);
      break;
    case Operation::kAllToAll:
      // Pairwise exchange: in step k every rank sends its block for rank + k.
      for (std::uint32_t k = 1; k < n; ++k) {
        steps_.push_back({Pattern::kShift, ring, k, 0, chunk, false});
      }
      break;
    case Operation::kPermute:
    case Operation::kSendRecv:
      break;
  }
}

void Schedule::build_kangaring(std::uint64_t bytes, const RankLayout& layout) {
  const std::uint32_t ring = add_groups({layout.ring});
  const std::uint64_t chunk = ceil_div(bytes, ranks_);
  if (operation_ != Operation::kAllGather) biring_phase(ring, chunk, true);
  if (operation_ != Operation::kReduceScatter) biring_phase(ring, chunk, false);
}

void Schedule::build_mesh(std::uint64_t bytes) {
  std::vector<std::uint32_t> all(ranks_);
  for (std::uint32_t r = 0; r < ranks_; ++r) all[r] = r;
  const std::uint32_t group = add_groups({all});
  const std::uint64_t chunk = ceil_div(bytes, ranks_);
  switch (operation_) {
    case Operation::kAllReduce:
      steps_.push_back({Pattern::kMesh, group, 1, 0, chunk, true});
      steps_.push_back({Pattern::kMesh, group, 1, 0, chunk, false});
      break;
    case Operation::kReduceScatter:
      steps_.push_back({Pattern::kMesh, group, 1, 0, chunk, true});
      break;
    case Operation::kAllGather:
    case Operation::kAllToAll:
      steps_.push_back({Pattern::kMesh, group, 1, 0, chunk, false});
      break;
    case Operation::kPermute:
    case Operation::kSendRecv:
      break;
  }
}

void Schedule::build_rdh(std::uint64_t bytes) {
  // Rank order (pid order): on a torus numbered x + X*y the XOR partners are the hypercube
  // neighbours of R-INTRA's "2D torus viewed as a 4D hypercube".
  const std::uint32_t p = std::bit_floor(ranks_);
  const std::uint32_t levels = static_cast<std::uint32_t>(std::countr_zero(p));
  std::vector<std::uint32_t> all(ranks_);
  for (std::uint32_t r = 0; r < ranks_; ++r) all[r] = r;
  const std::uint32_t everyone = add_groups({all});
  std::uint32_t core = everyone;
  if (p != ranks_) {
    core = add_groups({std::vector<std::uint32_t>(all.begin(), all.begin() + p)});
    steps_.push_back({Pattern::kFold, everyone, p, 0, bytes, true});
  }
  // Halving exchanges the largest halves with the nearest partners (XOR 1, 2, 4, ...), so on
  // consecutive ranks of a chip or torus row the big messages stay local; doubling mirrors it.
  if (operation_ != Operation::kAllGather) {
    for (std::uint32_t k = 0; k < levels; ++k) {
      steps_.push_back({Pattern::kExchange, core, 1u << k, 0, ceil_div(bytes, 2ull << k), true});
    }
  }
  if (operation_ != Operation::kReduceScatter) {
    for (std::uint32_t k = 0; k < levels; ++k) {
      steps_.push_back({Pattern::kExchange, core, p >> (k + 1), 0,
                        ceil_div(bytes, 1ull << (levels - k)), false});
    }
  }
  if (p != ranks_) {
    steps_.push_back({Pattern::kUnfold, everyone, p, ranks_ - p, bytes, false});
  }
}

void Schedule::build_hierarchical(std::uint64_t bytes, const RankLayout& layout) {
  std::map<std::uint32_t, std::vector<std::uint32_t>> by_domain;
  for (const std::uint32_t rank : layout.ring) by_domain[layout.domain[rank]].push_back(rank);
  const std::uint32_t domains = static_cast<std::uint32_t>(by_domain.size());
  const std::uint32_t m = static_cast<std::uint32_t>(by_domain.begin()->second.size());
  for (const auto& [domain, members] : by_domain) {
    if (members.size() != m) {  // uneven domains: no common local index
      algorithm_ = Algorithm::kRing;
      build_ring(bytes, layout);
      return;
    }
  }
  std::vector<std::vector<std::uint32_t>> intra;
  std::vector<std::vector<std::uint32_t>> inter(m);
  for (const auto& [domain, members] : by_domain) {
    intra.push_back(members);
    for (std::uint32_t i = 0; i < m; ++i) inter[i].push_back(members[i]);
  }
  const std::uint32_t inside = add_groups(std::move(intra));
  const std::uint32_t across = add_groups(std::move(inter));
  const std::uint64_t n = static_cast<std::uint64_t>(m) * domains;
  switch (operation_) {
    case Operation::kAllReduce: {
      const std::uint64_t shard = ceil_div(bytes, m);
      if (m > 1) ring_phase(inside, shard, true, m - 1);
      ring_all_reduce(across, shard);
      if (m > 1) ring_phase(inside, shard, false, m - 1);
      break;
    }
    case Operation::kAllGather:
      if (m > 1) ring_phase(inside, ceil_div(bytes, n), false, m - 1);
      if (domains > 1) ring_phase(across, ceil_div(bytes, domains), false, domains - 1);
      break;
    case Operation::kReduceScatter:
      if (domains > 1) ring_phase(across, ceil_div(bytes, domains), true, domains - 1);
      if (m > 1) ring_phase(inside, ceil_div(bytes, n), true, m - 1);
      break;
    case Operation::kAllToAll:
    case Operation::kPermute:
    case Operation::kSendRecv:
      break;
  }
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
