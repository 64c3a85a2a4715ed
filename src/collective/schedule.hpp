// Collective algorithms as step-synchronous schedules: in step s every rank sends its messages;
// it starts step s+1 once its own have landed and every message of step s addressed to it has
// arrived (and been reduced). Ring, Mesh, RDH (non-power-of-two all-reduce folds extra ranks),
// KangaRing (the ring both ways, ceil((n-1)/2) steps per phase) and Hierarchical (inside each
// EFA domain, across, inside again). Pure: no timing, no SystemC. Leaves out data values.
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

class Schedule {
 public:
  /// The schedule of `operation` over `ranks` ranks moving a message of `bytes` (nccom-test
  /// size: all-reduce/reduce-scatter/all-to-all input, all-gather output, point-to-point
  /// message). `algorithm` must be resolved (not kAuto) and supported (choose.hpp).
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

 private:
  enum class Pattern : std::uint8_t {
    kRing,      ///< to the next member of the group
    kBiRing,    ///< to next and previous (last step of an even-length phase: next only)
    kExchange,  ///< to position XOR distance
    kMesh,      ///< to every other member
    kShift,     ///< to position + distance (mod size)
    kFold,      ///< positions >= distance send to position - distance
    kUnfold,    ///< positions < extra send to position + distance
  };
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

  std::uint32_t add_groups(std::vector<std::vector<std::uint32_t>> members);
  void ring_phase(std::uint32_t groups, std::uint64_t bytes, bool reduce, std::uint32_t steps);
  void biring_phase(std::uint32_t groups, std::uint64_t bytes, bool reduce);
  void ring_all_reduce(std::uint32_t groups, std::uint64_t bytes);
  void build_ring(std::uint64_t bytes, const RankLayout& layout);
  void build_kangaring(std::uint64_t bytes, const RankLayout& layout);
  void build_mesh(std::uint64_t bytes);
  void build_rdh(std::uint64_t bytes);
  void build_hierarchical(std::uint64_t bytes, const RankLayout& layout);

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
