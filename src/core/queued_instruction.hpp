// An instruction on its way through a NeuronCore: the dispatcher's copy of it with its in-flight
// id and the producers it waits for, and the FIFO of one engine's stream that holds such entries.
// Entries are handed over by swapping owners (dispatcher -> engine queue -> DMA dispatcher),
// never copied. Leaves out timing: the engines (core/engines) and the core decide when.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <systemc>
#include <vector>

#include "kernel/instruction.hpp"

namespace trnsim::core {

/// No instruction (an id no instruction has).
inline constexpr std::uint64_t kNoId = ~std::uint64_t{0};

/// The PE-array cells a TensorE instruction occupies (row-major grid of pe_tile_granularity
/// cells), or the background-transpose lane (`background`, no cells). Empty (no cells, not
/// background) for every other instruction.
struct PePlacement {
  bool background = false;
  std::size_t first_cell = 0;
  std::size_t cell_rows = 0;
  std::size_t cell_cols = 0;
};

struct QueuedInstruction {
  kernel::Instruction instruction;
  std::uint64_t id = 0;         ///< in-flight id (in_flight.hpp)
  sc_core::sc_time fetched_at;  ///< in its engine's fetch buffer: it may start from then on
  PePlacement placement;        ///< set by the TensorE engine at dispatch; empty otherwise
  std::uint8_t dependency_count = 0;
  std::array<std::uint64_t, 8> dependencies{};   ///< producer ids
  std::vector<std::uint64_t> more_dependencies;  ///< rare overflow beyond 8

  /// True if `predicate(producer id)` holds for any dependency.
  template <typename Predicate>
  bool any_dependency(Predicate predicate) const {
    for (std::uint8_t i = 0; i < dependency_count; ++i) {
      if (predicate(dependencies[i])) return true;
    }
    for (const std::uint64_t producer : more_dependencies) {
      if (predicate(producer)) return true;
    }
    return false;
  }
};

/// FIFO of one engine's stream, a ring of entries allocated on first use and then reused (no
/// allocation per instruction); it grows (doubling) when full. Entries are handed over by
/// swapping owners, never copied: the dispatcher swaps its staged entry in at the back; the
/// engine works on front() in place and may swap it out (a triggered DMA moves to the DMA
/// dispatcher) before pop_front().
class InstructionRing {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  QueuedInstruction& front() { return *entries_[head_]; }
  /// The entry `index` places behind the front (index < size()).
  QueuedInstruction& at(std::size_t index) { return *entries_[(head_ + index) & mask_]; }
  /// Exchanges the front entry with `entry` (which must hold one): the caller keeps the front
  /// instruction, the ring gets a spare entry.
  void swap_front(std::unique_ptr<QueuedInstruction>& entry) { entries_[head_].swap(entry); }
  /// Publishes `entry` at the back and hands back a spare entry of the ring in its place (a
  /// consumed one, or a new one on first use): the dispatcher stages the next instruction in
  /// it, so instructions are never copied on the way to their engine. The spare is the most
  /// recently consumed entry where there is one (in the slot before the front: its memory is
  /// still in the cache), not the one that was consumed a whole ring ago.
  void push_back(std::unique_ptr<QueuedInstruction>& entry) {
    if (size_ == entries_.size()) grow();
    std::unique_ptr<QueuedInstruction>& back = entries_[(head_ + size_) & mask_];
    back.swap(entry);
    ++size_;
    if (size_ < entries_.size()) {
      std::unique_ptr<QueuedInstruction>& recent = entries_[(head_ - 1) & mask_];
      if (recent) recent.swap(entry);
    }
    if (!entry) entry = std::make_unique<QueuedInstruction>();
  }
  void pop_front() {
    head_ = (head_ + 1) & mask_;
    --size_;
  }

 private:
  void grow() {
    const std::size_t capacity = entries_.empty() ? 16 : entries_.size() * 2;
    std::vector<std::unique_ptr<QueuedInstruction>> grown(capacity);
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      grown[i] = std::move(entries_[(head_ + i) & mask_]);
    }
    entries_ = std::move(grown);
    head_ = 0;
    mask_ = capacity - 1;
  }

  std::vector<std::unique_ptr<QueuedInstruction>> entries_;  ///< power-of-two size
  std::size_t mask_ = 0;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace trnsim::core
