// What a DMA model derives from a transfer's plan, kept for the most recent shapes. A plan
// depends on the instruction's opcode and its operands' shapes, not on their addresses
// (same_shape in dma/descriptors.hpp), so two DMAs of one shape share the derived value.
// Leaves out: eviction by use (entries are replaced round robin).
#pragma once

#include <array>
#include <cstddef>
#include <utility>

#include "dma/descriptors.hpp"
#include "kernel/instruction.hpp"

namespace trnsim::dma {

/// Up to `kEntries` values of type `Value`, keyed by (opcode, source shape, destination shape).
template <class Value, std::size_t kEntries>
class ShapeCache {
 public:
  /// The value for `instruction`'s shape: a kept one, or `compute(instruction, value)` into the
  /// entry replaced next. The reference is valid until the next call.
  template <class Compute>
  const Value& get(const kernel::Instruction& instruction, Compute&& compute) {
    const auto matches = [&](const Entry& entry) {
      return entry.valid && entry.opcode == instruction.opcode &&
             same_shape(entry.src, instruction.src()) && same_shape(entry.dst, instruction.dst());
    };
    if (matches(entries_[last_])) return entries_[last_].value;
    // Streams often alternate two shapes (a load and a store): the hit before the latest next.
    if (matches(entries_[previous_])) {
      std::swap(last_, previous_);
      return entries_[last_].value;
    }
    for (std::size_t i = 0; i < kEntries; ++i) {
      if (matches(entries_[i])) {
        previous_ = last_;
        last_ = i;
        return entries_[i].value;
      }
    }
    const std::size_t victim = next_;
    next_ = (next_ + 1) % kEntries;
    Entry& entry = entries_[victim];
    entry.valid = true;
    entry.opcode = instruction.opcode;
    entry.src = instruction.src();
    entry.dst = instruction.dst();
    compute(instruction, entry.value);
    previous_ = last_;
    last_ = victim;
    return entry.value;
  }

 private:
  struct Entry {
    bool valid = false;
    kernel::Opcode opcode = kernel::Opcode::kDmaCopy;
    kernel::AccessPattern src;  ///< the shape part only (same_shape)
    kernel::AccessPattern dst;
    Value value;
  };
  std::array<Entry, kEntries> entries_;
  std::size_t next_ = 0;      ///< round-robin victim
  std::size_t last_ = 0;      ///< the latest hit, looked at first
  std::size_t previous_ = 0;  ///< the hit before it (another entry), looked at next
};

}  // namespace trnsim::dma
