// The in-flight record of one instruction of a NeuronCore: from dispatch until its result has
// been visible for the semaphore latency. It stands for the instruction's semaphore: consumers
// read its times; sequencers and DMAs waiting for those times to become known link into it.
// Leaves out semaphore counts and values (a record is one instruction's completion).
#pragma once

#include <cstdint>
#include <systemc>

#include "core/queued_instruction.hpp"
#include "kernel/instruction.hpp"

namespace trnsim::core {

/// No DMA-dispatcher slot.
inline constexpr std::uint32_t kNoSlot = ~std::uint32_t{0};

/// An in-flight id: the instruction's sequence number (its position in its core's program
/// order, as traces and profiles show it) and, in the low bits, its in-flight record's slot.
/// Ids increase in program order, as the dependency tracker requires, and find their record
/// without a lookup.
inline constexpr unsigned kInFlightSlotBits = 20;
inline constexpr std::uint32_t kMaxInFlight = 1u << kInFlightSlotBits;
inline std::uint64_t in_flight_id(std::uint64_t sequence, std::uint32_t slot) {
  return sequence << kInFlightSlotBits | slot;
}
inline std::uint64_t sequence_of(std::uint64_t id) {
  return id >> kInFlightSlotBits;
}
inline std::uint32_t slot_of(std::uint64_t id) {
  return static_cast<std::uint32_t>(id & (kMaxInFlight - 1));
}

struct InFlight {
  std::uint64_t id = kNoId;                       ///< kNoId: the slot is free
  kernel::Engine engine = kernel::Engine::kSync;  ///< who produces the result (kDma for DMAs)
  bool scheduled = false;                         ///< end and visible times known
  sc_core::sc_time end;      ///< producing engine done (same-engine dependants may start)
  sc_core::sc_time visible;  ///< result visible to other engines (before semaphore latency)
  /// Engines (bit = unit) whose front instruction waits for these times: run by
  /// NeuronCore::finish().
  std::uint8_t waiting_engines = 0;
  /// DMA-dispatcher slots waiting for these times, linked in the order they blocked: looked at
  /// only when the times become known, so a wake costs O(DMAs it unblocks), not O(DMAs
  /// waiting), and blocking allocates nothing.
  std::uint32_t blocked_first = kNoSlot;
  std::uint32_t blocked_last = kNoSlot;
};

}  // namespace trnsim::core
