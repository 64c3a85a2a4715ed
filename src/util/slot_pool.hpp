// Reusable slots addressed by index, for records that come and go (DMAs in flight, transfers,
// collective operations): indices stay valid while a slot is held, and once the pool has grown to
// the most records held at once it allocates nothing. acquire() hands out the most recently
// released slot first (deterministic, and its memory is likely still in the cache), else a new
// one at the end.
#pragma once

#include <cstdint>
#include <vector>

namespace trnsim::util {

template <class T>
class SlotPool {
 public:
  /// A free slot's index. A reused slot holds what its last holder left: callers that need a
  /// fresh record assign one. A new slot is value-initialised.
  std::uint32_t acquire() {
    if (free_.empty()) {
      slots_.emplace_back();
      return static_cast<std::uint32_t>(slots_.size() - 1);
    }
    const std::uint32_t slot = free_.back();
    free_.pop_back();
    return slot;
  }
  /// Gives `slot` back; the next acquire() returns it.
  void release(std::uint32_t slot) { free_.push_back(slot); }

  T& operator[](std::uint32_t slot) { return slots_[slot]; }
  const T& operator[](std::uint32_t slot) const { return slots_[slot]; }
  /// Slots made so far (held or free).
  std::size_t size() const { return slots_.size(); }
  /// Whether acquire() would reuse a slot rather than make one.
  bool has_free() const { return !free_.empty(); }
  /// Every slot made so far, held or free, in index order.
  auto begin() { return slots_.begin(); }
  auto end() { return slots_.end(); }
  auto begin() const { return slots_.begin(); }
  auto end() const { return slots_.end(); }

 private:
  std::vector<T> slots_;
  std::vector<std::uint32_t> free_;
};

}  // namespace trnsim::util
