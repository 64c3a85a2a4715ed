// The interface between the NeuronCore sequencers and whatever models DMA timing. A sequencer
// that triggers a DMA submits it at the current simulation time; the backend later reports when
// the transfer completed (every engine involved wrote its semaphore).
// The DMA/HBM models in src/dma (flow, packet and transfer) implement it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <systemc>
#include <utility>

#include "kernel/instruction.hpp"
#include "trnsim/stats.hpp"

namespace trnsim::core {

/// Receives DMA completions. Implemented by NeuronCore.
class DmaClient {
 public:
  virtual ~DmaClient() = default;
  /// DMA `id` of this client completes at `complete` (>= the current simulation time; a backend
  /// that knows the completion time at submission may report it immediately, from inside
  /// submit()). `transfer_ns` is the time its data moved, for statistics. Called exactly once
  /// per submitted DMA, from a SystemC process context or from submit().
  virtual void dma_complete(std::uint64_t id, const sc_core::sc_time& complete,
                            double transfer_ns) = 0;
};

// --- DMA events for traces and profiles (report/trace.hpp, report/profile.hpp) ----------------
// A backend reports each DMA's data movement once its timing is known: one kTransfer
// event per submitted DMA (after its packets, if any), and optionally one kPacket event per
// packet/descriptor chunk it models. Times are absolute simulated ns. Reporting is optional
// (no observer set = no cost beyond one branch); events of one DMA may arrive in any order
// relative to other DMAs' events.

/// One DMA data movement. Self-contained: copies what traces need from the instruction.
struct DmaEvent {
  enum class Kind : std::uint8_t { kTransfer, kPacket };
  Kind kind = Kind::kTransfer;
  std::uint32_t pid = 0;     ///< issuing core (global index)
  std::uint64_t id = 0;      ///< id given to submit() (= sequence)
  kernel::SourceRef source;  ///< statement and loop values
  kernel::Opcode opcode = kernel::Opcode::kDmaCopy;
  kernel::Engine trigger = kernel::Engine::kSync;  ///< sequencer that triggered it
  std::uint8_t queue = 0;                          ///< DMA queue 0-15
  std::int32_t dma_engine = -1;                    ///< DMA engine of the core; -1 = several
  std::int32_t hbm_stack = -1;                     ///< HBM stack touched; -1 = none or several
  kernel::MemoryKind src_memory = kernel::MemoryKind::kHbm;
  kernel::MemoryKind dst_memory = kernel::MemoryKind::kSbuf;
  std::uint32_t packet = 0;           ///< kPacket: index within the transfer
  std::uint64_t bytes = 0;            ///< bytes moved by this transfer/packet
  std::uint64_t hbm_read_bytes = 0;   ///< of `bytes`, read from HBM
  std::uint64_t hbm_write_bytes = 0;  ///< of `bytes`, written to HBM
  double issue_ns = 0;                ///< submitted (kPacket: = transfer issue)
  double start_ns = 0;                ///< data starts moving
  double end_ns = 0;                  ///< data moved (kTransfer: DMA complete)
};

/// Receives DmaEvents; called from submit() or a SystemC process; must not block.
using DmaObserver = std::function<void(const DmaEvent&)>;

/// DmaEvent fields that come from the instruction (kind, times, engine and stack left default).
inline DmaEvent dma_event_of(std::uint32_t pid, std::uint64_t id,
                             const kernel::Instruction& instruction) {
  DmaEvent event;
  event.pid = pid;
  event.id = id;
  event.source = instruction.source;
  event.opcode = instruction.opcode;
  event.trigger = instruction.dma_trigger;
  event.queue = instruction.dma_queue;
  event.src_memory = instruction.src().memory;
  event.dst_memory = instruction.dst().memory;
  event.bytes = std::max(instruction.src().bytes(), instruction.dst().bytes());
  event.hbm_read_bytes =
      event.src_memory == kernel::MemoryKind::kHbm ? instruction.src().bytes() : 0;
  event.hbm_write_bytes =
      event.dst_memory == kernel::MemoryKind::kHbm ? instruction.dst().bytes() : 0;
  return event;
}

class DmaBackend {
 public:
  virtual ~DmaBackend() = default;
  /// Starts DMA `id` (dma_copy or dma_transpose) of core `pid` now. The backend copies what it
  /// needs from `instruction`; the reference is not valid after the call.
  virtual void submit(std::uint32_t pid, std::uint64_t id, const kernel::Instruction& instruction,
                      DmaClient& client) = 0;
  /// Whether submit_ahead() works: the backend's timing is a function of the submission time
  /// and its own state (no SystemC processes or events), so a DMA can be started at a time
  /// ahead of the simulation time when nothing else happens before then.
  virtual bool accepts_submit_ahead() const { return false; }
  /// submit() at `now` (>= the simulation time). Only when accepts_submit_ahead(); the
  /// default throws std::logic_error (a caller's bug).
  virtual void submit_ahead(const sc_core::sc_time& /*now*/, std::uint32_t /*pid*/,
                            std::uint64_t /*id*/, const kernel::Instruction& /*instruction*/,
                            DmaClient& /*client*/) {
    throw std::logic_error("DmaBackend::submit_ahead: this backend does not accept it");
  }

  /// Declares, before the first submit(), that no core's DMAs reach another core's home HBM
  /// stack (its programs have no collective traffic); a backend may then model the cores of each
  /// home stack apart (isolation_group()).
  virtual void home_stacks_only() {}
  /// Cores whose DMAs' timing depends on the DMAs of the cores of their group only (the same
  /// isolation_group(), shared with no other core), with completions reported from submit(),
  /// settle() or the end of a time step (util::EndOfTimeStep), not from a process of the
  /// backend's own that may run at any point of a time step; kNoIsolation: a core's DMAs may depend
  /// on anything. A group whose cores' programs do not interact with other cores runs ahead of
  /// the kernel as a whole, without a bound (NeuronCore::run_ahead()). Only when
  /// accepts_submit_ahead().
  virtual std::uint32_t isolation_group(std::uint32_t /*pid*/) const { return kNoIsolation; }
  static constexpr std::uint32_t kNoIsolation = ~std::uint32_t{0};
  /// The next time at whose end the backend acts for `group` (sc_max_time(): none): DMAs
  /// submitted then wait for it, so that the DMAs several cores submit at one time are taken in
  /// an order of the backend's own, whatever order the kernel ran the cores' processes in, or a
  /// data movement of the backend's own is due then. In step with the kernel the backend settles
  /// itself once nothing else is left to run at that time.
  virtual sc_core::sc_time settles_at(std::uint32_t /*group*/) const {
    return sc_core::sc_max_time();
  }
  /// Does what is due at settles_at(): a group running ahead calls it once it has run every
  /// wake-up of that time.
  virtual void settle(std::uint32_t /*group*/) {}

  /// Adds what the memory system did to `memory_system` of the statistics (docs/outputs.md):
  /// "model", "dma" per core and "hbm" per stack. `elapsed_ns`: the run's duration, for
  /// achieved bandwidths (0: until the last DMA completed).
  virtual void add_statistics(stats::Group& memory_system, double elapsed_ns) const = 0;
  /// The same, rendered.
  nlohmann::json statistics(double elapsed_ns = 0) const {
    stats::Group memory_system("memory_system");
    add_statistics(memory_system, elapsed_ns);
    return memory_system.to_json();
  }

  /// Where this backend reports DmaEvents (empty = nowhere). Set before the simulation starts.
  void set_observer(DmaObserver observer) { observer_ = std::move(observer); }

 protected:
  bool observed() const { return static_cast<bool>(observer_); }
  void report(const DmaEvent& event) const {
    if (observer_) observer_(event);
  }
  /// Reports a whole DMA's event (kind kTransfer) with its times, when observed.
  void report_transfer(DmaEvent& event, double issue_ns, double start_ns, double end_ns) const {
    if (!observer_) return;
    event.issue_ns = issue_ns;
    event.start_ns = start_ns;
    event.end_ns = end_ns;
    observer_(event);
  }

 private:
  DmaObserver observer_;
};

}  // namespace trnsim::core
