// The memory system of a simulation: per NeuronCore dma.engines_per_core DMA engines
// (DmaEngine), the fabric (Interconnect), one HBM target per HBM stack of each chip involved
// (built by the factory it is given, trnsim/hbm_target.hpp; shared by hbm.cores_per_stack
// cores) and SBUF/PSUM endpoints per core
// (memory::OnChipMemory), all talking loosely-timed TLM-2.0. Implements core::DmaBackend.
//
// Timing of a DMA issued at t: its descriptors exist from t, or when its generator made them
// (hwdge/swdge: DescriptorGenerators, one instruction at a time per generator); its data may
// move dma.fixed_cost_ns later (synchronisation and semaphore-to-start, a latency overlapping
// every other DMA in flight). Each engine's descriptor unit takes dma.descriptor_overhead_ns
// per descriptor, pipelined with its data path. Each engine owning rows moves them packet by packet
// (queue arbitration at packet boundaries, per-engine bandwidth, the core's DMA cap, memory
// back-pressure); the DMA completes when every engine has completed it in queue order (idle engines
// too: they write their semaphore). Reported transfer_ns = completion - first packet.
//
// Granularity and cost: the unit of work is the packet (<= dma.packet_bytes, contiguous on both
// sides); HBM bank and bus timing is analytic per interleave granule. One internal event queue
// orders every engine's packet issues and writes in global time, so each memory target sees its
// transactions in time order and can schedule them on arrival; no sc_event per packet. A single
// SC_METHOD wakes at most once per dma.fixed_cost_ns of simulated time while DMAs are active:
// a DMA submitted at t cannot move data before t + fixed_cost_ns, so everything up to then is
// final (conservative lookahead), and completions are reported ahead of time.
// Leaves out: collectives' use of the engines, DMA compute, descriptor traffic in HBM, the links
// between chips (an access to another chip's HBM goes straight to that stack).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <systemc>
#include <vector>

#include "config/params.hpp"
#include "core/dma_backend.hpp"
#include "dma/descriptors.hpp"
#include "dma/dma_engine.hpp"
#include "dma/dma_statistics.hpp"
#include "dma/interconnect.hpp"
#include "kernel/instruction.hpp"
#include "memory/onchip_memory.hpp"
#include "trnsim/hbm_target.hpp"
#include "util/slot_pool.hpp"
#include "util/timed_queue.hpp"

namespace trnsim::dma {

class PacketMemorySystem : public sc_core::sc_module, public core::DmaBackend {
 public:
  SC_HAS_PROCESS(PacketMemorySystem);

  /// Elaborates the memory system for `cores` cores (global indices 0..cores-1), with one HBM
  /// target per stack from `make_stack`.
  PacketMemorySystem(sc_core::sc_module_name name, const config::Params& params,
                     std::uint32_t cores, const HbmTargetFactory& make_stack);
  ~PacketMemorySystem() override;

  void submit(std::uint32_t pid, std::uint64_t id, const kernel::Instruction& instruction,
              core::DmaClient& client) override;

  /// Statistics with units in the key names. `elapsed_ns`: the run's duration for achieved
  /// bandwidths (0: up to the last DMA completion).
  void add_statistics(stats::Group& memory_system, double elapsed_ns) const override;

  /// Global index of the HBM stack serving core `pid`: its chip's stacks, local core index /
  /// hbm.cores_per_stack (the runtime places a core's buffers in its own stack).
  std::size_t stack_count() const { return stacks_.size(); }
  const CoreDmaStats& core_stats(std::uint32_t pid) const { return core_stats_[pid]; }
  /// Peak DMA bandwidth of one core: min(engines x engine bandwidth, core cap), bytes/ns.
  double core_peak_bytes_per_ns() const;

 private:
  struct Transfer {
    TransferPlan plan;
    core::DmaClient* client = nullptr;
    std::uint64_t id = 0;
    std::uint32_t pid = 0;
    std::uint32_t queue = 0;
    std::uint32_t pending = 0;  ///< engines that have not completed it
    double issue_ns = 0;
    core::DmaEvent event;                ///< filled only when an observer is set
    std::uint32_t packets_reported = 0;  ///< packet events reported so far (observer set)
    double first_packet_ns = 0;
    double complete_ns = 0;
  };
  /// Engine issue event (write == false) or the write half of a packet (write == true); its
  /// time is the queue entry's.
  struct Event {
    std::uint64_t address = 0;
    std::uint32_t engine = 0;
    std::uint32_t item = 0;  ///< write: item sequence; issue: the engine's generation
    std::uint32_t bytes = 0;
    std::uint16_t queue = 0;
    bool write = false;
  };

  void wake();
  void advance(double horizon_ns);
  /// Reports packet `packet` of `transfer`, occupying `engine` from `start_ns` to `end_ns` (its
  /// reads and writes may complete later), and folds its HBM stack into the transfer's event.
  void report_packet(Transfer& transfer, const DmaEngine& engine, const Packet& packet,
                     double start_ns, double end_ns, bool reads_hbm, bool writes_hbm);
  /// Makes `engine` look for a packet to issue at `time_ns` (unless it already will earlier).
  void schedule(DmaEngine& engine, std::uint32_t engine_index, double time_ns);
  void issue_packet(std::uint32_t engine_index, double time_ns);
  void finish_packet(const Event& event, double time_ns);
  void complete_items(DmaEngine& engine, DmaQueue& queue);
  void engine_done(std::uint32_t transfer, double done_ns);
  std::uint64_t fabric_prefix(const kernel::AccessPattern& pattern, std::uint32_t pid) const;

  const config::Params params_;
  const std::uint32_t cores_;
  const StackLayout layout_;
  const bool trace_;  ///< the `dma` component logs at debug level (util/log.hpp)
  const std::uint32_t engines_per_core_;
  const double lookahead_ns_;
  const double engine_bytes_per_ns_;
  const double core_bytes_per_ns_;

  std::unique_ptr<Interconnect> interconnect_;
  std::vector<std::unique_ptr<HbmTarget>> stacks_;
  std::vector<std::unique_ptr<memory::OnChipMemory>> sbufs_;
  std::vector<std::unique_ptr<memory::OnChipMemory>> psums_;
  std::vector<std::unique_ptr<DmaEngine>> engines_;  ///< pid * engines_per_core + engine

  util::SlotPool<Transfer> transfers_;
  util::TimedQueue<Event> events_;
  const double fabric_tolerance_ns_;      ///< burst allowance of the core DMA cap
  std::vector<double> fabric_tat_ns_;     ///< per core: the cap's theoretical arrival time (GCRA)
  const double port_bytes_per_ns_;        ///< dma.hbm_port_bandwidth_gbps, per direction
  const double port_tolerance_ns_;        ///< burst allowance of the HBM port caps
  std::vector<double> hbm_read_tat_ns_;   ///< per core: HBM read port cap (GCRA)
  std::vector<double> hbm_write_tat_ns_;  ///< per core: HBM write port cap (GCRA)
  sc_core::sc_event wake_event_;
  bool advancing_ = false;
  double processed_ns_ = 0;  ///< simulated time up to which events are processed (final)
  double last_complete_ns_ = 0;
  std::vector<CoreDmaStats> core_stats_;
  DescriptorGenerators generators_;  ///< hwdge / swdge, per core
};

}  // namespace trnsim::dma
