// The DMA queues' dispatcher of a NeuronCore, a child module of the core (chip0.core0.dma): takes
// the DMAs and collectives that the engines trigger, starts each on the DMA or collective backend
// once its dependencies are visible (and not before its trigger issued it), earliest ready first,
// and reports completions to the core. One SC_METHOD, woken only for a DMA ready before the time
// it sleeps until; while the core runs ahead of the SystemC kernel, the core runs it in place.
// Leaves out DMA timing itself (core::DmaBackend) and the collective algorithms
// (core::CollectiveBackend).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <systemc>
#include <vector>

#include "core/collective_backend.hpp"
#include "core/core_stats.hpp"
#include "core/deps/id_map.hpp"
#include "core/dma_backend.hpp"
#include "core/in_flight.hpp"
#include "core/queued_instruction.hpp"
#include "util/slot_pool.hpp"

namespace trnsim::core {

class NeuronCore;

class DmaDispatcher : public sc_core::sc_module, public DmaClient, public CollectiveClient {
 public:
  /// `collectives` may be null (the system does not model them: a collective is an error).
  DmaDispatcher(sc_core::sc_module_name name, NeuronCore& core, DmaBackend& dma,
                CollectiveBackend* collectives);

  /// Statistics of a DMA or collective trigger (in-flight id `id`) that engine `lane` (a
  /// kernel::Engine index) committed now and issued at `issued` (DMA or collective row).
  void count_trigger(const kernel::Instruction& instruction, std::size_t lane, std::uint64_t id,
                     const sc_core::sc_time& issued) {
    const bool dma = instruction.engine == kernel::Engine::kDma;
    EngineStats& stats = dma ? dma_stats_ : collective_stats_;
    ++stats.instructions;
    ++stats.op_counts[static_cast<std::size_t>(instruction.opcode)];
    (dma ? dma_time_ : collective_time_).issued(lane, id, issued.value());
    if (dma) count_transfer(instruction);
  }
  /// No trigger is committed any more: the DMA and collective times become final once every
  /// triggered one completed.
  void all_issued() {
    dma_time_.all_issued();
    collective_time_.all_issued();
  }
  /// The front instruction of `queue`, a DMA or collective, was issued by its trigger engine,
  /// which is done with it at `issued`: its entry moves here (and back to the core's pool once
  /// submitted) and it starts when its dependencies are visible.
  void take_triggered(InstructionRing& queue, const sc_core::sc_time& issued);
  /// `record`'s times just became known: looks again at the DMAs blocked on it.
  void producer_scheduled(InFlight& record) {
    if (record.blocked_first != kNoSlot) unblock(record);
  }

  /// The core runs the dispatcher ahead of the kernel at the core's time: starts the DMAs ready
  /// by then and keeps its next wake-up pending with the core. Returns true when the next DMA
  /// must start at the core's time but needs the simulation time to be there (the core stops
  /// running ahead).
  bool run_ahead_step();
  /// Its SC_METHOD's event: notified when a DMA is ready earlier than the time it sleeps until.
  sc_core::sc_event& wake_event() { return work_; }

  void dma_complete(std::uint64_t id, const sc_core::sc_time& complete,
                    double transfer_ns) override;
  void collective_complete(std::uint64_t id, const sc_core::sc_time& complete) override;

 private:
  /// A triggered DMA or collective whose dependencies are not all visible yet.
  struct PendingDma {
    PendingDma() = default;
    // Moved, never copied, when the slot pool grows (sc_time's copy is not noexcept).
    PendingDma(PendingDma&&) noexcept = default;
    PendingDma& operator=(PendingDma&&) noexcept = default;
    PackedInstruction item;                ///< from the trigger engine's stream
    sc_core::sc_time issued;               ///< when the trigger engine issued it
    std::uint32_t next_blocked = kNoSlot;  ///< next slot blocked on the same producer
  };
  /// Ready slots by (time their dependencies are visible, id): started in this order.
  struct ReadyDma {
    sc_core::sc_time ready;
    std::uint64_t id = 0;
    std::uint32_t slot = 0;
    bool operator>(const ReadyDma& other) const {
      return ready != other.ready ? ready > other.ready : id > other.id;
    }
  };

  /// SC_METHOD: starts ready DMAs and collectives at their ready time, earliest first (ties by
  /// id); re-triggers itself on the next ready time or on an earlier one becoming known (while
  /// the core runs ahead, the next ready time is left to the core, and work_ is notified).
  void process();
  /// Starts the DMAs and collectives ready by the core's time, in order. Returns the next ready
  /// time (sc_max_time(): none), or the core's time when the next one must start at the
  /// simulation time and the core is ahead of it.
  sc_core::sc_time start_ready();
  /// A triggered DMA or collective (slot `index`), or one whose producer just got its times:
  /// blocked on the first producer without times, else ready when its dependencies are visible
  /// (and not before its trigger issued it).
  void consider(std::uint32_t index);
  /// Bytes of a DMA triggered now.
  void count_transfer(const kernel::Instruction& instruction);
  /// Considers the DMAs blocked on `record` again.
  void unblock(InFlight& record);

  NeuronCore& core_;
  DmaBackend& dma_;
  CollectiveBackend* collectives_;  ///< null: the system has no collective model
  EngineStats& dma_stats_;
  EngineStats& collective_stats_;
  /// The record's id of the submitted DMA or collective of each sequence number: backends and
  /// their observers see sequence numbers (as traces and profiles show them).
  InFlight& record_of_submitted(std::uint64_t sequence);

  /// Triggered DMAs/collectives not yet started, by slot (no copies of the instruction while
  /// they wait).
  util::SlotPool<PendingDma> pending_;
  /// The DMA or collective being submitted, unpacked (backends copy what they keep).
  QueuedInstruction submitting_;
  std::priority_queue<ReadyDma, std::vector<ReadyDma>, std::greater<>> ready_;
  deps::IdMap submitted_;   ///< sequence number -> in-flight slot, from submission to completion
  sc_core::sc_event work_;  ///< a DMA became ready earlier than wakes_at_
  /// sc_max_time(), "nothing ready": kept here, the function is an out-of-line call.
  const sc_core::sc_time max_time_ = sc_core::sc_max_time();
  /// When process() runs next unless notified (zero while it runs, the maximum time while
  /// nothing is ready).
  sc_core::sc_time wakes_at_;
  /// Busy time and dependency waits of the core's DMAs and collectives (into their rows).
  ConcurrentUnitTime dma_time_;
  ConcurrentUnitTime collective_time_;
  const bool trace_;  ///< the `core.dma` component logs at debug level (util/log.hpp)
};

}  // namespace trnsim::core
