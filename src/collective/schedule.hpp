// Collectives as step-synchronous schedules: in step s every rank sends its messages; it starts
// step s+1 once its own have landed and every message of step s addressed to it has arrived (and
// been reduced). A Schedule holds the steps; the algorithms (collective/algorithms.hpp: Ring,
// Mesh, RDH, KangaRing, Hierarchical and any registered one) build them from its building
// blocks. Pure: no timing, no SystemC. Leaves out data values.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "kernel/instruction.hpp"

namespace trnsim::collective {

using Algorithm = kernel::CollectiveAlgorithm;

enum class Operation : std::uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kPermute,   ///< every rank sends the whole message to the next rank of the ring
  kSendRecv,  ///< rank 0 sends the message to rank 1
};
std::string_view operation_name(Operation operation);

/// Bus-bandwidth factor of nccom-test/nccl-tests: busbw = algbw x factor (2(n-1)/n for
/// all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for point-to-point).
double bus_bandwidth_factor(Operation operation, std::uint32_t ranks);

/// One message of one step: `bytes` to rank `to`, reduced into the receiver's data if `reduce`.
struct Message {
  std::uint32_t to = 0;
  std::uint64_t bytes = 0;
  bool reduce = false;
};

/// Where the ranks are, as far as the algorithms care.
struct RankLayout {
  std::vector<std::uint32_t> ring;    ///< ranks in ring order (neighbours adjacent)
  std::vector<std::uint32_t> domain;  ///< by rank: EFA domain (dense 0..), for Hierarchical
};

/// Whether every EFA domain of `layout` holds the same number of ranks (ranks without a domain
/// count as domain 0).
bool even_domains(const RankLayout& layout);

class Schedule {
 public:
  /// The schedule of `operation` over `ranks` ranks moving a message of `bytes` (nccom-test
  /// size: all-reduce/reduce-scatter/all-to-all input, all-gather output, point-to-point
  /// message), built by the algorithm `algorithm` (collective/algorithms.hpp) if it supports the
  /// operation on these ranks, else by Ring. `algorithm` must be resolved (not kAuto;
  /// algorithm_choice.hpp).
  Schedule(Operation operation, Algorithm algorithm, std::uint32_t ranks, std::uint64_t bytes,
           const RankLayout& layout);

  Operation operation() const { return operation_; }
  Algorithm algorithm() const { return algorithm_; }
  std::uint32_t ranks() const { return ranks_; }
  std::uint32_t steps() const { return static_cast<std::uint32_t>(steps_.size()); }
  /// Appends the messages `rank` sends in `step` to `out`.
  void sends(std::uint32_t rank, std::uint32_t step, std::vector<Message>& out) const;
  /// Messages `rank` receives in `step`.
  std::uint32_t receives(std::uint32_t rank, std::uint32_t step) const;

  // The building blocks algorithms build their schedules from (collective/algorithms/).

  /// Who a member of a group sends to in a step, by its position in its group.
  enum class Pattern : std::uint8_t {
    kRing,      ///< to the next member of the group
    kBiRing,    ///< to next and previous (last step of an even-length phase: next only)
    kExchange,  ///< to position XOR distance
    kMesh,      ///< to every other member
    kShift,     ///< to position + distance (mod size)
    kFold,      ///< positions >= distance send to position - distance
    kUnfold,    ///< positions < extra send to position + distance
  };
  /// Adds a partition of (some of) the ranks into groups, each an ordered rank list; returns its
  /// index for add_step.
  std::uint32_t add_groups(std::vector<std::vector<std::uint32_t>> members);
  /// Adds a step in which every rank of the groups `groups` sends `bytes` by `pattern`
  /// (`distance`, `limit`: the pattern's parameters), reduced into the receiver if `reduce`.
  void add_step(Pattern pattern, std::uint32_t groups, std::uint32_t distance, std::uint32_t limit,
                std::uint64_t bytes, bool reduce);
  /// `steps` ring steps of `bytes` in each group of `groups`.
  void ring_phase(std::uint32_t groups, std::uint64_t bytes, bool reduce, std::uint32_t steps);
  /// A phase of steps to both ring neighbours (KangaRing): ceil((m-1)/2) steps for m members.
  void biring_phase(std::uint32_t groups, std::uint64_t bytes, bool reduce);
  /// Ring all-reduce of `bytes` inside each group: reduce-scatter then all-gather.
  void ring_all_reduce(std::uint32_t groups, std::uint64_t bytes);
  /// Every rank, in rank order.
  std::vector<std::uint32_t> all_ranks() const;

 private:
  struct Groups {
    std::vector<std::vector<std::uint32_t>> members;  ///< ordered rank lists
    std::vector<std::uint32_t> group_of;              ///< by rank
    std::vector<std::uint32_t> position;              ///< by rank: index in its group
  };
  struct Step {
    Pattern pattern = Pattern::kRing;
    std::uint32_t groups = 0;  ///< index into groups_
    std::uint32_t distance = 1;
    std::uint32_t limit = 0;  ///< kUnfold: number of folded ranks; kBiRing: 1 = next only
    std::uint64_t bytes = 0;
    bool reduce = false;
  };

  Operation operation_;
  Algorithm algorithm_;
  std::uint32_t ranks_;
  std::vector<Groups> groups_;
  std::vector<Step> steps_;
};

/// ceil(a / b) for b > 0.
constexpr std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}

}  // namespace trnsim::collective
