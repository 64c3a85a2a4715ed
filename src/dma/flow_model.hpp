// The flow-level DMA model (`dma.model = flow`): the same engines, queues, descriptor costs,
// caps and HBM stacks as the packet model (packet_memory_system.hpp), with each DMA's share on each
// engine moved as a fluid instead of packet by packet.
//
// Timing of a DMA issued at t on core p, as in the packet model: its descriptors exist from
// f = t, or when its generator made them (hwdge/swdge: DescriptorGenerators); its data may move
// from ready = max(f + dma.descriptor_overhead_ns, f + dma.fixed_cost_ns). Each engine owning
// rows gets an item of b_e bytes and n_e descriptors on the DMA's queue. An engine serves its
// queues in order within a queue and round robin between the queues whose head item is ready
// (under dma.arbitration strict_priority: between those of the highest priority class with a
// ready head; the others wait), one packet per queue and turn, as the packet model does, but in
// closed form: a round moves one
// packet p_j = min(descriptor bytes D_j, dma.packet_bytes) of each ready item j and takes
// T = sum p_j / r_j (r_j: engine bandwidth x the transfer's efficiency), so item i moves at
// p_i / T, while the engine's descriptor unit has descriptors prefetched; once they are spent,
// T = max(sum p_j / r_j, sum o p_j / D_j) (data path and descriptor unit pipelined, o: the
// per-descriptor occupancy; alone: min(r, D / o)). The descriptor unit, as the packet model's,
// works ahead of the data path whenever descriptors exist that it has not processed: it adds
// 1 / o descriptors per ns to its prefetch (at most dma.descriptor_prefetch, and never more than
// the descriptors of the engine's fetchable items not yet consumed) while the data path takes
// p_j / D_j per packet, so it fills during a DMA's latency and during data movement of large
// descriptors, and drains during small ones. The rates then
// pass the shared caps in turn, each scaling down the items it carries in proportion when their
// sum exceeds it (the core's cap and ports only once the burst allowance the packet model gives
// them, one 4 KiB packet per engine, is spent: a token bucket): the core's DMA cap, its HBM read
// and write ports, and each HBM stack
// (hbm.stack_bandwidth_gbps less refresh, 1 - t_rfc / t_refi; all cores of the stack, which carry
// a DMA's reads and its writes: an HBM -> HBM copy within a stack twice). An engine
// whose item a cap holds back moves no other data meanwhile (back-pressure, as in the packet
// model). Rates change only when an item becomes ready or finishes or an engine's prefetch runs
// out, so the model advances from one such event to the next (descriptors becoming fetchable are
// events too: they let the descriptor unit work). A DMA completes when all its items did, in queue
// order per engine, plus its last packet's HBM access as in the transfer model
// (hbm_tail_latency_ns: a read's latency where it outlasts the packet's streaming, a write's in
// full).
//
// Order: a DMA takes part from the end of the time step it was submitted in, and the DMAs
// submitted in one time step join in core order (one core's in its order), whatever order the
// kernel ran the cores' processes in; the model moves data at the end of time steps too
// (util::EndOfTimeStep), so its results do not depend on that order either.
//
// Cost: O(items in flight) per event, two or three events per item. While every DMA in flight on a
// core is spread evenly over all its engines, the engines hold identical items, kept once
// (lockstep): one item per DMA instead of one per engine, with the same results. The model wakes
// at most once per dma.fixed_cost_ns of simulated time while DMAs are active: a DMA submitted
// at t cannot move data before t + fixed_cost_ns, so everything up to then is final (conservative
// lookahead). When no core's DMAs reach another core's home HBM stack (no collective traffic:
// home_stacks_only()), the cores of each home stack form a partition with state and time of its
// own, so a group of cores can run ahead of the kernel with it (isolation_group(), settle()).
// Leaves out (the packet model has them): HBM channels,
// banks, row buffers and turnarounds, packet granularity (a queue's turn is a packet, not a fluid
// share, and prefetch is a fluid amount, not whole descriptors), and per-packet trace events.
#pragma once

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <systemc>
#include <vector>

#include "config/params.hpp"
#include "core/dma_backend.hpp"
#include "dma/descriptors.hpp"
#include "dma/dma_statistics.hpp"
#include "dma/shape_cache.hpp"
#include "kernel/instruction.hpp"
#include "util/end_of_time_step.hpp"
#include "util/sim_time.hpp"
#include "util/slot_pool.hpp"
#include "util/timed_queue.hpp"

namespace trnsim::dma {

class FlowLevelDma : public sc_core::sc_module,
                     public core::DmaBackend,
                     private util::EndOfTimeStep::Client {
 public:
  FlowLevelDma(sc_core::sc_module_name name, const config::Params& params, std::uint32_t cores);

  void submit(std::uint32_t pid, std::uint64_t id, const kernel::Instruction& instruction,
              core::DmaClient& client) override;
  bool accepts_submit_ahead() const override { return true; }
  void submit_ahead(const sc_core::sc_time& now, std::uint32_t pid, std::uint64_t id,
                    const kernel::Instruction& instruction, core::DmaClient& client) override;

  /// Declares that no core's DMAs reach another core's home HBM stack (no collective traffic):
  /// the cores of each home stack are then modelled apart (isolation_group() is their stack).
  /// Before the first submit().
  void home_stacks_only() override;
  std::uint32_t isolation_group(std::uint32_t pid) const override;
  /// The next time the group's partition acts: the end of the time step of the DMAs it holds,
  /// or its next data movement.
  sc_core::sc_time settles_at(std::uint32_t group) const override;
  void settle(std::uint32_t group) override;

  /// The same top-level shape as PacketMemorySystem::statistics ("dma" per core, "hbm" per stack),
  /// without packet, channel and row-buffer figures; "model": "flow".
  void add_statistics(stats::Group& memory_system, double elapsed_ns) const override;

  /// min(engines x engine bandwidth, core DMA cap), bytes per ns.
  double core_peak_bytes_per_ns() const;

 private:
  static constexpr std::uint32_t kNone = ~0u;
  /// What a DMA's timing takes from its plan: a function of its opcode and its operands' shapes
  /// (same_shape), kept for the 8 most recent shapes.
  struct Shape {
    double rate = 0;        ///< engine data path, bytes/ns
    double row_bytes = 0;   ///< bytes of one (outer, row) block
    double packet = 0;      ///< min(descriptor bytes, dma.packet_bytes)
    double latency_ns = 0;  ///< HBM access latency not covered by streaming (hbm_tail_latency_ns)
    std::uint64_t outer = 0;
    std::uint64_t rows = 0;
    std::uint64_t rows_per_engine = 1;
    std::uint64_t descriptors_per_block = 0;
    std::uint64_t bytes = 0;        ///< max(source, destination bytes)
    std::uint64_t descriptors = 0;  ///< over all engines
    std::uint32_t engines = 0;      ///< engines owning rows
    bool even = false;              ///< the same rows and descriptors on every engine
    std::vector<double> busy_ns;    ///< per engine: its data-path time
  };
  void compute_shape(const kernel::Instruction& instruction, Shape& shape) const;
  ShapeCache<Shape, 8> shapes_;

  /// A submitted DMA waiting for the end of its time step, with what its items need.
  struct Submitted {
    core::DmaClient* client = nullptr;
    std::uint64_t id = 0;
    std::uint32_t pid = 0;
    std::uint32_t queue = 0;
    double issue_ns = 0;
    double fetchable_ns = 0;  ///< its descriptors exist from here
    double ready_ns = 0;      ///< its data may move from here
    double latency_ns = 0;    ///< HBM access latency not covered by streaming
    double rate = 0;          ///< engine data path, bytes/ns
    double row_bytes = 0;
    double packet = 0;
    std::uint64_t outer = 0;
    std::uint64_t rows = 0;
    std::uint64_t rows_per_engine = 1;
    std::uint64_t descriptors_per_block = 0;
    std::int32_t read_stack = -1;
    std::int32_t write_stack = -1;
    bool even = false;     ///< spread evenly over all the core's engines
    core::DmaEvent event;  ///< filled only when an observer is set
    std::uint64_t rows_of(std::uint32_t engine) const {
      if (outer == 0) return 0;
      const std::uint64_t first = std::min<std::uint64_t>(rows, engine * rows_per_engine);
      return std::min<std::uint64_t>(rows, (engine + 1) * rows_per_engine) - first;
    }
  };
  struct Transfer {
    core::DmaClient* client = nullptr;
    std::uint64_t id = 0;
    std::uint32_t pid = 0;
    std::uint32_t queue = 0;
    std::uint32_t pending = 0;  ///< items not finished
    double issue_ns = 0;
    double first_data_ns = 0;
    double done_ns = 0;     ///< latest item completion (queue order applied)
    double latency_ns = 0;  ///< HBM access latency not covered by streaming
    core::DmaEvent event;   ///< filled only when an observer is set
  };
  /// One DMA's share on one engine.
  struct Item {
    std::uint32_t transfer = 0;
    std::uint32_t engine = 0;  ///< core x engines_per_core + engine, within the partition
    std::uint32_t core = 0;    ///< within the partition
    std::uint32_t queue = 0;
    std::uint32_t priority_class = 0;  ///< class_of(queue)
    double ready_ns = 0;
    double remaining = 0;         ///< bytes
    double packet = 0;            ///< bytes of one of its packets: min(descriptor, packet_bytes)
    double data_ns_per_byte = 0;  ///< engine data path: 1 / (bandwidth x efficiency)
    double descriptor_ns_per_byte = 0;  ///< descriptor unit: overhead / descriptor bytes
    double descriptors_per_byte = 0;    ///< descriptors the data path consumes per byte moved
    double descriptors = 0;             ///< its descriptors (for the prefetch unit)
    double fetchable_ns = 0;            ///< its descriptors exist from here
    double rate = 0;                    ///< bytes/ns now
    std::int32_t read_stack = -1;
    std::int32_t write_stack = -1;
    std::uint32_t active_slot = kNone;  ///< index in active_, or kNone
    /// Engines this item stands for: all the core's engines while the core runs in lockstep
    /// (every DMA in flight spread evenly over them, so they all hold identical items), else 1.
    std::uint32_t lanes = 1;
    bool moved = false;  ///< has moved data (its transfer's first data is set)
  };
  struct EngineState {
    std::vector<std::vector<std::uint32_t>> queues;  ///< item FIFOs (head at index `heads[q]`)
    std::vector<std::uint32_t> heads;
    std::vector<double> queue_done_ns;  ///< completion of the queue's last item (queue order)
    std::uint32_t ready_queues = 0;     ///< queues whose head is active
    double round_data_ns = 0;           ///< scratch: one round-robin round's data-path time
    double round_descriptor_ns = 0;     ///< scratch: and its descriptor-unit time
    /// Scratch: the priority class it serves (strict priority: the highest among its ready
    /// items; round robin: every item's, 0).
    std::uint32_t serving_class = 0;
    /// Descriptor unit: `prefetched` descriptors processed ahead of the data path (at most
    /// dma.descriptor_prefetch and at most `outstanding`, the descriptors of its fetchable items
    /// the data path has not consumed yet); `consumed_per_ns` the data path's use at the
    /// current rates; `caught_up_ns` since when the unit has had nothing left to process.
    double prefetched = 0;
    double outstanding = 0;
    double consumed_per_ns = 0;
    double caught_up_ns = -sim_time::kNeverNs;
    std::uint32_t fetched_items = 0;  ///< items whose descriptors count in `outstanding`
    bool prefetching = false;         ///< listed in prefetching_
  };
  /// A per-core rate cap with a burst allowance: `credit` bytes may pass above the rate.
  struct Bucket {
    double capacity = 0;  ///< bytes/ns
    double credit = 0;    ///< bytes, at most depth_bytes_
    double load = 0;      ///< bytes/ns passing now
  };

  /// The cores modelled together (all of them, or those of one home stack) with their own
  /// time: everything that moves data. Indices of cores and engines are within the partition.
  class Partition {
   public:
    Partition(FlowLevelDma& model, std::vector<std::uint32_t> pids);
    /// The end of the time step of the DMAs it holds, or its next wake-up (sc_max_time: none).
    sc_core::sc_time settles_at() const;
    /// At settles_at(): the held DMAs join, then the model moves data if it is due.
    void settle();
    /// Holds `dma`, submitted at `now`, for the end of that time step.
    void hold(const sc_core::sc_time& now, Submitted&& dma);
    std::uint32_t core_of(std::uint32_t pid) const;

   private:
    void join(Submitted& dma);
    void wake(const sc_core::sc_time& now);
    /// wake_at_ no later than the next event (now: `now`, `now_ns`).
    void schedule_wake(const sc_core::sc_time& now, double now_ns);
    /// Processes every event up to `horizon_ns`.
    void advance(double horizon_ns);
    void progress_to(double time_ns);
    void recompute_rates();
    void make_head_pending(std::uint32_t engine, std::uint32_t queue);
    void activate(std::uint32_t item, double time_ns);
    void finish(std::uint32_t item, double time_ns);
    void transfer_done(std::uint32_t transfer);
    /// Ends a core's lockstep: each of its items becomes one item per engine, in the same state.
    void split_lanes(std::uint32_t core);
    std::uint32_t new_item();
    /// The next event: an item finishing, or next_change_ns().
    double next_event_ns() const;
    /// The next event other than an item finishing: an item becoming ready, a bucket running
    /// dry, descriptors becoming fetchable, an engine's prefetch running out.
    double next_change_ns() const;
    /// An item's descriptors become fetchable on its engine at `time_ns` (now or later).
    void add_descriptors(std::uint32_t item, double time_ns);
    /// When the engine's prefetched descriptors run out with the data path still faster than
    /// the descriptor unit (never if they do not).
    double prefetch_dry_ns(const EngineState& engine) const;
    /// Advances a bucket's credit by `dt_ns` at its current load.
    void drain(Bucket& bucket, double dt_ns) const;
    /// When a draining bucket runs out of credit (never if it does not drain).
    double exhausted_ns(const Bucket& bucket) const;

    FlowLevelDma& model_;
    std::vector<std::uint32_t> pids_;  ///< its cores, global indices, ascending
    std::vector<Submitted> held_;      ///< submitted in the time step of held_at_
    std::vector<Submitted> joining_;   ///< scratch: the held DMAs while they join (settle())
    sc_core::sc_time held_at_;
    sc_core::sc_time wake_at_;  ///< next data movement due (sc_max_time: none)
    util::SlotPool<Transfer> transfers_;
    util::SlotPool<Item> items_;
    std::vector<EngineState> engines_;
    std::vector<std::uint32_t> active_;          ///< items moving data now
    util::TimedQueue<std::uint32_t> pending_;    ///< items by the time they become ready
    util::TimedQueue<std::uint32_t> fetchable_;  ///< items by the time their descriptors exist
    std::vector<std::uint32_t> prefetching_;     ///< engines with descriptors outstanding
    std::vector<std::uint32_t> dry_;             ///< scratch: engines whose prefetch runs out now
    std::vector<Bucket> core_caps_;              ///< per core
    std::vector<Bucket> read_ports_;
    std::vector<Bucket> write_ports_;
    std::vector<std::uint32_t> touched_;  ///< cores whose buckets are not idle and full
    std::vector<bool> core_touched_;
    std::vector<std::uint32_t> draining_;  ///< cores with a bucket spending its credit
    std::vector<double> stack_load_;       ///< scratch: per stack
    std::vector<std::uint32_t> to_finish_;
    std::vector<Bucket*> exhausted_;
    std::vector<std::uint32_t> core_items_;  ///< per core: items queued on its engines
    /// Per core: its engines hold identical items, kept once on its first engine (lanes > 1).
    /// A core enters lockstep when a DMA spread evenly over all engines finds it idle, and
    /// leaves it when a DMA that is not arrives (split_lanes).
    std::vector<bool> lockstep_;
    double model_ns_ = 0;  ///< time up to which every item's progress is accounted
  };

  void time_step_ended() override;
  /// Asks util::EndOfTimeStep for the earliest partition's settles_at().
  void request_settling();
  /// Rebuilds the partitions: one per home stack, or one for all cores.
  void partition(bool by_home_stack);

  const config::Params params_;
  const std::uint32_t cores_;
  const std::uint32_t engines_per_core_;
  const std::uint32_t queues_per_engine_;
  /// dma.arbitration strict_priority: an engine serves only the ready items of its highest
  /// priority class (queue q in class q x dma.priority_classes / queues, 0 highest).
  const bool strict_priority_;
  const std::uint32_t priority_classes_;
  std::uint32_t class_of(std::uint32_t queue) const {
    return strict_priority_ ? queue * priority_classes_ / queues_per_engine_ : 0;
  }
  const StackLayout layout_;
  const double lookahead_ns_;
  const double stack_bytes_per_ns_;
  const double depth_bytes_;         ///< burst allowance of a core's cap and ports
  const double descriptors_per_ns_;  ///< descriptor unit rate (0: no descriptor cost)
  const double prefetch_limit_;      ///< dma.descriptor_prefetch
  bool by_home_stack_ = false;       ///< home_stacks_only() was called
  std::vector<Partition> partitions_;
  std::vector<std::uint32_t> partition_of_;  ///< per core
  const sc_core::sc_time never_;             ///< sc_max_time()
  double last_complete_ns_ = 0;

  std::vector<CoreDmaStats> core_stats_;
  std::vector<OnChipBytes> on_chip_;
  std::vector<StackBytes> stack_stats_;
  DescriptorGenerators generators_;  ///< hwdge / swdge, per core
  const bool trace_;                 ///< the `dma` component logs at debug level
};

}  // namespace trnsim::dma
