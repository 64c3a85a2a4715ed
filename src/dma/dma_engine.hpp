// One DMA engine of a NeuronCore: 16 queues (rings) of work items, the arbiter between them
// (round robin, or strict priority by queue class, switching only at packet boundaries), a
// descriptor unit that processes one descriptor per dma.descriptor_overhead_ns and may prefetch
// dma.descriptor_prefetch descriptors ahead of the data path, and a TLM-2.0 initiator socket.
// The engine holds state and answers "which queue now"; PacketMemorySystem runs the schedule (it
// owns the global time order of all engines' transactions). Leaves out: descriptor fetch traffic to
// HBM, DMA compute, the GpSimd-integrated DMA engines.
#pragma once

#include <tlm_utils/simple_initiator_socket.h>

#include <array>
#include <cstdint>
#include <systemc>
#include <tlm>
#include <vector>

#include "config/params.hpp"
#include "dma/descriptors.hpp"
#include "trnsim/hbm_target.hpp"

namespace trnsim::dma {

/// One DMA's share on one engine (possibly empty: the engine still writes its semaphore, in
/// queue order).
struct EngineItem {
  std::uint32_t transfer = 0;  ///< PacketMemorySystem transfer slot
  PacketCursor cursor;
  double fetchable_ns = 0;        ///< descriptors exist from here (issue + descriptor generation)
  double ready_ns = 0;            ///< data may move from here (+ fixed cost: semaphore-to-start)
  double max_done_ns = 0;         ///< latest completion of its packets (empty item: ready_ns)
  std::uint32_t outstanding = 0;  ///< packets whose write has not been scheduled yet
};

/// FIFO of items addressed by a running sequence number (stable across growth).
class ItemRing {
 public:
  std::uint32_t push(const EngineItem& item);
  EngineItem& at(std::uint32_t sequence) { return items_[sequence & mask_]; }
  const EngineItem& at(std::uint32_t sequence) const { return items_[sequence & mask_]; }
  void pop_front() { ++begin_; }
  std::uint32_t begin() const { return begin_; }
  std::uint32_t end() const { return end_; }

 private:
  std::vector<EngineItem> items_;
  std::uint32_t mask_ = 0;
  std::uint32_t begin_ = 0;
  std::uint32_t end_ = 0;
};

struct DmaQueue {
  ItemRing items;           ///< [begin, issue): issued, completing; [issue, end): to issue
  std::uint32_t issue = 0;  ///< first item with packets left to issue
  double last_done_ns = 0;  ///< completion of the last completed item (in-order semaphores)
  std::uint32_t priority_class = 0;  ///< strict priority: lower class first
};

class DmaEngine : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<DmaEngine> socket;

  DmaEngine(sc_core::sc_module_name name, std::uint32_t core, std::uint32_t index,
            const config::DmaParams& params);

  struct Transport {
    double accept_ns = 0;
    double done_ns = 0;
  };
  /// One loosely-timed transaction issued at `issue_ns` (>= now).
  Transport transport(bool write, std::uint64_t address, std::uint32_t bytes, double issue_ns);

  /// The queue to serve at `time_ns`, or -1; then `next_eligible_ns` is when one becomes eligible
  /// (infinity when nothing is left to issue). Remembers its answer: asked again at a later time
  /// before `next_eligible_ns` with no packet issued and nothing enqueued meanwhile, the answer
  /// is the same (engines blocked on a shared port ask many times per packet).
  int select_queue(double time_ns, double& next_eligible_ns) const;
  /// select_queue without its memory (what the memory must always agree with).
  int choose_queue(double time_ns, double& next_eligible_ns) const;
  /// A packet of `queue` was issued (its cursor moved): round robin goes on after it.
  void packet_issued(std::uint32_t queue);
  /// Earliest time a queue's next packet may start (infinity when nothing is left to issue).
  double next_eligible_ns() const;
  /// Earliest time the next packet of `item` may start (descriptor unit and ready time).
  double eligible_ns(const EngineItem& item) const;
  /// Book the descriptor unit for a descriptor the data path starts at `time_ns`.
  void start_descriptor(const EngineItem& item, double time_ns);
  /// Appends a new item; returns its sequence number.
  std::uint32_t enqueue(std::uint32_t queue, const EngineItem& item);
  /// Moves `queue`'s issue cursor past items with nothing (left) to issue.
  void skip_issued(std::uint32_t queue);
  bool has_work() const { return issuable_count_ != 0; }

  const std::uint32_t core;
  const std::uint32_t index;
  std::vector<DmaQueue> queues;
  double busy_until_ns = 0;      ///< data path free
  double stall_until_ns = 0;     ///< back-pressure: last transaction's accept time
  bool scheduled = false;        ///< an issue event is pending in PacketMemorySystem
  double scheduled_ns = 0;       ///< its time
  std::uint32_t generation = 0;  ///< events of older generations are stale

 private:
  static void advance_issue(DmaQueue& queue);
  void set_issuable(std::uint32_t queue, bool issuable);
  template <class Visit>
  void for_each_issuable(Visit&& visit) const;

  std::uint32_t round_robin_next_ = 0;
  /// Bumped by every change select_queue's answer depends on besides time.
  std::uint64_t version_ = 0;
  struct Choice {
    std::uint64_t version = ~std::uint64_t{0};
    double time_ns = 0;
    double next_eligible_ns = 0;
    int queue = -1;
  };
  mutable Choice choice_;  ///< select_queue's last answer
  const bool strict_priority_;
  const bool use_mask_;  ///< queues fit issuable_mask_
  const double descriptor_overhead_ns_;
  tlm::tlm_generic_payload payload_;
  TransactionTiming* timing_;         ///< owned by payload_ (freed with it)
  std::uint32_t issuable_count_ = 0;  ///< queues with items to issue
  /// Bit q: queue q has items to issue (queues < 64; more queues are scanned one by one).
  std::uint64_t issuable_mask_ = 0;
  double descriptor_free_ns_ = 0;  ///< descriptor unit free
  /// Start times of the last `descriptor_prefetch` descriptors (ring): the unit may not process
  /// descriptor n before descriptor n - prefetch started on the data path.
  std::vector<double> descriptor_starts_;
  std::uint64_t descriptors_started_ = 0;
};

}  // namespace trnsim::dma
