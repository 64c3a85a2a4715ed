// Map from an in-flight instruction id to a uint32_t, for ids that are added in increasing order
// and removed roughly in that order (the dependency tracker's id -> InstrRecord index). A
// direct-mapped table indexed by the id's low bits holds almost every id without hashing or
// probing; an id whose slot is taken by an older, still mapped id goes to a FlatU32Map overflow.
// Capacity follows the peak number of mapped ids (at most 4x it, at least 64 slots), never the
// range of ids seen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/deps/flat_u32_map.hpp"

namespace trnsim::deps {

class IdMap {
 public:
  IdMap() { rebuild(kMinCapacity); }

  /// The value mapped to `id`, or kNil.
  std::uint32_t find(std::uint64_t id) const {
    const Slot& slot = slots_[id & mask_];
    if (slot.value != kNil && slot.id == id) return slot.value;
    return overflow_.size() == 0 ? kNil : overflow_.find(id);
  }

  /// Maps `id` to `value`. Preconditions: `id` is not mapped; value != kNil.
  void insert(std::uint64_t id, std::uint32_t value) {
    if ((size_ + 1) * 2 > slots_.size()) rebuild(slots_.size() * 2);
    place(id, value);
    ++size_;
  }

  /// Removes `id` and returns its value, or returns kNil if it was not mapped.
  std::uint32_t take(std::uint64_t id) {
    Slot& slot = slots_[id & mask_];
    std::uint32_t value;
    if (slot.value != kNil && slot.id == id) {
      value = slot.value;
      slot.value = kNil;
    } else {
      value = overflow_.size() == 0 ? kNil : overflow_.take(id);
      if (value == kNil) return kNil;
    }
    --size_;
    return value;
  }

  std::size_t size() const { return size_; }
  std::size_t footprint_bytes() const {
    return slots_.capacity() * sizeof(Slot) + overflow_.footprint_bytes();
  }

 private:
  static constexpr std::size_t kMinCapacity = 64;

  struct Slot {
    std::uint64_t id = 0;
    std::uint32_t value = kNil;
  };
  struct IdHash {
    std::uint64_t operator()(std::uint64_t id) const { return id; }
  };

  void place(std::uint64_t id, std::uint32_t value) {
    Slot& slot = slots_[id & mask_];
    if (slot.value == kNil) {
      slot = {id, value};
    } else {
      overflow_.set(id, value);
    }
  }

  /// Resizes the table to `capacity` slots (a power of two) and re-places every mapped id.
  void rebuild(std::size_t capacity) {
    std::vector<std::pair<std::uint64_t, std::uint32_t>> entries;
    entries.reserve(size_);
    for (const Slot& slot : slots_) {
      if (slot.value != kNil) entries.emplace_back(slot.id, slot.value);
    }
    overflow_.for_each(
        [&](std::uint64_t id, std::uint32_t value) { entries.emplace_back(id, value); });
    overflow_.clear();
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    for (const auto& [id, value] : entries) place(id, value);
  }

  std::vector<Slot> slots_;
  std::uint64_t mask_ = 0;
  std::size_t size_ = 0;
  FlatU32Map<std::uint64_t, IdHash> overflow_;
};

}  // namespace trnsim::deps
