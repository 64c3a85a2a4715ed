// Open-addressing hash map from a small trivially copyable key to a uint32_t value, for the
// dependency tracker's per-instruction path: linear probing, power-of-two capacity, backward-shift
// erase (no tombstones, so probe lengths do not degrade over millions of insert/erase cycles).
// Capacity only grows, and only when the number of live keys grows; it never depends on how many
// keys were ever inserted. Not a general container: the value kNil marks an empty slot.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace trnsim::deps {

/// "No index" for the tracker's uint32_t links; also the empty-slot marker of FlatU32Map.
inline constexpr std::uint32_t kNil = 0xFFFFFFFFu;

/// Hash: a functor `std::uint64_t(const Key&)`, ideally injective; the map scrambles it by
/// Fibonacci hashing, so sequential or strided keys spread without a costly mixer.
template <class Key, class Hash>
class FlatU32Map {
 public:
  FlatU32Map() { rehash(kMinCapacity); }

  /// The value stored for `key`, or kNil.
  std::uint32_t find(const Key& key) const { return slots_[locate(key)].value; }

  /// The value slot of `key`, inserting the key with value kNil if absent. The caller must store
  /// a value other than kNil before the next call on the map. The reference is valid until then.
  std::uint32_t& find_or_insert(const Key& key) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
    Slot& slot = slots_[locate(key)];
    if (slot.value == kNil) {
      slot.key = key;
      ++size_;
    }
    return slot.value;
  }

  /// Inserts `key` or overwrites its value. Precondition: value != kNil.
  void set(const Key& key, std::uint32_t value) { find_or_insert(key) = value; }

  /// Removes `key` and returns its value, or returns kNil if it was absent.
  std::uint32_t take(const Key& key) {
    std::size_t hole = locate(key);
    const std::uint32_t value = slots_[hole].value;
    if (value == kNil) return kNil;
    // Backward shift: move later members of the probe run into the hole when their home slot
    // does not lie cyclically in (hole, j].
    for (std::size_t j = (hole + 1) & mask_; slots_[j].value != kNil; j = (j + 1) & mask_) {
      const std::size_t j_home = home(slots_[j].key);
      const bool home_in_hole_to_j =
          hole <= j ? (hole < j_home && j_home <= j) : (hole < j_home || j_home <= j);
      if (!home_in_hole_to_j) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole].value = kNil;
    --size_;
    return value;
  }

  /// Calls f(key, value) for every key.
  template <class F>
  void for_each(F&& f) const {
    for (const Slot& slot : slots_) {
      if (slot.value != kNil) f(slot.key, slot.value);
    }
  }

  /// Removes every key; keeps the capacity.
  void clear() {
    for (Slot& slot : slots_) slot.value = kNil;
    size_ = 0;
  }

  std::size_t size() const { return size_; }
  std::size_t footprint_bytes() const { return slots_.capacity() * sizeof(Slot); }

 private:
  static constexpr std::size_t kMinCapacity = 64;

  struct Slot {
    Key key{};
    std::uint32_t value = kNil;
  };

  /// Fibonacci hashing: the top bits of hash * 2^64 / golden ratio.
  std::size_t home(const Key& key) const {
    return static_cast<std::size_t>((Hash{}(key)*0x9E3779B97F4A7C15ull) >> shift_);
  }

  /// The slot holding `key`, or the empty slot ending its probe run.
  std::size_t locate(const Key& key) const {
    std::size_t i = home(key);
    while (slots_[i].value != kNil && !(slots_[i].key == key)) i = (i + 1) & mask_;
    return i;
  }

  void rehash(std::size_t capacity) {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(capacity));
    size_ = 0;
    for (const Slot& slot : old) {
      if (slot.value != kNil) {
        slots_[locate(slot.key)] = slot;
        ++size_;
      }
    }
  }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  unsigned shift_ = 64;
  std::size_t size_ = 0;
};

}  // namespace trnsim::deps
