// The transfer-level DMA model (`dma.model = transfer`): the same engines, descriptor costs,
// caps and HBM stacks as the packet model (packet_memory_system.hpp), computed once per DMA instead
// of per packet and per HBM granule, for runs where simulation speed matters more than memory
// detail (sweeps, long kernels).
//
// Timing of a DMA issued at t on core p, as in the packet model: its descriptors can be
// processed from f = t, or when its generator made them (hwdge/swdge: DescriptorGenerators),
// its data moves from f + dma.fixed_cost_ns (ready). Each engine e owning rows has n_e descriptors
// and b_e bytes; its descriptor unit and data path are two FIFO resources:
//   descriptors start  d_e = max(f, descriptor unit free)
//   data ends          x_e = max(data path free + b_e / r, ready + b_e / r, d_e + o + b_e / r,
//                                d_e + n_e o + b_e / (n_e r))
// with o = dma.descriptor_overhead_ns and r = engine bandwidth x the transfer's efficiency (the
// packet model's pipelined descriptor unit in closed form). The DMA's bytes then pass rate
// limits with a theoretical-arrival-time each (GCRA; the DMA's data ends no earlier than the
// limit's arrival time): the core's DMA cap (dma.core_bandwidth_gbps), the core's HBM read and
// write ports (dma.hbm_port_bandwidth_gbps) and each HBM stack touched (hbm.stack_bandwidth_gbps
// less refresh, 1 - t_rfc / t_refi; reads and writes share it). A DMA touching HBM then ends
// with its last packet's HBM access, a row conflict's up to its last byte (controller + t_rp +
// t_rcd + t_cl + the granule's burst: rows are hashed over the banks, so the requests of a DMA's
// last packet meet other rows open; hbm_tail_latency_ns): a read's where it outlasts the packet's
// streaming (short rows only), a write's in full, as it is issued once the packet has been read.
// Completion keeps queue order per core. The DMAs that cores sharing a stack submit at one
// time pass the stack round robin over those cores (each core's first, then each core's second,
// ...), whatever order the kernel ran the cores' processes in: they wait for the end of their
// time step (util::EndOfTimeStep, or settle() from cores running ahead together).
//
// Leaves out (the packet model has them): round-robin interleaving of queues at packet
// boundaries (engines serve DMAs in submission order, so total throughput is right but a DMA
// submitted later on another queue does not slow an earlier one down), strict-priority
// arbitration, HBM channels, banks, row buffers, turnarounds and back-pressure, and per-packet
// trace events. Cost: O(engines) arithmetic per DMA, no SystemC events of its own; completion is
// reported from inside submit(), or at the end of the time step for a core sharing its stack. A
// transfer's split over the engines depends only on its operands' shapes and is kept for the 8
// most recent shapes.
#pragma once

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "config/params.hpp"
#include "core/dma_backend.hpp"
#include "dma/descriptors.hpp"
#include "dma/dma_statistics.hpp"
#include "dma/shape_cache.hpp"
#include "kernel/instruction.hpp"
#include "util/end_of_time_step.hpp"

namespace trnsim::dma {

class TransferLevelDma final : public core::DmaBackend, private util::EndOfTimeStep::Client {
 public:
  /// Exact shortcuts of submit(): the per-shape split cache and engines moved in lockstep.
  /// Off, every DMA is split and every engine computed on its own; the results are the same to
  /// the bit (tests compare the two).
  enum class Shortcuts : bool { kOff, kOn };

  TransferLevelDma(const config::Params& params, std::uint32_t cores,
                   Shortcuts shortcuts = Shortcuts::kOn);

  void submit(std::uint32_t pid, std::uint64_t id, const kernel::Instruction& instruction,
              core::DmaClient& client) override;
  bool accepts_submit_ahead() const override { return true; }
  /// The core's home HBM stack: the engines, caps and ports are per core, and a kernel's HBM
  /// operands are in its own chip's address space, so its DMAs reach only its home stack (a
  /// collective's transfers may reach others; a program with collectives never runs ahead
  /// without a bound).
  std::uint32_t isolation_group(std::uint32_t pid) const override;
  sc_core::sc_time settles_at(std::uint32_t group) const override;
  void settle(std::uint32_t group) override;
  void submit_ahead(const sc_core::sc_time& now, std::uint32_t pid, std::uint64_t id,
                    const kernel::Instruction& instruction, core::DmaClient& client) override;

  /// The same top-level shape as PacketMemorySystem::statistics ("dma" per core, "hbm" per stack),
  /// without packet, channel and row-buffer figures; "model": "transfer".
  void add_statistics(stats::Group& memory_system, double elapsed_ns) const override;

  /// min(engines x engine bandwidth, core DMA cap), bytes per ns.
  double core_peak_bytes_per_ns() const;

 private:
  struct RateLimit {
    double bytes_per_ns = 1;
    double tat_ns = 0;  ///< theoretical arrival time of the bytes admitted so far
    /// Admits `bytes` whose data starts at `start_ns`; returns when they are through.
    double admit(double start_ns, double bytes);
  };
  /// A transfer's split over the engines: what submit() needs of its TransferPlan. It depends
  /// only on the operands' shapes (not on their addresses), so it is computed once per shape.
  struct EngineSplit {
    std::uint32_t engines = 0;        ///< engines owning rows: [0, engines)
    std::vector<double> descriptors;  ///< per engine
    std::vector<double> busy_ns;      ///< per engine: its bytes / its rate
    std::uint64_t total_descriptors = 0;
    bool uniform = false;  ///< every engine in [0, engines) has the same share
    double rate = 1;       ///< bytes per ns of one engine for this transfer
    double row_bytes = 0;  ///< bytes of one (outer, row) block
    std::uint64_t descriptors_per_block = 0;
    std::uint64_t bytes = 0;  ///< max(src bytes, dst bytes)
  };
  /// The split of `instruction`, from a small cache of recent shapes.
  const EngineSplit& engine_split(const kernel::Instruction& instruction);
  void compute_split(const kernel::Instruction& instruction, EngineSplit& split) const;

  const config::Params params_;
  const std::uint32_t cores_;
  const std::uint32_t engines_per_core_;
  const StackLayout layout_;
  std::vector<double> descriptor_free_ns_;  ///< per engine (pid * engines + e)
  std::vector<double> data_free_ns_;        ///< per engine
  /// Per core: engines 1 .. lockstep-1 are in engine 0's state and their own entries in the two
  /// vectors above are stale (a stream of like transfers updates engine 0 alone). Engines from
  /// `lockstep` on have their own entries.
  std::vector<std::uint32_t> lockstep_;
  const bool shortcuts_;
  std::vector<RateLimit> core_caps_;       ///< per core
  std::vector<RateLimit> read_ports_;      ///< per core
  std::vector<RateLimit> write_ports_;     ///< per core
  std::vector<RateLimit> stacks_;          ///< per HBM stack of every chip
  std::vector<std::uint32_t> home_cores_;  ///< per HBM stack: the simulated cores it is home to
  /// A DMA up to its HBM stack: its timing on the core's own engines, cap and ports is final.
  struct Pending {
    core::DmaClient* client = nullptr;
    std::uint64_t id = 0;
    std::uint32_t pid = 0;
    std::uint32_t queue = 0;
    std::uint32_t rank = 0;  ///< the core's DMAs before it in its batch
    sc_core::sc_time submitted;
    double first_data_ns = 0;
    double done_ns = 0;            ///< through the engines, the core's cap and its ports
    double tail_ns = 0;            ///< the HBM latency after the last packet (hbm_tail_latency_ns)
    std::int32_t read_stack = -1;  ///< -1: none
    std::int32_t write_stack = -1;
    std::uint64_t read_bytes = 0;
    std::uint64_t write_bytes = 0;
    core::DmaEvent event;  ///< filled only when an observer is set
  };
  /// Passes the stack, completes queue order and reports the completion.
  void complete(Pending& dma);
  /// Per HBM stack shared by several cores: the DMAs its cores submitted at one time, completed
  /// at the end of that time step (settle()).
  std::vector<std::vector<Pending>> batches_;
  std::uint32_t open_batches_ = 0;  ///< non-empty batches_
  /// Settles every batch due: no other process is left at the current time.
  void time_step_ended() override;
  /// Asks util::EndOfTimeStep for the end of the earliest time step a batch waits for (or
  /// withdraws the request when none does).
  void request_settling();
  std::vector<CoreDmaStats> core_stats_;
  std::vector<OnChipBytes> on_chip_;
  std::vector<double> queue_done_ns_;  ///< per (core, queue): its latest DMA's completion
  std::vector<StackBytes> stack_stats_;
  DescriptorGenerators generators_;  ///< hwdge / swdge, per core
  const bool trace_;                 ///< the `dma` component logs at debug level
  double last_complete_ns_ = 0;
  ShapeCache<EngineSplit, 8> split_cache_;
  EngineSplit uncached_split_;  ///< shortcuts off: computed anew for every DMA
};

}  // namespace trnsim::dma
