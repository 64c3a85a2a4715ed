// The collective-communication cores (core::CollectiveBackend): rendezvous of a group, the
// algorithm's steps (schedule.hpp) message by message, each message moved by DMA legs on the
// sending core (core::DmaBackend: shared with compute DMAs and HBM) and across the fabric's
// links, switches or EFA (fabric/), reduced at the receiver at collective.reduce_bandwidth_gbps.
// Timing contract and granularity (one DMA leg and one reservation per message, never per
// packet): docs/collectives.md. Leaves out chunk pipelining across steps and local copies.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <systemc>
#include <utility>
#include <vector>

#include "collective/schedule.hpp"
#include "config/params.hpp"
#include "core/collective_backend.hpp"
#include "core/dma_backend.hpp"
#include "fabric/fabric.hpp"
#include "fabric/resource_pool.hpp"
#include "kernel/instruction.hpp"
#include "system/simulation.hpp"
#include "util/slot_pool.hpp"
#include "util/timed_queue.hpp"

namespace trnsim::collective {

/// One collective as it ran.
struct OperationRecord {
  Operation operation = Operation::kAllReduce;
  Algorithm requested = Algorithm::kAuto;
  Algorithm algorithm = Algorithm::kRing;  ///< what ran
  std::uint32_t ranks = 0;
  std::uint64_t bytes = 0;  ///< message size per rank (nccom-test convention, schedule.hpp)
  std::uint32_t steps = 0;
  std::uint64_t messages = 0;
  double joined_ns = 0;  ///< the last rank joined
  double start_ns = 0;   ///< first step (after the CC-core wait and op overhead)
  double end_ns = 0;     ///< the last rank completed
};

/// One fabric server that carried collective traffic.
struct LinkUse {
  std::string name;  ///< e.g. "chip3.x+", "chip0.up", "chip5.efa_out", "core2.reduce"
  double bytes = 0;
  double busy_ns = 0;
};

/// What a CollectiveSystem reports to its owner. Shared, so it outlives the backend.
struct CollectiveLog {
  std::vector<OperationRecord> operations;  ///< in completion order
  std::vector<LinkUse> links;               ///< filled when the backend is destroyed
  std::string fabric;                       ///< Fabric::describe()
  /// Bad input found while running (mismatched collectives, LNC pairs): the simulation was
  /// stopped; rethrow_if_failed() raises it.
  std::exception_ptr error;
};

/// Rethrows the InputError recorded in `log`, if any.
void rethrow_if_failed(const CollectiveLog& log);
/// Adds the log to `collectives`, the statistics' "collectives" group (docs/outputs.md):
/// the fabric, the operations and the servers' (links') use.
void add_statistics(stats::Group& collectives, const CollectiveLog& log);

class CollectiveSystem : public sc_core::sc_module,
                         public core::CollectiveBackend,
                         public core::DmaClient {
 public:
  SC_HAS_PROCESS(CollectiveSystem);

  CollectiveSystem(sc_core::sc_module_name name, const config::Params& params, std::uint32_t cores,
                   core::DmaBackend& dma, std::shared_ptr<CollectiveLog> log);
  ~CollectiveSystem() override;

  void submit(std::uint32_t pid, std::uint64_t id, const kernel::Instruction& instruction,
              std::span<const std::uint32_t> group, core::CollectiveClient& client) override;
  void dma_complete(std::uint64_t id, const sc_core::sc_time& complete,
                    double transfer_ns) override;

 private:
  /// One core's part of a collective, as submitted.
  struct Member {
    std::uint32_t pid = 0;
    std::uint64_t id = 0;
    core::CollectiveClient* client = nullptr;
    kernel::Opcode opcode = kernel::Opcode::kAllReduce;
    Algorithm requested = Algorithm::kAuto;
    kernel::SourceRef source;
    kernel::AccessPattern src;
    kernel::AccessPattern dst;
    double joined_ns = 0;
  };
  struct RankState {
    std::uint32_t step = 0;
    std::uint32_t pending_sends = 0;
    bool in_step = false;
    double step_start_ns = 0;
    double step_end_ns = 0;
  };
  struct Op {
    Operation operation = Operation::kAllReduce;
    std::vector<Member> members;                           ///< by pid
    std::vector<std::array<std::uint32_t, 2>> rank_cores;  ///< member indices per rank (lanes)
    std::vector<std::uint32_t> rank_chip;
    std::unique_ptr<Schedule> schedule;
    std::vector<RankState> ranks;
    std::vector<std::uint32_t> received;  ///< rank * steps + step
    std::vector<double> received_ns;
    std::vector<std::uint8_t> cc_slot;  ///< by member: CC core (and DMA queue) used
    std::uint32_t ranks_done = 0;
    double done_ns = 0;
    OperationRecord record;
  };
  struct Transfer {
    std::uint32_t op = 0;
    std::uint32_t from = 0;
    std::uint32_t to = 0;
    std::uint32_t step = 0;
    std::uint32_t legs_pending = 0;
    double link_done_ns = 0;
    double dma_done_ns = 0;
    double tail_ns = 0;
  };
  /// A rank's next step of an op, or (rank kNoRank) the release of the op's CC cores.
  struct Event {
    std::uint32_t op = 0;
    std::uint32_t rank = 0;
  };
  /// Members that joined the k-th collective of one group so far.
  struct Rendezvous {
    std::vector<std::uint32_t> group;         ///< sorted pids
    std::vector<std::uint64_t> joined;        ///< by group index: collectives joined
    std::uint64_t started = 0;                ///< collectives of this group already complete
    std::deque<std::vector<Member>> pending;  ///< k - started -> members so far
  };

  /// The process (an SC_METHOD): handles every event due now, then waits for the next or for
  /// new work.
  void run();
  void fail(const std::string& where, const std::string& message);
  void join_group(Member member, std::span<const std::uint32_t> group);
  void join_point_to_point(Member member, std::uint32_t peer);
  void create_op(Operation operation, std::vector<Member> members);
  void try_start_waiting();
  void start_rank_step(std::uint32_t op_index, std::uint32_t rank);
  void start_message(std::uint32_t op_index, std::uint32_t rank, const Message& message);
  void landed(std::uint32_t transfer_index);
  void check_rank(Op& op, std::uint32_t op_index, std::uint32_t rank);
  void release(std::uint32_t op_index);
  void push_event(double time_ns, std::uint32_t op, std::uint32_t rank);
  kernel::Instruction make_leg(const Op& op, const Member& from, const Member& to,
                               std::uint64_t bytes, std::uint64_t leg_id) const;
  static double now_ns();

  const config::Params params_;
  const std::uint32_t cores_;
  const std::uint32_t cores_per_chip_;
  const std::uint32_t lnc_;
  const std::uint32_t cc_per_core_;
  const double fixed_ns_;
  core::DmaBackend& dma_;
  std::shared_ptr<CollectiveLog> log_;

  fabric::ResourcePool pool_;
  fabric::Fabric fabric_;
  const bool trace_;  ///< the `collective` component logs at debug level (util/log.hpp)
  std::vector<fabric::ResourceId> reduce_unit_;  ///< by pid
  fabric::Route route_;                          ///< scratch
  std::vector<fabric::ResourceId> path_;         ///< scratch
  std::vector<Message> messages_;                ///< scratch

  std::map<std::vector<std::uint32_t>, Rendezvous> groups_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<Member>> sends_;  ///< (from, to)
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<Member>> recvs_;
  util::SlotPool<std::unique_ptr<Op>> ops_;
  std::vector<std::uint32_t> waiting_;  ///< ops waiting for CC cores, in join order
  std::vector<std::uint32_t> cc_busy_;  ///< by pid: bitmask of busy CC cores
  util::SlotPool<Transfer> transfers_;
  util::TimedQueue<Event> events_;
  sc_core::sc_event work_;
};

/// The factory system::simulate() takes. `log` (optional) receives what ran.
system::CollectiveBackendFactory backend_factory(std::shared_ptr<CollectiveLog> log = nullptr);

}  // namespace trnsim::collective
