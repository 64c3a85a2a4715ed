// An instruction on its way through a NeuronCore: the dispatcher's working copy of it with its
// in-flight id and the producers it waits for (QueuedInstruction), the compact form it waits in
// (PackedInstruction: only the operand slots, loop values and producers it has, without its
// dependency regions, which the tracker has already taken), the contents that entries of
// instructions with the same content key share (SharedContents), and the FIFO of one engine's
// stream that holds packed entries and unpacks its front. A core keeps up to
// sequencer.max_in_flight_instructions of them, so their size is the bulk of its memory. Leaves
// out timing: the engines (core/engines) and the core decide when.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <systemc>
#include <unordered_map>
#include <utility>
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
  std::uint32_t first_cell = 0;
  std::uint32_t cell_rows = 0;
  std::uint32_t cell_cols = 0;

  bool empty() const { return !background && cell_rows == 0 && cell_cols == 0 && first_cell == 0; }
};

struct QueuedInstruction {
  kernel::Instruction instruction;  ///< in compact form (kernel::is_compact)
  std::uint64_t id = 0;             ///< in-flight id (in_flight.hpp)
  sc_core::sc_time fetched_at;      ///< in its engine's fetch buffer: it may start from then on
  PePlacement placement;            ///< set by the TensorE engine at dispatch; empty otherwise
  std::vector<std::uint64_t> dependencies;  ///< producer ids

  std::size_t dependency_count() const { return dependencies.size(); }
  std::uint64_t dependency(std::size_t index) const { return dependencies[index]; }
  /// True if `predicate(producer id)` holds for any dependency.
  template <typename Predicate>
  bool any_dependency(Predicate predicate) const {
    for (const std::uint64_t producer : dependencies) {
      if (predicate(producer)) return true;
    }
    return false;
  }
};

/// The contents of the instructions of one family (kernel::Instruction::family_key: equal apart
/// from sequence, source, content key, operand offsets and DMA queue) waiting in one core, each
/// packed once from the first of them that arrives (the template) and shared by the entries of
/// all of them. Reference-counted; contents nobody references are kept for reuse until they are
/// more than half of those held.
class SharedContents {
 public:
  struct Content {
    std::uint32_t references = 0;
    std::vector<std::byte> bytes;  ///< the template's packed content
    /// The template's own values of what members may change.
    std::uint64_t content_key = 0;
    std::array<std::uint64_t, kernel::kSlotCount> offsets{};
    std::uint8_t dma_queue = 0;
  };

  /// The content of `instruction`'s family (family_key != 0), packed from `instruction` on first
  /// use, with one more reference.
  Content& acquire(const kernel::Instruction& instruction);
  /// Drops one reference of `content` (acquired from this table).
  void release(Content& content);
  /// Contents held (referenced or kept for reuse).
  std::size_t size() const { return contents_.size(); }

 private:
  /// Unreferenced contents kept before they are swept out (at most half of those held).
  static constexpr std::size_t kKeptUnreferenced = 64;

  std::unordered_map<std::uint64_t, Content> contents_;
  std::size_t unreferenced_ = 0;
};

/// A QueuedInstruction at rest, as bytes: id, engine and producers at fixed places (read
/// without unpacking), then its sequence and source (only its enclosing loops' values), then
/// its content: when it has a family key, what differs from the family's template in
/// SharedContents (content key, operand offsets, DMA queue; the entry holds a reference to the
/// template beside its bytes), else the content itself with
/// only its used operand slots (each with only `rank` strides). Its dependency regions are left
/// out: unpack() gives num_reads = num_writes = 0. About 60-110 bytes with a shared content and
/// 250-400 without, against sizeof(QueuedInstruction) ~ 1.3 KiB. Made by EntryPool::pack(); the
/// storage is kept when the entry is reused (EntryPool hands out entries by size).
class PackedInstruction {
 public:
  /// Storage comes in multiples of this (EntryPool's size classes).
  static constexpr std::size_t kStorageGranule = 32;

  PackedInstruction() = default;
  // Moved, never copied, when vectors of entries grow (sc_time's copy is not noexcept); the
  // moved-from entry holds no shared content, so it is never released twice.
  PackedInstruction(PackedInstruction&& other) noexcept
      : fetched_at_(other.fetched_at_),
        bytes_(std::move(other.bytes_)),
        shared_(std::exchange(other.shared_, nullptr)) {}
  PackedInstruction& operator=(PackedInstruction&& other) noexcept {
    fetched_at_ = other.fetched_at_;
    bytes_ = std::move(other.bytes_);
    shared_ = std::exchange(other.shared_, nullptr);
    return *this;
  }

  /// `to` becomes the packed entry (its instruction in compact form, without regions); `to`
  /// must hold a compact-form instruction without regions (a default one or an unpacked one).
  void unpack(QueuedInstruction& to) const;
  /// Drops its reference to a shared content, if it holds one (before it is reused).
  void release(SharedContents& contents);

  bool holds_storage() const { return !bytes_.empty(); }
  /// Bytes of storage it holds: at least its packed size, a multiple of kStorageGranule.
  std::size_t storage_bytes() const { return bytes_.size(); }
  std::uint64_t id() const { return read<std::uint64_t>(kIdOffset); }
  kernel::Engine engine() const { return static_cast<kernel::Engine>(bytes_[kEngineOffset]); }
  void set_fetched_at(const sc_core::sc_time& time) { fetched_at_ = time; }
  std::size_t dependency_count() const { return read<std::uint32_t>(kCountOffset); }
  std::uint64_t dependency(std::size_t index) const {
    return read<std::uint64_t>(kDependenciesOffset + index * sizeof(std::uint64_t));
  }

 private:
  static constexpr std::size_t kIdOffset = 0;
  static constexpr std::size_t kCountOffset = 8;
  static constexpr std::size_t kEngineOffset = 12;
  static constexpr std::size_t kDependenciesOffset = 16;
  static constexpr std::size_t kHeaderBytes = kDependenciesOffset;
  static constexpr std::uint8_t kPlacedFlag = 1;    ///< a PE placement follows the source
  static constexpr std::uint8_t kOwnQueueFlag = 2;  ///< shared: its own DMA queue follows
  static constexpr std::uint8_t kOwnKeyFlag = 4;    ///< shared: its own content key follows

  /// What pack() writes for an item, worked out once (EntryPool::pack() needs the size first).
  struct Layout {
    SharedContents::Content* shared = nullptr;  ///< its family's content, or none
    std::uint32_t tail_mask = 0;  ///< unshared: the tail words that differ from the default
    std::uint8_t moved = 0;       ///< shared: used slots whose offset differs from the template's
    bool own_queue = false;       ///< shared: its DMA queue differs from the template's
    bool own_key = false;         ///< shared: its content key differs from the template's
    std::size_t bytes = 0;        ///< packed size
  };

  friend class EntryPool;
  static Layout layout_of(const QueuedInstruction& item, SharedContents::Content* shared);
  /// Packs `item` (its instruction in compact form) as `layout` = layout_of(item, ...) says,
  /// replacing the content; an entry that held a shared content must have released it.
  void pack(const QueuedInstruction& item, const Layout& layout);

  template <typename T>
  T read(std::size_t offset) const {
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof(T));
    return value;
  }

  sc_core::sc_time fetched_at_;  ///< QueuedInstruction::fetched_at
  /// At least the packed size (only grows): its tail past the content is stale.
  std::vector<std::byte> bytes_;
  SharedContents::Content* shared_ = nullptr;  ///< its family's template, or none
};

/// One core's spare packed entries and the contents its entries of families share. The core's
/// engine streams and DMA dispatcher take their entries from here and give them back when the
/// instruction leaves them, so the core has as many entries as it ever has instructions waiting
/// at once, not that many per engine. Spares are kept by size (multiples of
/// PackedInstruction::kStorageGranule), the most recently released first (its memory is still
/// in the cache), so a small entry does not take a large one's storage. No allocation per
/// instruction once every size in use has its spares.
class EntryPool {
 public:
  /// `item` packed into a spare of its size (or the next), or into new storage.
  PackedInstruction pack(const QueuedInstruction& item);
  /// Takes `entry` back, releasing its shared content.
  void give(PackedInstruction&& entry);
  SharedContents& contents() { return contents_; }
  /// Spare entries held (all sizes).
  std::size_t spare_count() const;

 private:
  /// A spare with room for `bytes` (of that size or the next), or one without storage.
  PackedInstruction take(std::size_t bytes);

  std::vector<std::vector<PackedInstruction>> spares_;  ///< by storage / kStorageGranule
  SharedContents contents_;
};

/// FIFO of one engine's stream: a ring of packed entries (it grows, doubling, when full), with
/// the front unpacked on demand into one working QueuedInstruction.
class InstructionRing {
 public:
  explicit InstructionRing(EntryPool& pool) : pool_(&pool) {}

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  /// The front instruction, unpacked (once per front).
  QueuedInstruction& front() {
    if (!front_unpacked_) {
      entries_[head_].unpack(front_);
      front_unpacked_ = true;
    }
    return front_;
  }
  /// Sets the fetch time of the entry `index` places behind the front (index < size()).
  void set_fetched_at(std::size_t index, const sc_core::sc_time& time) {
    entries_[(head_ + index) & mask_].set_fetched_at(time);
    if (index == 0 && front_unpacked_) front_.fetched_at = time;
  }
  /// Takes the front entry out, packed (pop_front() then only advances).
  PackedInstruction take_front() { return std::move(entries_[head_]); }
  /// Packs `item` in at the back.
  void push_back(const QueuedInstruction& item) {
    if (size_ == entries_.size()) grow();
    PackedInstruction& back = entries_[(head_ + size_) & mask_];
    back = pool_->pack(item);
    ++size_;
  }
  /// Removes the front; its entry returns to the pool unless take_front() took it.
  void pop_front() {
    pool_->give(std::move(entries_[head_]));
    entries_[head_] = PackedInstruction{};
    front_unpacked_ = false;
    head_ = (head_ + 1) & mask_;
    --size_;
  }

 private:
  void grow() {
    const std::size_t capacity = entries_.empty() ? 16 : entries_.size() * 2;
    std::vector<PackedInstruction> grown(capacity);
    for (std::size_t i = 0; i < size_; ++i) {
      grown[i] = std::move(entries_[(head_ + i) & mask_]);
    }
    entries_ = std::move(grown);
    head_ = 0;
    mask_ = capacity - 1;
  }

  EntryPool* pool_;
  std::vector<PackedInstruction> entries_;  ///< power-of-two size; empty outside the FIFO
  std::size_t mask_ = 0;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
  QueuedInstruction front_;  ///< the front, unpacked, when front_unpacked_
  bool front_unpacked_ = false;
};

}  // namespace trnsim::core
